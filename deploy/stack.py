"""The servers of the local stack, by name, plus their status."""

from __future__ import annotations

import time
from dataclasses import dataclass

from deploy.base import Server
from deploy.elasticsearch import Elasticsearch
from deploy.kafka import Kafka
from deploy.monitoring import Alertmanager, ElasticsearchExporter, LagExporter, Prometheus
from deploy.process import DeployError, members, pss_bytes, rss_bytes
from deploy.triton import Triton
from services.settings import Settings

#: Start order: Kafka first (services need it), then Elasticsearch and Triton (slowest,
#: loads models); the monitoring after what it watches, Prometheus last.
SERVERS: dict[str, type[Server]] = {
    "kafka": Kafka,
    "elasticsearch": Elasticsearch,
    "triton": Triton,
    "es-exporter": ElasticsearchExporter,
    "lag-exporter": LagExporter,
    "alertmanager": Alertmanager,
    "prometheus": Prometheus,
}


def server(name: str, settings: Settings) -> Server:
    """The server called ``name`` ('es' is accepted for elasticsearch)."""
    name = {"es": "elasticsearch"}.get(name, name)
    if name not in SERVERS:
        raise DeployError(f"unknown server {name!r}; choose from {', '.join(SERVERS)}")
    return SERVERS[name](settings)


def servers(names: list[str] | None, settings: Settings) -> list[Server]:
    """The named servers in start order (all of them if ``names`` is empty)."""
    chosen = (
        [server(n, settings) for n in names] if names else [c(settings) for c in SERVERS.values()]
    )
    order = list(SERVERS)
    return sorted(chosen, key=lambda s: order.index(s.name))


@dataclass
class Status:
    """One line of ``status``."""

    name: str
    up: bool
    healthy: bool
    pid: int | None
    rss_bytes: int
    pss_bytes: int
    processes: int
    uptime_s: float
    endpoints: dict[str, str]


def status(srv: Server) -> Status:
    """Whether our process runs, answers health checks, and how much memory it holds."""
    record = srv.record()
    if record is None:
        return Status(srv.name, False, False, None, 0, 0, 0, 0.0, srv.endpoints())
    pids = members(record)
    srv = srv.as_started(record)
    return Status(
        srv.name,
        True,
        srv.healthy(),
        record.pid,
        rss_bytes(pids),
        pss_bytes(pids),
        len(pids),
        time.time() - record.started_at,
        srv.endpoints(),
    )
