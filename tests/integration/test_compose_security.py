"""Compose with Kafka's SASL variant (deploy/security/kafka-sasl.yml) really runs.

Marker ``compose``, like test_compose_stack.py (same images, skipped with the reason where
no Docker daemon can start). Kafka asks every connection for a login, on the Compose
network and on the host's loopback; the passwords are made up here and reach the broker
and the services only through the environment. Checked:

- the broker's own health check logs in (it becomes healthy);
- from the host, a client without a login, and one with a wrong password, are refused;
- the producer with the login and the worker (its login from the override) carry 200
  posts into Elasticsearch: every one indexed once.

Elasticsearch's x-pack variant (deploy/security/elasticsearch.yml) needs Elastic's image,
which no registry here serves; tests/unit/test_compose.py validates that file.
"""

from __future__ import annotations

import json
import os
import secrets
import time
from collections.abc import Iterator
from pathlib import Path

import pytest
from kafka import KafkaAdminClient
from kafka.errors import KafkaError

from services.es.bulk import make_client
from services.settings import REPO_ROOT
from tests.integration.compose_project import ComposeProject, count, finish, why_not_runnable

pytestmark = [pytest.mark.compose, pytest.mark.timeout(2400)]

ADDRESS = "127.0.0.3"  # apart from the local stack (127.0.0.1) and the other compose test
POSTS = 200


@pytest.fixture(scope="module")
def secured() -> Iterator[ComposeProject]:
    reason = why_not_runnable(ADDRESS)
    if reason:
        pytest.skip(reason)
    env = {**os.environ, "NLP_PUBLISH_ADDRESS": ADDRESS,
           "NLP_TRITON_ADMIN_KEY": secrets.token_hex(16),
           "NLP_KAFKA_BROKER_PASSWORD": secrets.token_hex(16),
           "NLP_KAFKA_USERNAME": "nlp", "NLP_KAFKA_PASSWORD": secrets.token_hex(16),
           # the host's clients (producer, admin) log in the way the services do
           "NLP_KAFKA_SECURITY_PROTOCOL": "SASL_PLAINTEXT", "NLP_KAFKA_SASL_MECHANISM": "PLAIN"}
    project = ComposeProject(f"nlpsecure{os.getpid()}", ADDRESS, env,
                             overrides=["deploy/security/kafka-sasl.yml"])
    with project.running(["kafka", "elasticsearch", "triton", "worker"],
                         ["kafka", "elasticsearch", "triton"]):
        yield project


def admin(**login: str) -> KafkaAdminClient:
    return KafkaAdminClient(bootstrap_servers=f"{ADDRESS}:9092", request_timeout_ms=10_000,
                            api_version_auto_timeout_ms=10_000, **login)


def test_kafka_refuses_clients_without_the_right_login(secured: ComposeProject) -> None:
    env = secured.env
    with pytest.raises(KafkaError):
        admin()  # plaintext, no login
    with pytest.raises(KafkaError):
        admin(security_protocol="SASL_PLAINTEXT", sasl_mechanism="PLAIN",
              sasl_plain_username="nlp", sasl_plain_password="not-the-password")
    client = admin(security_protocol="SASL_PLAINTEXT", sasl_mechanism="PLAIN",
                   sasl_plain_username="nlp", sasl_plain_password=env["NLP_KAFKA_PASSWORD"])
    try:
        assert isinstance(client.list_topics(), list)
    finally:
        client.close()


def test_with_logins_from_the_environment_every_post_is_indexed_once(
    secured: ComposeProject, tmp_path: Path,
) -> None:
    lines = (REPO_ROOT / "deploy" / "sample_data" / "tweets.jsonl").read_text().splitlines()
    feed = tmp_path / "posts.jsonl"
    feed.write_text("\n".join(lines[:POSTS]) + "\n")
    ids = {json.loads(line)["id"] for line in lines[:POSTS]}
    began = time.monotonic()
    finish(secured.replay(feed, "posts.raw", "posts"))
    es = make_client(f"http://{ADDRESS}:9200")
    deadline = time.monotonic() + 600
    while count(es, "posts-*") < len(ids):
        assert time.monotonic() < deadline, f"{count(es, 'posts-*')}/{len(ids)} after 600 s"
        time.sleep(1)
    time.sleep(3)
    indexed = {h["_id"] for h in es.search(index="posts-*", size=len(ids) + 50,
                                           _source=False)["hits"]["hits"]}
    assert indexed == ids and count(es, "posts-*") == len(ids)
    print(json.dumps({"posts": len(ids), "indexed_s": round(time.monotonic() - began, 1)}))
