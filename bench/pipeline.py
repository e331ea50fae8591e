"""Throughput of the whole posts pipeline: first message produced -> last one searchable.

Each run uses its own topics, consumer group and index prefix (so it never mixes with the
demo's data), starts a Faust worker subprocess configured through NLP_* variables, warms it
up with one message, then produces every tweet at once with kafka-python and polls
Elasticsearch (refresh + ids count) until all of them are searchable.
"""

from __future__ import annotations

import os
import subprocess
import sys
import time
import uuid

import psutil

from deploy.process import stop_child
from services.settings import REPO_ROOT, Settings


def _post_bytes(post_id: str, text: str) -> bytes:
    from services.pb import messages_pb2 as pb

    post = pb.Post(id=post_id, platform=pb.TWITTER, lang="en", text=text)
    post.created_at.FromSeconds(1_700_000_000)
    return post.SerializeToString()


def _produce(bootstrap: str, topic: str, items: list[tuple[str, bytes]]) -> None:
    from kafka import KafkaProducer

    producer = KafkaProducer(bootstrap_servers=bootstrap, acks="all", linger_ms=5)
    for key, value in items:
        producer.send(topic, key=key.encode(), value=value)
    producer.flush()
    producer.close()


def _count(es, index: str, ids: list[str]) -> int:
    """Searchable documents among ``ids``. No forced refresh: the index's own 1 s refresh
    decides when a document becomes searchable, as it does for users (forcing a refresh
    every poll would cost Elasticsearch more CPU than the indexing itself)."""
    try:
        return es.count(index=index, body={"query": {"ids": {"values": ids}}})["count"]
    except Exception:  # the index appears with the first bulk
        return 0


def _wait_all(es, index: str, ids: list[str], worker: subprocess.Popen, timeout: float) -> float:
    began = time.perf_counter()
    while _count(es, index, ids) < len(ids):
        if worker.poll() is not None:
            raise RuntimeError(f"worker exited with {worker.returncode}")
        if time.perf_counter() - began > timeout:
            raise TimeoutError(f"not all {len(ids)} posts indexed within {timeout}s")
        time.sleep(0.25)
    return time.perf_counter()


def bench_pipeline(texts: list[str], settings: Settings, naive: bool, hashtags: bool = False,
                   timeout: float = 900) -> dict:
    """Tweets per second through Kafka -> Faust -> Triton -> Kafka -> Faust -> Elasticsearch.

    With ``hashtags`` the worker calls the POS tagger and the hashtag generator for every
    post (the default deployment); without, only the POS tagger (NLP_HASHTAG_MODEL="")."""
    from services.config import PipelineConfig
    from services.es.bulk import make_client
    from services.kafka_topics import ensure_topics

    run = f"bench-{'naive' if naive else 'batched'}-{uuid.uuid4().hex[:6]}"
    env = dict(os.environ, NLP_TOPIC_PREFIX=f"{run}.", NLP_INDEX_PREFIX=run, NLP_APP_ID=run,
               NLP_STREAM_WEB_PORT="0", NLP_HASHTAG_MODEL="hashtag_generator" if hashtags else "")
    if naive:
        env.update(NLP_TAG_BATCH="1", NLP_TRITON_CONCURRENCY="1")
    cfg = PipelineConfig.from_env(env)
    ensure_topics(settings.kafka_bootstrap, cfg.topics.all())
    es = make_client(settings.es_url)
    log_path = settings.state_dir / "logs" / f"{run}.log"
    log_path.parent.mkdir(parents=True, exist_ok=True)
    with open(log_path, "wb") as log:
        cmd = [sys.executable, "-m", "services.stream", "worker", "-l", "info"]
        worker = subprocess.Popen(cmd, cwd=REPO_ROOT, env=env, stdout=log, stderr=subprocess.STDOUT)
    try:
        warmup = [("warmup", _post_bytes("warmup", "hi"))]
        _produce(settings.kafka_bootstrap, cfg.topics.posts_raw, warmup)
        _wait_all(es, cfg.index_pattern, ["warmup"], worker, timeout=180)
        items = [(f"{run}-{i}", _post_bytes(f"{run}-{i}", t)) for i, t in enumerate(texts)]
        began = time.perf_counter()
        _produce(settings.kafka_bootstrap, cfg.topics.posts_raw, items)
        ended = _wait_all(es, cfg.index_pattern, [k for k, _ in items], worker, timeout)
        worker_rss = psutil.Process(worker.pid).memory_info().rss
    finally:
        stop_child(worker)
        es.indices.delete(index=cfg.index_pattern, ignore=[404])
    seconds = ended - began
    return {"tweets": len(texts), "seconds": round(seconds, 3),
            "tweets_per_s": round(len(texts) / seconds, 1),
            "worker_rss_mib": round(worker_rss / 2**20), "worker_log": str(log_path)}
