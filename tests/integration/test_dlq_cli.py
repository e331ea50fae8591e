"""``python -m services.dlq``: an operator reads dead letters and replays retriable ones,
on the real broker."""

from __future__ import annotations

import json
import os
import subprocess
import sys
import uuid
from datetime import UTC, datetime

import pytest
from kafka import KafkaConsumer, KafkaProducer

from deploy.testing import KafkaInfo
from services.dlq import Origin, dead_letter
from services.kafka_topics import ensure_topics
from services.settings import REPO_ROOT

pytestmark = [pytest.mark.integration, pytest.mark.timeout(180)]


def run_cli(kafka: KafkaInfo, *args: str) -> tuple[dict[str, object], str]:
    env = dict(os.environ, NLP_KAFKA_HOST=kafka.host, NLP_KAFKA_PORT=str(kafka.port))
    done = subprocess.run([sys.executable, "-m", "services.dlq", *args], cwd=REPO_ROOT,
                          env=env, capture_output=True, text=True, timeout=120, check=True)
    lines = done.stdout.strip().splitlines()
    return json.loads(lines[-1]), done.stdout


def test_inspect_counts_by_code_and_replay_sends_back_only_complete_selected_originals(
    kafka: KafkaInfo,
) -> None:
    tag = uuid.uuid4().hex[:8]
    source, dlq = f"it-{tag}-posts.raw", f"it-{tag}-posts.raw.dlq"
    ensure_topics(kafka.bootstrap, [source, dlq])
    now = datetime.now(UTC)
    letters = [
        dead_letter(Origin(source, 0, 1, b"m1", b"model-1"), "MODEL_ERROR", "timeout", now),
        dead_letter(Origin(source, 0, 2, b"bad", b"garbage"), "INVALID", "no id", now),
        dead_letter(Origin(source, 1, 3, b"m2", b"x" * 100), "MODEL_ERROR", "oom", now,
                    max_value_bytes=10),  # cut: cannot be replayed
    ]
    producer = KafkaProducer(bootstrap_servers=kafka.bootstrap, acks="all")
    for letter in letters:
        producer.send(dlq, key=letter.original_key, value=letter.SerializeToString())
    producer.flush()
    producer.close()

    summary, out = run_cli(kafka, "inspect", dlq)
    assert summary["letters"] == 3
    assert summary["by_code"] == {"MODEL_ERROR": 2, "INVALID": 1}
    assert "timeout" in out and "(cut)" in out

    summary, _ = run_cli(kafka, "replay", dlq, "--code", "MODEL_ERROR", "--since", "1h")
    assert (summary["selected"], summary["replayed"], summary["incomplete"]) == (2, 1, 1)
    consumer = KafkaConsumer(source, bootstrap_servers=kafka.bootstrap, group_id=None,
                             auto_offset_reset="earliest", consumer_timeout_ms=3000)
    replayed = [(r.key, r.value) for r in consumer]
    consumer.close()
    assert replayed == [(b"m1", b"model-1")]

    summary, _ = run_cli(kafka, "inspect", dlq, "--since", "2099-01-01")
    assert summary["letters"] == 0
