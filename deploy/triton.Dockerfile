# Triton with what our Python-backend models import: torch and the repository's
# `training` package (model code exists once, shared by training and serving), plus the
# language routing they share with the services (services/language.py, standard library).
# Build context: the repository root.
#
# The Python backend's stub runs its interpreter in isolated mode, which ignores
# PYTHONPATH; a .pth file in site-packages is what puts /opt/nlp on sys.path.
#
# The POS tagger reads the ARK word clusters (GPL-2.0, never committed): a Maven stage
# resolves the same artifact as deploy/maven/ark-clusters/pom.xml and extracts the file.
FROM maven:3.9-eclipse-temurin-17 AS ark-clusters
COPY deploy/maven/ark-clusters/pom.xml /build/pom.xml
RUN mvn -q -B -f /build/pom.xml dependency:copy-dependencies -DoutputDirectory=/build/jars \
 && cd /build && jar xf jars/ark-tweet-nlp-0.3.2.jar cmu/arktweetnlp/50mpaths2

FROM nvcr.io/nvidia/tritonserver:24.10-py3

# Versions as requirements.lock. sentencepiece: the English hashtag and headline
# tokenizers; rouge_score: imported by the headline predictor's data module (to be cut
# when serving code leaves `training`).
RUN pip install --no-cache-dir torch==2.15.0 numpy==1.26.4 sentencepiece==0.2.3 \
    rouge_score==0.1.2
COPY training /opt/nlp/training
COPY services/__init__.py services/language.py /opt/nlp/services/
RUN echo /opt/nlp > "$(python3 -c 'import site; print(site.getsitepackages()[0])')/nlp.pth"
COPY --from=ark-clusters /build/cmu/arktweetnlp/50mpaths2 /opt/nlp/ark-clusters/50mpaths2
ENV OMP_NUM_THREADS=1 \
    NLP_POS_CLUSTERS=/opt/nlp/ark-clusters/50mpaths2
