"""Shared pytest wiring: markers and the session-scoped servers of the local stack.

The fixtures ``kafka``, ``elasticsearch`` and ``triton`` reuse servers already started
with ``python -m deploy.local up`` (same NLP_* environment), or start them through the same
deploy code and stop them at session end. Only what a fixture started is stopped.
"""

from __future__ import annotations

from collections.abc import Iterator

import pytest

from deploy.process import DeployError
from deploy.testing import ElasticsearchInfo, KafkaInfo, TritonInfo, running


def pytest_configure(config: pytest.Config) -> None:
    config.addinivalue_line(
        "markers", "integration: needs real local servers (Kafka, Elasticsearch, Triton)"
    )
    config.addinivalue_line("markers", "slow: takes more than a few seconds")
    config.addinivalue_line(
        "markers", "disruptive: kills and restarts the shared servers; runs after the rest"
    )
    config.addinivalue_line(
        "markers", "compose: builds and starts docker-compose.yml on 127.0.0.2 (skips without "
        "Docker); -m 'not compose' leaves it out"
    )


def pytest_collection_modifyitems(items: list[pytest.Item]) -> None:
    """Tests that kill the shared servers run last, so no other test sees the outage."""
    items.sort(key=lambda item: item.get_closest_marker("disruptive") is not None)


def _serve(name: str) -> Iterator[object]:
    try:
        with running(name) as info:
            yield info
    except DeployError as exc:  # say what is wrong, not a traceback through fixtures
        pytest.fail(f"local {name} server unavailable: {exc}", pytrace=False)


@pytest.fixture(scope="session")
def kafka() -> Iterator[KafkaInfo]:
    """A Kafka 3.9 broker (KRaft); ``.bootstrap`` is the bootstrap server string."""
    yield from _serve("kafka")  # type: ignore[misc]


@pytest.fixture(scope="session")
def elasticsearch() -> Iterator[ElasticsearchInfo]:
    """An Elasticsearch 7.10.2 node; ``.url`` is its HTTP base URL."""
    yield from _serve("elasticsearch")  # type: ignore[misc]


@pytest.fixture(scope="session")
def triton() -> Iterator[TritonInfo]:
    """Triton serving NLP_MODEL_REPOSITORY; ``.grpc_url``/``.http_url`` are host:port."""
    yield from _serve("triton")  # type: ignore[misc]
