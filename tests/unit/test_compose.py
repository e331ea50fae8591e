"""docker-compose.yml describes the same system as the local stack (deploy.local).

Validated offline with Debian's docker-compose 1.29 (`config -q` resolves and checks the
file against the Compose schema without a Docker engine). Install it with the packages in
deploy/ci-apt-packages.txt.
"""

from __future__ import annotations

import os
import re
import shutil
import subprocess

import pytest

from deploy.kafka import Kafka
from services.settings import (
    ELASTICSEARCH_VERSION,
    KAFKA_VERSION,
    REPO_ROOT,
    TRITON_CONTAINER,
    Settings,
)

COMPOSE_FILE = REPO_ROOT / "docker-compose.yml"
EXPECTED_SERVICES = {
    "kafka",
    "headline-api",
    "elasticsearch",
    "kibana",
    "kibana-setup",
    "triton",
    "triton-replica",
    "worker",
    "producer",
    "prometheus",
    "alertmanager",
    "es-exporter",
    "lag-exporter",
}

pytestmark = pytest.mark.skipif(
    shutil.which("docker-compose") is None,
    reason="docker-compose not installed (apt-get install -y docker-compose; "
    "see deploy/ci-apt-packages.txt)",
)


#: Secrets come from the environment; this one only has to be present for ``config``.
SECRETS = {"NLP_TRITON_ADMIN_KEY": "test-admin-key"}


def compose(*args: str, env: dict[str, str] | None = None) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        ["docker-compose", "-f", str(COMPOSE_FILE), *args],
        cwd=REPO_ROOT,
        capture_output=True,
        text=True,
        timeout=120,
        env={**os.environ, **SECRETS} if env is None else env,
    )


def test_triton_admin_apis_need_a_key_from_the_environment(resolved: str) -> None:
    assert "model-repository,shared-memory,trace,logging:triton-admin-key=test-admin-key" \
        in resolved
    without = {k: v for k, v in os.environ.items() if k not in SECRETS}
    result = compose("config", "-q", env=without)
    assert result.returncode != 0 and "NLP_TRITON_ADMIN_KEY" in result.stderr


@pytest.fixture(scope="module")
def resolved() -> str:
    """The file as docker-compose resolves it (anchors merged, defaults filled in)."""
    result = compose("config")
    assert result.returncode == 0, result.stderr
    return result.stdout


def test_compose_file_is_valid() -> None:
    result = compose("config", "-q")
    assert result.returncode == 0, result.stderr


def test_compose_has_the_pipeline_services() -> None:
    result = compose("config", "--services")
    assert result.returncode == 0, result.stderr
    assert set(result.stdout.split()) == EXPECTED_SERVICES


def test_compose_uses_the_local_stack_versions(resolved: str) -> None:
    assert f"image: apache/kafka:{KAFKA_VERSION}" in resolved
    assert f"elasticsearch/elasticsearch:{ELASTICSEARCH_VERSION}" in resolved
    assert f"kibana/kibana:{ELASTICSEARCH_VERSION}" in resolved
    dockerfile = (REPO_ROOT / "deploy" / "triton.Dockerfile").read_text()
    assert f"FROM nvcr.io/nvidia/tritonserver:{TRITON_CONTAINER}" in dockerfile


def test_triton_image_installs_exactly_the_serving_requirements() -> None:
    """The image gets nlp_models/requirements.txt and no repository code: the versions
    carry their own (nlp_models.zip), as for the local Triton's serving venv."""
    dockerfile = (REPO_ROOT / "deploy" / "triton.Dockerfile").read_text()
    assert "COPY nlp_models/requirements.txt /opt/nlp/requirements.txt" in dockerfile
    assert "pip install --no-cache-dir -r /opt/nlp/requirements.txt" in dockerfile
    final_stage = dockerfile.split("FROM nvcr.io/")[1]
    copied = [line.split()[1] for line in final_stage.splitlines() if line.startswith("COPY ")
              and "--from" not in line]
    assert copied == ["nlp_models/requirements.txt"]
    installs = [line for line in dockerfile.splitlines() if "pip install" in line]
    assert len(installs) == 1


#: broker properties that name the machine's addresses and paths, which Compose sets its way
BROKER_ADDRESSES = {"controller.quorum.voters", "listeners", "advertised.listeners",
                    "listener.security.protocol.map", "log.dirs"}


def test_compose_broker_is_configured_as_the_local_broker(resolved: str) -> None:
    """Every property deploy/kafka.py gives the local broker, addresses aside, is Compose's
    too: KRaft roles, 2 MiB messages, 4 partitions, threads, and retention counted from
    each record's arrival (LogAppendTime) for 24 h."""
    compose_env = dict(re.findall(r"^ +(KAFKA_[A-Z_]+): ['\"]?(.*?)['\"]?$", resolved, re.M))
    local = Kafka(Settings()).server_properties()
    assert local["log.message.timestamp.type"] == "LogAppendTime"
    for key, value in local.items():
        if key not in BROKER_ADDRESSES:
            assert compose_env.get("KAFKA_" + key.upper().replace(".", "_")) == value, key


def test_compose_services_wait_for_healthy_dependencies(resolved: str) -> None:
    assert resolved.count("healthcheck:") >= 4  # kafka, elasticsearch, kibana, triton
    assert "condition: service_healthy" in resolved
    assert "--model-control-mode=explicit" in resolved
    assert "services.stream" in resolved and "services.producer" in resolved
    assert "deploy/kibana/saved_objects.ndjson" in resolved


def published_ports(resolved: str) -> list[str]:
    """The '- host:port:container' items of every ``ports:`` list in the resolved file."""
    items, in_ports = [], False
    for line in resolved.splitlines():
        stripped = line.strip()
        if stripped == "ports:":
            in_ports = True
        elif in_ports and stripped.startswith("- "):
            items.append(stripped[2:])
        else:
            in_ports = False
    return items


def test_compose_publishes_ports_on_loopback_only(resolved: str) -> None:
    ports = published_ports(resolved)
    assert len(ports) >= 6  # kafka, elasticsearch, kibana, triton x3
    assert all(p.startswith("127.0.0.1:") for p in ports), ports


SECURE = {**SECRETS, "NLP_KAFKA_BROKER_PASSWORD": "broker-pw", "NLP_KAFKA_PASSWORD": "client-pw",
          "NLP_ES_PASSWORD": "es-pw"}


def secured(*overrides: str, env: dict[str, str]) -> subprocess.CompletedProcess[str]:
    files = [a for f in overrides for a in ("-f", str(REPO_ROOT / "deploy" / "security" / f))]
    return subprocess.run(["docker-compose", "-f", str(COMPOSE_FILE), *files, "config"],
                          cwd=REPO_ROOT, capture_output=True, text=True, timeout=120, env=env)


def test_the_security_overrides_take_every_secret_from_the_environment() -> None:
    result = secured("kafka-sasl.yml", "elasticsearch.yml", env={**os.environ, **SECURE})
    assert result.returncode == 0, result.stderr
    for name in ("NLP_KAFKA_BROKER_PASSWORD", "NLP_KAFKA_PASSWORD", "NLP_ES_PASSWORD"):
        without = {k: v for k, v in {**os.environ, **SECURE}.items() if k != name}
        missing = secured("kafka-sasl.yml", "elasticsearch.yml", env=without)
        assert missing.returncode != 0 and name in missing.stderr


def test_with_sasl_every_kafka_listener_asks_for_a_login_and_the_clients_have_one() -> None:
    resolved = secured("kafka-sasl.yml", env={**os.environ, **SECURE}).stdout
    assert "KAFKA_LISTENER_SECURITY_PROTOCOL_MAP: " \
        "INTERNAL:SASL_PLAINTEXT,HOST:SASL_PLAINTEXT,CONTROLLER:SASL_PLAINTEXT" in resolved
    logins = dict(re.findall(r"KAFKA_LISTENER_NAME_([A-Z]+)_PLAIN_SASL_JAAS_CONFIG: (.*?);",
                             resolved, re.S))
    assert set(logins) == {"INTERNAL", "HOST", "CONTROLLER"}
    for jaas in logins.values():
        assert 'user_broker="broker-pw"' in jaas and 'user_nlp="client-pw"' in jaas
    assert resolved.count("NLP_KAFKA_SECURITY_PROTOCOL: SASL_PLAINTEXT") == 2  # worker, producer


def test_one_override_file_puts_both_tritons_on_the_gpus() -> None:
    result = subprocess.run(
        ["docker-compose", "-f", str(COMPOSE_FILE), "-f", str(REPO_ROOT / "deploy" / "gpu.yml"),
         "--profile", "replica", "config"], cwd=REPO_ROOT, capture_output=True, text=True,
        timeout=120, env={**os.environ, **SECRETS})
    assert result.returncode == 0, result.stderr
    assert result.stdout.count("driver: nvidia") == 2
    assert "KIND_CPU" not in "".join(  # Triton then picks one instance per GPU itself
        p.read_text() for p in (REPO_ROOT / "model_repository").glob("*/config.pbtxt"))
