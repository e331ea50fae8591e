# Triton with exactly what the served models need: the serving requirements
# (nlp_models/requirements.txt, the same file the local Triton's serving venv installs).
# The model code is not in the image: every version directory of the mounted model
# repository carries its own (nlp_models.zip, imported by its model.py).
# Build context: the repository root.
#
# The POS tagger reads the ARK word clusters (GPL-2.0, never committed): a Maven stage
# resolves the same artifact as deploy/maven/ark-clusters/pom.xml and extracts the file.
FROM maven:3.9-eclipse-temurin-17 AS ark-clusters
COPY deploy/maven/ark-clusters/pom.xml /build/pom.xml
RUN mvn -q -B -f /build/pom.xml dependency:copy-dependencies -DoutputDirectory=/build/jars \
 && cd /build && jar xf jars/ark-tweet-nlp-0.3.2.jar cmu/arktweetnlp/50mpaths2

FROM nvcr.io/nvidia/tritonserver:24.10-py3

COPY nlp_models/requirements.txt /opt/nlp/requirements.txt
RUN pip install --no-cache-dir -r /opt/nlp/requirements.txt
COPY --from=ark-clusters /build/cmu/arktweetnlp/50mpaths2 /opt/nlp/ark-clusters/50mpaths2
ENV OMP_NUM_THREADS=1 \
    NLP_POS_CLUSTERS=/opt/nlp/ark-clusters/50mpaths2
