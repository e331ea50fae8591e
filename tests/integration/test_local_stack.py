"""The real local servers: Kafka round trip, Elasticsearch analysis, Triton over gRPC,
and the deploy CLI's lifecycle (idempotent up, status, down leaving no process behind).

Servers come from the session fixtures in tests/conftest.py. Triton tests run their own
server on free ports and a private state dir with a tiny Python-backend model, so they do
not depend on the project's real models.
"""

from __future__ import annotations

import os
import signal
import socket
import subprocess
import sys
import time
import uuid
from collections.abc import Iterator
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

import numpy as np
import pytest
from kafka import KafkaAdminClient
from kafka.admin import NewTopic

from deploy.process import DeployError, group_pids
from deploy.testing import ElasticsearchInfo, KafkaInfo, TritonInfo, private_env, running
from deploy.triton import Triton
from services.kafka_topics import (
    alter_topic_configs,
    ensure_topics,
    topic_config,
    topic_retention_ms,
)
from services.model_control import admin_headers
from services.settings import REPO_ROOT, Settings

pytestmark = pytest.mark.integration

ECHO_CONFIG = """\
name: "echo"
backend: "python"
max_batch_size: 16
dynamic_batching { max_queue_delay_microseconds: 5000 }
input [ { name: "TEXT", data_type: TYPE_STRING, dims: [ 1 ] } ]
output [
  { name: "ECHO", data_type: TYPE_STRING, dims: [ 1 ] },
  { name: "CHARS", data_type: TYPE_INT64, dims: [ 1 ] }
]
instance_group [ { kind: KIND_CPU, count: 1 } ]
"""

# Imports torch (from the venv) and services.settings (from the repo root): the two things
# the real models need from the stub's interpreter.
ECHO_MODEL = """\
import numpy as np
import torch
import triton_python_backend_utils as pb_utils

import services.settings  # noqa: F401  (repo root must be importable)


class TritonPythonModel:
    def initialize(self, args):
        torch.set_num_threads(1)

    def execute(self, requests):
        responses = []
        for request in requests:
            text = pb_utils.get_input_tensor_by_name(request, "TEXT").as_numpy()
            chars = torch.tensor([[len(t[0].decode("utf-8"))] for t in text]).numpy()
            responses.append(pb_utils.InferenceResponse([
                pb_utils.Tensor("ECHO", text.astype(np.object_)),
                pb_utils.Tensor("CHARS", chars.astype(np.int64)),
            ]))
        return responses
"""


def write_model(repo: Path, name: str, config: str, model_py: str) -> None:
    (repo / name / "1").mkdir(parents=True, exist_ok=True)
    (repo / name / "config.pbtxt").write_text(config)
    (repo / name / "1" / "model.py").write_text(model_py)


@pytest.fixture(scope="module")
def echo_repo(tmp_path_factory: pytest.TempPathFactory) -> Path:
    repo = tmp_path_factory.mktemp("model_repository")
    write_model(repo, "echo", ECHO_CONFIG, ECHO_MODEL)
    return repo


@pytest.fixture(scope="module")
def triton_echo(echo_repo: Path, tmp_path_factory: pytest.TempPathFactory) -> Iterator[TritonInfo]:
    env = private_env(tmp_path_factory.mktemp("state"), echo_repo)
    with running("triton", Settings.from_env(env)) as info:
        yield info  # type: ignore[misc]


# Kafka -----------------------------------------------------------------------------------
def test_dead_letter_topics_keep_records_for_days_and_the_setting_applies_to_old_ones(
    kafka: KafkaInfo,
) -> None:
    tag = uuid.uuid4().hex[:8]
    dlq, plain = f"it.{tag}.posts.raw.dlq", f"it.{tag}.posts.raw"
    ensure_topics(kafka.bootstrap, [dlq, plain])
    day = 24 * 3600 * 1000
    assert topic_retention_ms(kafka.bootstrap, dlq) == 14 * day
    assert topic_retention_ms(kafka.bootstrap, plain) == day  # the broker's 24 h
    ensure_topics(kafka.bootstrap, [dlq, plain], dlq_retention_days=30)
    assert topic_retention_ms(kafka.bootstrap, dlq) == 30 * day


def test_every_topic_stamps_arrival_and_an_operators_retention_survives_a_restart(
    kafka: KafkaInfo,
) -> None:
    """Topics made before this rule (with the producer's clock) get it on the next start;
    a retention an operator raised for a backfill is kept when a worker starts again."""
    tag = uuid.uuid4().hex[:8]
    old, new = f"it.{tag}.old", f"it.{tag}.new"
    admin = KafkaAdminClient(bootstrap_servers=kafka.bootstrap)
    try:
        admin.create_topics([NewTopic(old, 1, 1, topic_configs={
            "message.timestamp.type": "CreateTime"})])
    finally:
        admin.close()
    ensure_topics(kafka.bootstrap, [old, new])
    for topic in (old, new):
        assert topic_config(kafka.bootstrap, topic, "message.timestamp.type") == "LogAppendTime"
    alter_topic_configs(kafka.bootstrap, old, {"retention.ms": str(72 * 3600 * 1000)})
    ensure_topics(kafka.bootstrap, [old, new])  # what a worker does at start
    assert topic_retention_ms(kafka.bootstrap, old) == 72 * 3600 * 1000
    assert topic_config(kafka.bootstrap, old, "message.timestamp.type") == "LogAppendTime"


def test_kafka_round_trip_of_a_1mb_message(kafka: KafkaInfo) -> None:
    from kafka import KafkaConsumer, KafkaProducer

    topic = f"it.roundtrip.{uuid.uuid4().hex[:8]}"
    assert ensure_topics(kafka.bootstrap, [topic]) == [topic]
    assert ensure_topics(kafka.bootstrap, [topic]) == []  # idempotent
    payload = ("ü" * 500_000).encode()  # ~1 MB: the size of our largest texts
    producer = KafkaProducer(bootstrap_servers=kafka.bootstrap, max_request_size=2_000_000)
    producer.send(topic, key=b"post-1", value=payload).get(timeout=30)
    producer.send(topic, key=b"post-2", value=b"small").get(timeout=30)
    producer.close()

    consumer = KafkaConsumer(
        topic,
        bootstrap_servers=kafka.bootstrap,
        group_id=f"it-{uuid.uuid4().hex[:8]}",
        auto_offset_reset="earliest",
        consumer_timeout_ms=20_000,
    )
    got = {m.key: m.value for m in consumer}
    consumer.close()
    assert got == {b"post-1": payload, b"post-2": b"small"}


def test_kafka_auto_creates_topics_with_four_partitions(kafka: KafkaInfo) -> None:
    from kafka import KafkaProducer

    topic = f"it.auto.{uuid.uuid4().hex[:8]}"
    producer = KafkaProducer(bootstrap_servers=kafka.bootstrap)
    producer.send(topic, b"x").get(timeout=30)
    assert len(producer.partitions_for(topic)) == 4
    producer.close()


# Elasticsearch ---------------------------------------------------------------------------
def test_elasticsearch_template_standard_analyzer_and_keyword(
    elasticsearch: ElasticsearchInfo,
) -> None:
    from elasticsearch import Elasticsearch

    es = Elasticsearch(elasticsearch.url)
    assert es.info()["version"]["number"] == "7.10.2"
    prefix = f"it-{uuid.uuid4().hex[:8]}"
    es.indices.put_index_template(
        name=prefix,
        body={
            "index_patterns": [f"{prefix}-*"],
            "template": {
                "settings": {"number_of_shards": 1, "number_of_replicas": 0},
                "mappings": {
                    "properties": {
                        "text": {
                            "type": "text",
                            "analyzer": "standard",
                            "fields": {"raw": {"type": "keyword", "ignore_above": 256}},
                        },
                        "hashtags": {"type": "keyword"},
                        "lang": {"type": "keyword"},
                    }
                },
            },
        },
    )
    index = f"{prefix}-2024.01"
    docs = {
        "p1": {"text": "Brave new World of streaming NLP", "hashtags": ["nlp"], "lang": "en"},
        "p2": {"text": "Old world news", "hashtags": ["news", "nlp"], "lang": "en"},
        "p3": {"text": "微博 新闻", "hashtags": ["weibo"], "lang": "zh"},
    }
    for doc_id, doc in docs.items():
        es.index(index=index, id=doc_id, document=doc)
    es.index(index=index, id="p1", document=docs["p1"])  # redelivery: same _id, no duplicate
    es.indices.refresh(index=index)
    try:
        mapping = es.indices.get_mapping(index=index)[index]["mappings"]["properties"]
        assert mapping["text"]["fields"]["raw"]["type"] == "keyword"
        hits = es.search(index=index, query={"match": {"text": "WORLD"}})["hits"]
        assert {h["_id"] for h in hits["hits"]} == {"p1", "p2"}
        exact = es.search(index=index, query={"term": {"text.raw": "Old world news"}})
        assert [h["_id"] for h in exact["hits"]["hits"]] == ["p2"]
        aggs = es.search(index=index, size=0, aggs={"tags": {"terms": {"field": "hashtags"}}})[
            "aggregations"
        ]["tags"]["buckets"]
        assert {b["key"]: b["doc_count"] for b in aggs} == {"nlp": 2, "news": 1, "weibo": 1}
        tokens = es.indices.analyze(body={"analyzer": "standard", "text": "微博 新闻"})
        assert [t["token"] for t in tokens["tokens"]] == ["微", "博", "新", "闻"]
    finally:
        es.indices.delete(index=index)
        es.indices.delete_index_template(name=prefix)


# Triton ----------------------------------------------------------------------------------
def test_triton_echo_model_over_grpc_with_dynamic_batching(triton_echo: TritonInfo) -> None:
    import tritonclient.grpc as grpcclient

    client = grpcclient.InferenceServerClient(triton_echo.grpc_url)
    assert client.is_server_ready()
    assert client.is_model_ready("echo")

    def infer(text: str) -> tuple[bytes, int]:
        data = np.array([[text.encode()]], dtype=np.object_)
        inp = grpcclient.InferInput("TEXT", list(data.shape), "BYTES")
        inp.set_data_from_numpy(data)
        result = client.infer("echo", [inp])
        return result.as_numpy("ECHO")[0][0], int(result.as_numpy("CHARS")[0][0])

    texts = [f"post {i} – ünïcode #{i}" for i in range(32)]
    with ThreadPoolExecutor(max_workers=8) as pool:
        results = list(pool.map(infer, texts))
    assert results == [(t.encode(), len(t)) for t in texts]
    stats = client.get_inference_statistics("echo").model_stats[0]
    assert stats.inference_count == 32
    assert stats.execution_count <= 32  # fewer executions than requests once batched


def test_triton_explicit_mode_reloads_models(triton_echo: TritonInfo) -> None:
    """Explicit model control: training can load a new version without a restart."""
    import tritonclient.http as httpclient

    client = httpclient.InferenceServerClient(triton_echo.http_url)
    admin = admin_headers(triton_echo.settings)
    index = {m["name"]: m for m in client.get_model_repository_index(headers=admin)}
    assert index["echo"]["state"] == "READY"
    client.load_model("echo", headers=admin)
    assert client.is_model_ready("echo")


def test_triton_admin_apis_need_the_admin_key(triton_echo: TritonInfo) -> None:
    """Any local user can reach loopback: loading, unloading and listing models (and
    the other admin APIs) must not be open to them. Inference stays open."""
    import tritonclient.grpc as grpcclient
    import tritonclient.http as httpclient
    from tritonclient.utils import InferenceServerException

    http = httpclient.InferenceServerClient(triton_echo.http_url)
    grpc = grpcclient.InferenceServerClient(triton_echo.grpc_url)
    for call in (lambda: http.unload_model("echo"), lambda: http.load_model("echo"),
                 lambda: http.unload_model("echo", headers={"triton-admin-key": "guess"}),
                 lambda: grpc.unload_model("echo"),
                 lambda: grpc.get_model_repository_index()):
        with pytest.raises(InferenceServerException):
            call()
    assert http.is_model_ready("echo") and grpc.is_model_ready("echo")
    grpc.load_model("echo", headers=admin_headers(triton_echo.settings, grpc=True))
    assert grpc.is_model_ready("echo")


# Lifecycle and failure messages ----------------------------------------------------------
def run_cli(env: dict[str, str], *args: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, "-m", "deploy.local", *args],
        cwd=REPO_ROOT,
        env={**os.environ, **env},
        capture_output=True,
        text=True,
        timeout=300,
    )


def test_cli_up_is_idempotent_and_down_leaves_no_process(echo_repo: Path, tmp_path: Path) -> None:
    env = private_env(tmp_path / "state", echo_repo)
    first = run_cli(env, "up", "triton")
    assert first.returncode == 0, first.stderr
    assert "started in" in first.stdout
    record = Triton(Settings.from_env(env)).record()
    assert record is not None
    assert len(group_pids(record.pid)) >= 2  # tritonserver + the model's Python stub

    second = run_cli(env, "up", "triton")
    assert second.returncode == 0, second.stderr
    assert "already running" in second.stdout
    status = run_cli(env, "status", "triton")
    assert f"pid {record.pid}" in status.stdout and "rss" in status.stdout

    down = run_cli(env, "down", "triton")
    assert "triton: stopped" in down.stdout
    assert group_pids(record.pid) == []
    assert not Path(f"/proc/{record.pid}").exists() or _is_zombie(record.pid)
    assert "down" in run_cli(env, "status", "triton").stdout
    assert "not running" in run_cli(env, "down", "triton").stdout


def test_up_after_a_kill_9_cleans_up_what_the_dead_server_left_and_starts_it(
    echo_repo: Path, tmp_path: Path
) -> None:
    """Killing tritonserver alone leaves its Python-backend stubs (and their shared
    memory) behind; ``up`` used to wait for the dead server until its timeout."""
    env = private_env(tmp_path / "state", echo_repo)
    assert run_cli(env, "up", "triton").returncode == 0
    triton = Triton(Settings.from_env(env))
    dead = triton.record()
    assert dead is not None
    os.kill(dead.pid, signal.SIGKILL)
    deadline = time.monotonic() + 10
    while Path(f"/proc/{dead.pid}").exists() and not _is_zombie(dead.pid):
        assert time.monotonic() < deadline
        time.sleep(0.1)
    stubs = group_pids(dead.pid)
    assert stubs, "the stub should outlive its server"

    started = time.monotonic()
    again = run_cli(env, "up", "triton")
    took = time.monotonic() - started
    try:
        assert again.returncode == 0, again.stdout + again.stderr
        assert f"the server (pid {dead.pid}) is gone" in again.stderr
        assert group_pids(dead.pid) == []
        assert took < 60, f"restart took {took:.0f}s"
        print(f"up after kill -9: {took:.1f}s")
    finally:
        run_cli(env, "down", "triton")


def test_fixture_stops_only_servers_no_other_session_uses(tmp_path: Path) -> None:
    repo = tmp_path / "models"
    repo.mkdir()
    env = private_env(tmp_path / "state", repo)
    settings = Settings.from_env(env)
    other_session = subprocess.Popen(["sleep", "120"])
    try:
        with running("triton", settings) as info:
            assert info.started_here  # type: ignore[attr-defined]
            Triton(settings).store.add_lease("triton", other_session.pid)
        assert Triton(settings).record() is not None, "stopped under another session's feet"

        other_session.kill()
        other_session.wait()
        with running("triton", settings) as info:
            assert not info.started_here  # type: ignore[attr-defined]
        assert Triton(settings).record() is None, "last user of a test-started server stops it"

        with running("triton", settings):
            assert run_cli(env, "up", "triton").returncode == 0  # adopted by the CLI
        assert Triton(settings).record() is not None, "a CLI-started server must stay up"
    finally:
        other_session.kill()
        Triton(settings).stop()


def _is_zombie(pid: int) -> bool:
    try:
        return Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()[0] == "Z"
    except OSError:
        return True


def test_port_in_use_names_the_variable_to_set(tmp_path: Path, echo_repo: Path) -> None:
    env = private_env(tmp_path, echo_repo)
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", int(env["NLP_TRITON_HTTP_PORT"])))
        sock.listen()
        with pytest.raises(
            DeployError, match="in use by another process; set NLP_TRITON_HTTP_PORT"
        ):
            Triton(Settings.from_env(env)).start(timeout=30)


def test_server_dying_at_start_up_reports_its_log(tmp_path: Path) -> None:
    repo = tmp_path / "models"
    broken = "raise ImportError('model dependency missing: frobnicate')\n"
    write_model(repo, "broken", ECHO_CONFIG.replace('"echo"', '"broken"'), broken)
    env = private_env(tmp_path / "state", repo)
    with pytest.raises(DeployError) as err:
        Triton(Settings.from_env(env)).start(timeout=120)
    assert "exited during start-up" in str(err.value)
    assert "frobnicate" in str(err.value)
    assert Triton(Settings.from_env(env)).record() is None


def test_missing_java_is_explained(monkeypatch: pytest.MonkeyPatch) -> None:
    from deploy import jvm

    monkeypatch.setenv("JAVA_HOME", "/nonexistent")
    monkeypatch.setenv("PATH", "/nonexistent")
    with pytest.raises(DeployError, match=r"Java 17\+ not found \(install OpenJDK 17"):
        jvm.find_java(17)
