# A stand-in for deploy/triton.Dockerfile (NVIDIA's tritonserver:24.10-py3 plus the serving
# requirements) built from Debian's archive, PyPI and Maven Central, for machines that reach
# no image registry (deploy/README.md, "Images without a registry"). Triton 2.51 comes from
# the nvidia-pytriton wheel (the binary deploy/triton.py runs locally); `tritonserver` on
# PATH takes the same arguments as the official one. CPU only unless the host has GPUs.
# Build context: the repository root.
ARG PYTHON_BASE=nlp-python:3.11

FROM ${PYTHON_BASE} AS ark-clusters
RUN apt-get update \
 && apt-get install -y --no-install-recommends maven openjdk-17-jdk-headless \
 && rm -rf /var/lib/apt/lists/*
COPY deploy/maven/ark-clusters/pom.xml /build/pom.xml
RUN mvn -q -B -f /build/pom.xml dependency:copy-dependencies -DoutputDirectory=/build/jars \
 && cd /build && jar xf jars/ark-tweet-nlp-0.3.2.jar cmu/arktweetnlp/50mpaths2

FROM ${PYTHON_BASE}
# the Python backend's stub embeds libpython
RUN apt-get update \
 && apt-get install -y --no-install-recommends libpython3.11 \
 && rm -rf /var/lib/apt/lists/*
COPY nlp_models/requirements.txt /opt/nlp/requirements.txt
COPY requirements.lock /opt/nlp/requirements.lock
RUN pip install --no-cache-dir -c /opt/nlp/requirements.lock \
        -r /opt/nlp/requirements.txt nvidia-pytriton \
 && WHEEL=/opt/python/lib/python3.11/site-packages/pytriton/tritonserver \
 && mkdir -p /opt/tritonserver \
 && cp -r "$WHEEL/backends" /opt/tritonserver/backends \
 && cp "$WHEEL/python_backend_stubs/3.11/triton_python_backend_stub" \
       /opt/tritonserver/backends/python/
COPY deploy/images/triton/tritonserver.sh /usr/local/bin/tritonserver
RUN useradd --uid 1000 --create-home triton-server
COPY --from=ark-clusters /build/cmu/arktweetnlp/50mpaths2 /opt/nlp/ark-clusters/50mpaths2
ENV OMP_NUM_THREADS=1 \
    OMP_WAIT_POLICY=PASSIVE \
    NLP_POS_CLUSTERS=/opt/nlp/ark-clusters/50mpaths2
EXPOSE 8000 8001 8002
CMD ["tritonserver", "--model-repository=/models"]
