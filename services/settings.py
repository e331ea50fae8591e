"""Ports, paths and versions of the local stack, all in one place.

Every value comes from an ``NLP_*`` environment variable with a default, declared once in
its field (``services.env``), so the CLI (`python -m deploy.local`), the pytest fixtures
and the services agree on where Kafka, Elasticsearch and Triton listen. It lives in
``services`` because the services need the addresses; ``deploy`` (which starts the servers)
imports it from here, never the reverse. Standard library only.
"""

from __future__ import annotations

import os
from collections.abc import Mapping
from dataclasses import asdict, dataclass, fields
from pathlib import Path

from services.env import REPO_ROOT, read, setting

#: Versions pinned here and in deploy/maven/*/pom.xml and docker-compose.yml.
KAFKA_VERSION = "3.9.2"
ELASTICSEARCH_VERSION = "7.10.2"
TRITON_CONTAINER = "24.10-py3"

HOST = "127.0.0.1"


@dataclass(frozen=True)
class Settings:
    """Where each server listens and keeps its files.

    ``host`` is where the local processes bind (always loopback). The ``*_host`` fields are
    what clients dial; they differ only inside Docker Compose (kafka, elasticsearch, triton).
    """

    host: str = HOST
    kafka_host: str = setting(HOST, env="NLP_KAFKA_HOST", doc="where *clients* connect to "
                              "Kafka (Compose sets the service name)")
    es_host: str = setting(HOST, env="NLP_ES_HOST", doc="where clients connect to "
                           "Elasticsearch")
    triton_host: str = setting(HOST, env="NLP_TRITON_HOST", doc="where clients connect to "
                               "Triton")
    kafka_port: int = setting(9092, env="NLP_KAFKA_PORT", doc="Kafka's client port")
    kafka_controller_port: int = setting(
        9093, env="NLP_KAFKA_CONTROLLER_PORT", shown="`NLP_KAFKA_PORT` + 1",
        doc="the KRaft controller's port")
    es_port: int = setting(9200, env="NLP_ES_PORT", doc="Elasticsearch's HTTP port")
    es_transport_port: int = setting(9300, env="NLP_ES_TRANSPORT_PORT",
                                     doc="Elasticsearch's transport port")
    es_cluster_name: str = setting("nlp-local", env="NLP_ES_CLUSTER_NAME",
                                   doc="Elasticsearch's cluster name")
    es_scheme: str = setting("http", env="NLP_ES_SCHEME", parse=str.lower,
                             doc="`https` for a secured Elasticsearch (clients only; "
                             "`services/credentials.py`)")
    triton_http_port: int = setting(8000, env="NLP_TRITON_HTTP_PORT", doc="Triton's HTTP port")
    triton_grpc_port: int = setting(8001, env="NLP_TRITON_GRPC_PORT", doc="Triton's gRPC port")
    triton_metrics_port: int = setting(8002, env="NLP_TRITON_METRICS_PORT",
                                       doc="Triton's Prometheus metrics port")
    prometheus_port: int = setting(9090, env="NLP_PROMETHEUS_PORT",
                                   doc="Prometheus's HTTP port (UI, API, `/metrics`)")
    alertmanager_port: int = setting(9095, env="NLP_ALERTMANAGER_PORT",
                                     doc="Alertmanager's HTTP port (9093 is Kafka's "
                                     "controller)")
    es_exporter_port: int = setting(9114, env="NLP_ES_EXPORTER_PORT",
                                    doc="the Elasticsearch exporter's `/metrics` port")
    lag_exporter_port: int = setting(9308, env="NLP_LAG_EXPORTER_PORT",
                                     doc="the consumer-lag exporter's `/metrics` port")
    scrape_interval: str = setting("15s", env="NLP_SCRAPE_INTERVAL",
                                   doc="how often Prometheus scrapes and evaluates rules")
    worker_targets: str = setting("", env="NLP_WORKER_TARGETS",
                                  doc="comma-separated `host:port` of Faust workers' web pages "
                                  "Prometheus always scrapes (workers of this state dir "
                                  "announce themselves in `$NLP_STATE_DIR/prometheus/targets/`)")
    headline_api_target: str = setting("127.0.0.1:9464", env="NLP_HEADLINE_API_TARGET",
                                       doc="`host:port` of the headline API's metrics")
    alert_webhook_url: str = setting("", env="NLP_ALERT_WEBHOOK_URL",
                                     doc="where Alertmanager posts notifications (a webhook "
                                     "receiver: chat bridge, pager); empty: kept in "
                                     "Alertmanager only")
    state_dir: Path = setting(env="NLP_STATE_DIR", default_factory=lambda: REPO_ROOT / "var",
                              shown="`var`", doc="data, logs and pid records of the local "
                              "servers; a relative path is relative to the repository root")
    model_repository: Path = setting(
        env="NLP_MODEL_REPOSITORY", default_factory=lambda: REPO_ROOT / "model_repository",
        shown="`model_repository`", doc="what Triton serves")
    kafka_heap: str = setting("256m", env="NLP_KAFKA_HEAP",
                              doc="Kafka's JVM max heap (it starts at half)")
    es_heap: str = setting("512m", env="NLP_ES_HEAP", doc="Elasticsearch's JVM heap")
    start_timeout: float = setting(180.0, env="NLP_START_TIMEOUT",
                                   doc="seconds each local server may take to start")

    @classmethod
    def from_env(cls, env: Mapping[str, str] | None = None) -> Settings:
        """Read the ``NLP_*`` variables (``os.environ`` by default)."""
        values = read(cls, os.environ if env is None else env)
        if "kafka_port" in values:
            values.setdefault("kafka_controller_port", values["kafka_port"] + 1)
        return cls(**values)

    def to_dict(self) -> dict[str, object]:
        """JSON-friendly copy, stored with each pid record."""
        return {k: str(v) if isinstance(v, Path) else v for k, v in asdict(self).items()}

    @classmethod
    def from_dict(cls, data: Mapping[str, object]) -> Settings:
        """Inverse of ``to_dict`` (unknown keys from older records are ignored)."""
        known = {f.name: f for f in fields(cls)}
        values = {k: v for k, v in data.items() if k in known}
        for key in ("state_dir", "model_repository"):
            if key in values:
                values[key] = Path(str(values[key]))
        return cls(**values)  # type: ignore[arg-type]

    # Addresses clients use -------------------------------------------------------
    @property
    def kafka_bootstrap(self) -> str:
        """bootstrap_servers for Kafka clients."""
        return f"{self.kafka_host}:{self.kafka_port}"

    @property
    def es_url(self) -> str:
        """Base URL for the Elasticsearch client."""
        return f"{self.es_scheme}://{self.es_host}:{self.es_port}"

    @property
    def triton_http_url(self) -> str:
        """host:port, the form tritonclient.http expects."""
        return f"{self.triton_host}:{self.triton_http_port}"

    @property
    def triton_grpc_url(self) -> str:
        """host:port, the form tritonclient.grpc expects."""
        return f"{self.triton_host}:{self.triton_grpc_port}"

    @property
    def triton_metrics_url(self) -> str:
        return f"http://{self.triton_host}:{self.triton_metrics_port}/metrics"


def load() -> Settings:
    """The settings of this process's environment."""
    return Settings.from_env()
