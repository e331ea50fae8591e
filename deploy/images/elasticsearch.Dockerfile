# A stand-in for docker.elastic.co/elasticsearch/elasticsearch:7.10.2 built from Debian's
# archive and Maven Central, for machines that reach no image registry (deploy/README.md,
# "Images without a registry"): the OSS node the local stack embeds (deploy/elasticsearch.py;
# jvm.options and log4j2.properties are its flags and logging), with the official image's
# environment contract (elasticsearch/entrypoint.py). Build context: the repository root.
ARG PYTHON_BASE=nlp-python:3.11

FROM ${PYTHON_BASE} AS jars
RUN apt-get update \
 && apt-get install -y --no-install-recommends maven openjdk-17-jdk-headless \
 && rm -rf /var/lib/apt/lists/*
COPY deploy/maven/elasticsearch /build
RUN mvn -q -B -f /build/pom.xml dependency:copy-dependencies -DoutputDirectory=/build/lib \
 && javac -nowarn -d /build/launcher -cp '/build/lib/*' /build/src/nlp/local/*.java \
 && cd /build/launcher && jar cf /build/lib/nlp-local-launcher.jar .

FROM ${PYTHON_BASE}
RUN apt-get update \
 && apt-get install -y --no-install-recommends openjdk-17-jre-headless curl \
 && rm -rf /var/lib/apt/lists/* \
 && useradd --system --home-dir /usr/share/elasticsearch elasticsearch \
 && mkdir -p /usr/share/elasticsearch/config /usr/share/elasticsearch/data \
             /usr/share/elasticsearch/logs \
 && chown -R elasticsearch /usr/share/elasticsearch
COPY --from=jars /build/lib /usr/share/elasticsearch/lib
COPY deploy/images/elasticsearch/entrypoint.py deploy/images/elasticsearch/jvm.options \
     deploy/images/elasticsearch/log4j2.properties /usr/share/elasticsearch/config/
USER elasticsearch
EXPOSE 9200 9300
ENTRYPOINT ["python", "/usr/share/elasticsearch/config/entrypoint.py"]
