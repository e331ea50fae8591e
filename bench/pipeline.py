"""Throughput of the whole posts pipeline: first message produced -> last one searchable.

Each run is an isolated ``deploy.harness.PipelineRun`` (its own topics, consumer group and
index prefix, so it never mixes with the demo's data): a worker started as in production,
warmed up with one message, then every tweet produced at once and Elasticsearch polled
until all of them are searchable.
"""

from __future__ import annotations

import time

import psutil

from deploy.harness import PipelineRun, post_bytes
from services.settings import Settings


def bench_pipeline(texts: list[str], settings: Settings, naive: bool, hashtags: bool = False,
                   timeout: float = 900, memory: bool = True) -> dict:
    """Tweets per second through Kafka -> Faust -> Triton -> Kafka -> Faust -> Elasticsearch.

    With ``hashtags`` the worker calls the POS tagger and the hashtag generator for every
    post (the default deployment); without, only the POS tagger (NLP_HASHTAG_MODEL="");
    ``naive``: one post per Triton request, one request at a time; ``memory`` False: the
    hashtag memory off (NLP_HASHTAG_MEMORY=0)."""
    env = {"NLP_HASHTAG_MODEL": "hashtag_generator" if hashtags else "",
           "NLP_HASHTAG_MEMORY": "1" if memory else "0"}
    if naive:
        env.update(NLP_TAG_BATCH="1", NLP_TRITON_CONCURRENCY="1")
    run = PipelineRun.create(settings, f"bench-{'naive' if naive else 'batched'}", **env)
    try:
        worker = run.start_worker()
        run.produce([(b"warmup", post_bytes("warmup", "hi"))])
        if not run.wait_indexed(["warmup"], timeout=180):
            raise TimeoutError("the warm-up post was not indexed within 180 s")
        ids = [f"{run.name}-{i}" for i in range(len(texts))]
        items = [(i.encode(), post_bytes(i, t)) for i, t in zip(ids, texts, strict=True)]
        began = time.perf_counter()
        run.produce(items)
        if not run.wait_indexed(ids, timeout=timeout, poll=0.25, refresh=False):
            raise TimeoutError(f"not all {len(ids)} posts indexed within {timeout}s")
        seconds = time.perf_counter() - began
        worker_rss = psutil.Process(worker.proc.pid).memory_info().rss
        log_path = str(worker.log_path)
    finally:
        run.cleanup()
    return {"tweets": len(texts), "seconds": round(seconds, 3),
            "tweets_per_s": round(len(texts) / seconds, 1),
            "worker_rss_mib": round(worker_rss / 2**20), "worker_log": log_path}
