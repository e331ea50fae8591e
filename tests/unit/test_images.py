"""The stand-in images keep their official images' environment contracts (deploy/images/).

docker-compose.yml configures Kafka and Elasticsearch the official images' way; the
entrypoints of the images built here must read the same variables the same way.
"""

from __future__ import annotations

import importlib.util
import re
from pathlib import Path
from types import ModuleType

import pytest

from services.settings import REPO_ROOT

IMAGES = REPO_ROOT / "deploy" / "images"


def entrypoint(image: str) -> ModuleType:
    path: Path = IMAGES / image / "entrypoint.py"
    spec = importlib.util.spec_from_file_location(f"{image}_entrypoint", path)
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def test_kafka_variables_become_properties_as_in_the_apache_image() -> None:
    kafka = entrypoint("kafka")
    props = kafka.broker_properties({
        "KAFKA_LOG_DIRS": "/var/lib/kafka/data",
        "KAFKA_LISTENER_SECURITY_PROTOCOL_MAP": "PLAINTEXT:PLAINTEXT",
        "KAFKA_HEAP_OPTS": "-Xmx512m",  # the JVM's, not the broker's
        "KAFKA_SOME__UNDERSCORED___DASHED": "1",
        "CLUSTER_ID": "abc", "PATH": "/usr/bin",
    })
    assert props == {"log.dirs": "/var/lib/kafka/data",
                     "listener.security.protocol.map": "PLAINTEXT:PLAINTEXT",
                     "some_underscored-dashed": "1"}


def test_every_kafka_variable_of_the_compose_file_is_a_broker_property_or_the_jvms() -> None:
    text = (REPO_ROOT / "docker-compose.yml").read_text()
    kafka_service = text[text.index("\n  kafka:\n"):text.index("\n  elasticsearch:\n")]
    env = {m[1]: m[2].split("  #")[0].strip().strip('"')
           for m in re.finditer(r"^      ([A-Z_]+): (.*)$", kafka_service, re.M)}
    assert len(env) > 15
    props = entrypoint("kafka").broker_properties(env)
    assert props["advertised.listeners"] == \
        "PLAINTEXT://kafka:9092,HOST://${NLP_PUBLISH_ADDRESS:-127.0.0.1}:9092"  # Compose fills it
    assert props["process.roles"] == "broker,controller"
    assert "heap.opts" not in props and "cluster.id" not in props


def test_elasticsearch_settings_come_from_dotted_variables_and_xpack_is_skipped() -> None:
    es = entrypoint("elasticsearch")
    chosen = es.settings({"discovery.type": "single-node", "xpack.security.enabled": "false",
                          "ES_JAVA_OPTS": "-Xmx1g", "HOSTNAME": "es"})
    assert chosen == {"network.host": "0.0.0.0", "transport.port": "9300",
                      "discovery.type": "single-node"}


def test_the_oss_elasticsearch_image_refuses_to_run_open_when_security_is_asked_for() -> None:
    es = entrypoint("elasticsearch")
    with pytest.raises(es.NoXPack, match="xpack.security.enabled=true"):
        es.settings({"discovery.type": "single-node", "xpack.security.enabled": "true"})

