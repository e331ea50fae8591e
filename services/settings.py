"""Ports, paths and versions of the local stack, all in one place.

Every value comes from an ``NLP_*`` environment variable with a default, so the CLI
(`python -m deploy.local`), the pytest fixtures and the services agree on where
Kafka, Elasticsearch and Triton listen. It lives in ``services`` because the services need
the addresses; ``deploy`` (which starts the servers) imports it from here, never the
reverse. Standard library only.
"""

from __future__ import annotations

import os
from collections.abc import Mapping
from dataclasses import asdict, dataclass, field, fields
from pathlib import Path

REPO_ROOT = Path(__file__).resolve().parent.parent

#: Versions pinned here and in deploy/maven/*/pom.xml and docker-compose.yml.
KAFKA_VERSION = "3.9.2"
ELASTICSEARCH_VERSION = "7.10.2"
TRITON_CONTAINER = "24.10-py3"

HOST = "127.0.0.1"


def _int(env: Mapping[str, str], name: str, default: int) -> int:
    raw = env.get(name, "").strip()
    if not raw:
        return default
    try:
        return int(raw)
    except ValueError:
        raise ValueError(f"{name}={raw!r} is not an integer port/number") from None


def _path(env: Mapping[str, str], name: str, default: str) -> Path:
    raw = env.get(name, "").strip() or default
    path = Path(raw)
    return path if path.is_absolute() else REPO_ROOT / path


@dataclass(frozen=True)
class Settings:
    """Where each server listens and keeps its files.

    ``host`` is where the local processes bind (always loopback). The ``*_host`` fields are
    what clients dial; they differ only inside Docker Compose (kafka, elasticsearch, triton).
    """

    host: str = HOST
    kafka_host: str = HOST
    es_host: str = HOST
    triton_host: str = HOST
    kafka_port: int = 9092
    kafka_controller_port: int = 9093
    es_port: int = 9200
    es_transport_port: int = 9300
    es_cluster_name: str = "nlp-local"
    es_scheme: str = "http"  # https for a secured deployment (services.credentials)
    triton_http_port: int = 8000
    triton_grpc_port: int = 8001
    triton_metrics_port: int = 8002
    state_dir: Path = field(default_factory=lambda: REPO_ROOT / "var")
    model_repository: Path = field(default_factory=lambda: REPO_ROOT / "model_repository")
    kafka_heap: str = "512m"
    es_heap: str = "512m"
    start_timeout: float = 180.0

    @classmethod
    def from_env(cls, env: Mapping[str, str] | None = None) -> Settings:
        """Read the ``NLP_*`` variables (``os.environ`` by default)."""
        e = os.environ if env is None else env
        kafka_port = _int(e, "NLP_KAFKA_PORT", 9092)
        return cls(
            kafka_host=e.get("NLP_KAFKA_HOST", "").strip() or HOST,
            es_host=e.get("NLP_ES_HOST", "").strip() or HOST,
            triton_host=e.get("NLP_TRITON_HOST", "").strip() or HOST,
            kafka_port=kafka_port,
            kafka_controller_port=_int(e, "NLP_KAFKA_CONTROLLER_PORT", kafka_port + 1),
            es_port=_int(e, "NLP_ES_PORT", 9200),
            es_transport_port=_int(e, "NLP_ES_TRANSPORT_PORT", 9300),
            es_cluster_name=e.get("NLP_ES_CLUSTER_NAME", "nlp-local"),
            es_scheme=e.get("NLP_ES_SCHEME", "").strip().lower() or "http",
            triton_http_port=_int(e, "NLP_TRITON_HTTP_PORT", 8000),
            triton_grpc_port=_int(e, "NLP_TRITON_GRPC_PORT", 8001),
            triton_metrics_port=_int(e, "NLP_TRITON_METRICS_PORT", 8002),
            state_dir=_path(e, "NLP_STATE_DIR", "var"),
            model_repository=_path(e, "NLP_MODEL_REPOSITORY", "model_repository"),
            kafka_heap=e.get("NLP_KAFKA_HEAP", "512m"),
            es_heap=e.get("NLP_ES_HEAP", "512m"),
            start_timeout=float(e.get("NLP_START_TIMEOUT", "180")),
        )

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
