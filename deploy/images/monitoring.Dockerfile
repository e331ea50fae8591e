# Stand-ins for prom/prometheus:v2.42.0, prom/alertmanager:v0.25.0 and
# prometheuscommunity/elasticsearch-exporter:v1.5.0 built from Debian's packages of the same
# versions (deploy/images/compose.yml picks the target). Each keeps its official image's
# entrypoint path and data directory, so docker-compose.yml's arguments apply unchanged.
ARG PYTHON_BASE=nlp-python:3.11
FROM ${PYTHON_BASE} AS packages
RUN apt-get update \
 && apt-get install -y --no-install-recommends prometheus prometheus-alertmanager \
      prometheus-elasticsearch-exporter \
 && rm -rf /var/lib/apt/lists/* \
 && ln -sf /usr/bin/prometheus-alertmanager /usr/local/bin/alertmanager \
 && ln -sf /usr/bin/prometheus-elasticsearch-exporter /usr/local/bin/elasticsearch_exporter \
 && mkdir -p /prometheus /alertmanager && chown nobody:nogroup /prometheus /alertmanager
USER nobody

FROM packages AS prometheus
WORKDIR /prometheus
ENTRYPOINT ["/usr/bin/prometheus"]

FROM packages AS alertmanager
WORKDIR /alertmanager
ENTRYPOINT ["/usr/local/bin/alertmanager"]

FROM packages AS es-exporter
ENTRYPOINT ["/usr/local/bin/elasticsearch_exporter"]
