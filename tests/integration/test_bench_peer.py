"""The benchmark's hand-written peer (``bench.peer``) keeps the guarantees it is compared
under: every good post indexed once under its own id, bad records dead-lettered with a
reason, offsets committed only after indexing (a restarted peer redoes nothing twice).
A peer that cut these corners would make ``pipeline_vs_peer`` flatter it."""

from __future__ import annotations

import os
from collections.abc import Iterator
from pathlib import Path

import pytest

from bench.pipeline import start_peer
from deploy.harness import PipelineRun, post_bytes, wait_until
from deploy.testing import ElasticsearchInfo, KafkaInfo, TritonInfo
from services.settings import REPO_ROOT, Settings

pytestmark = [pytest.mark.integration, pytest.mark.timeout(300)]


@pytest.fixture()
def run(kafka: KafkaInfo, elasticsearch: ElasticsearchInfo, triton: TritonInfo,
        tmp_path: Path) -> Iterator[PipelineRun]:
    env = dict(os.environ, NLP_KAFKA_PORT=str(kafka.port),
               NLP_ES_PORT=str(elasticsearch.port), NLP_TRITON_GRPC_PORT=str(triton.grpc_port),
               NLP_TRITON_HTTP_PORT=str(triton.http_port), NLP_HASHTAG_MODEL="",
               PYTHONPATH=str(REPO_ROOT))
    pipe = PipelineRun.create(Settings.from_env(env), "peer", tmp_path, **env)
    yield pipe
    pipe.cleanup()


def test_the_peer_indexes_good_posts_once_and_dead_letters_bad_ones(run: PipelineRun) -> None:
    good = [f"good-{i}" for i in range(60)]
    records = [(p.encode(), post_bytes(p, f"peer post number {i} looks fine"))
               for i, p in enumerate(good)]
    records[20:20] = [(b"bad-bytes", b"\xff not a protobuf"),
                      (b"bad-blank", post_bytes("bad-blank", "\u200b "))]
    start_peer(run)
    run.produce(records[:40])
    run.stop_workers()  # SIGTERM mid-stream; a new peer takes over the same group
    start_peer(run)
    run.produce(records[40:] + records[:5])  # five redelivered: same ids, same documents
    wait_until(lambda: run.count_indexed(good) == len(good), 120, "all good posts indexed",
               check=run.workers[-1].alive)
    outcome = run.outcome(good, malformed=2)
    assert outcome["lost"] == 0 and outcome["duplicate_documents"] == 0, outcome
    assert outcome["good_dead_lettered"] == 0, outcome
    assert outcome["malformed_dead_lettered"] == 2, outcome
    reasons = {x.original_key: x.reason for x in run.dead_letters()}
    assert "empty text" in reasons[b"bad-blank"], reasons
