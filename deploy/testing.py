"""Session fixtures' logic: reuse a running local server or start one, stop only our own.

tests/conftest.py wires these into pytest; keeping the logic here lets the CLI and the
fixtures share one code path (same ports, same state dir, same health checks).
"""

from __future__ import annotations

import os
import socket
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass, field
from pathlib import Path

from deploy.base import Server
from deploy.stack import server
from services.settings import Settings


@dataclass(frozen=True)
class KafkaInfo:
    host: str
    port: int
    bootstrap: str
    started_here: bool


@dataclass(frozen=True)
class ElasticsearchInfo:
    host: str
    port: int
    url: str
    started_here: bool


@dataclass(frozen=True)
class TritonInfo:
    host: str
    http_port: int
    grpc_port: int
    metrics_port: int
    http_url: str  # host:port, the form tritonclient.http expects
    grpc_url: str  # host:port, the form tritonclient.grpc expects
    metrics_url: str
    model_repository: str
    started_here: bool
    settings: Settings = field(repr=False, compare=False, default_factory=Settings)


def describe(name: str, s: Settings, started_here: bool) -> object:
    """The client-facing addresses of server ``name`` under settings ``s``."""
    if name == "kafka":
        return KafkaInfo(s.host, s.kafka_port, s.kafka_bootstrap, started_here)
    if name == "elasticsearch":
        return ElasticsearchInfo(s.host, s.es_port, s.es_url, started_here)
    return TritonInfo(
        s.host,
        s.triton_http_port,
        s.triton_grpc_port,
        s.triton_metrics_port,
        s.triton_http_url,
        s.triton_grpc_url,
        s.triton_metrics_url,
        str(s.model_repository),
        started_here,
        s,
    )


@contextmanager
def running(name: str, settings: Settings | None = None) -> Iterator[object]:
    """Yield the addresses of a healthy server, reusing one that already runs.

    Afterwards the server is stopped only if a test session started it and no other
    live session (e.g. a second pytest run in the same checkout) still uses it; servers
    from ``python -m deploy.local up`` are left running.
    """
    srv: Server = server(name, settings or Settings.from_env())
    me = os.getpid()
    record, started = srv.start(owner="fixture", lease=me)
    live = srv.as_started(record)
    try:
        yield describe(srv.name, live.settings, started)
    finally:
        srv.release(me)


def free_ports(count: int) -> list[int]:
    """Ports the OS just had free on 127.0.0.1."""
    socks = [socket.socket() for _ in range(count)]
    try:
        for sock in socks:
            sock.bind(("127.0.0.1", 0))
        return [sock.getsockname()[1] for sock in socks]
    finally:
        for sock in socks:
            sock.close()


def private_env(state_dir: Path, model_repository: Path) -> dict[str, str]:
    """NLP_* variables for a Triton that cannot collide with the developer's stack."""
    http, grpc, metrics = free_ports(3)
    return {
        "NLP_STATE_DIR": str(state_dir),
        "NLP_MODEL_REPOSITORY": str(model_repository),
        "NLP_TRITON_HTTP_PORT": str(http),
        "NLP_TRITON_GRPC_PORT": str(grpc),
        "NLP_TRITON_METRICS_PORT": str(metrics),
    }
