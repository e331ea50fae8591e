# A stand-in for apache/kafka:3.9.2 built from Debian's archive and Maven Central, for
# machines that reach no image registry (deploy/README.md, "Images without a registry").
# Same environment contract as the official image (kafka/entrypoint.py), so the kafka
# service of docker-compose.yml runs either. Build context: the repository root.
ARG PYTHON_BASE=nlp-python:3.11

FROM ${PYTHON_BASE} AS jars
RUN apt-get update \
 && apt-get install -y --no-install-recommends maven openjdk-17-jdk-headless \
 && rm -rf /var/lib/apt/lists/*
COPY deploy/maven/kafka/pom.xml /build/pom.xml
RUN mvn -q -B -f /build/pom.xml dependency:copy-dependencies -DoutputDirectory=/opt/kafka/libs

FROM ${PYTHON_BASE}
RUN apt-get update \
 && apt-get install -y --no-install-recommends openjdk-17-jre-headless \
 && rm -rf /var/lib/apt/lists/* \
 && mkdir -p /opt/kafka/config /var/lib/kafka/data \
 && useradd --uid 1000 --no-create-home --home-dir /opt/kafka appuser
COPY --from=jars /opt/kafka/libs /opt/kafka/libs
COPY deploy/images/kafka/log4j.properties deploy/images/kafka/tools-log4j.properties \
     deploy/images/kafka/entrypoint.py /opt/kafka/config/
COPY deploy/images/kafka/kafka-broker-api-versions.sh /opt/kafka/bin/
RUN chown -R appuser /opt/kafka/config /var/lib/kafka/data
USER appuser
EXPOSE 9092
ENTRYPOINT ["python", "/opt/kafka/config/entrypoint.py"]
