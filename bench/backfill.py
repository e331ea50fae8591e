"""A backfill stamped with event time, sent while no worker runs: what the broker keeps.

    python -m bench backfill [--posts 3000] [--wait 420] [--producer-clock]

What a monitoring desk does when it loads last month's posts: a producer stamps each Kafka
record with its post's creation time (``timestamp_ms=created_at``, as many connectors and
replay tools do), here from 2010-10-01 on, ten minutes apart, onto the run's ``posts.raw``
while no worker runs. The bench then waits ``--wait`` seconds (the broker checks retention
every 5 min, so the default 7 min holds at least one check), counts the records retention
deleted (the partitions' start offsets), starts a worker and waits until every post is
searchable or nothing more arrives for a minute.

``--producer-clock`` sets the run's ``posts.raw`` to ``message.timestamp.type=CreateTime``
before sending, as every topic was before retention counted from arrival (the worker's
start sets it back, too late for what was deleted). Prints one JSON object: posts sent,
deleted by retention, indexed, duplicate documents, dead-lettered, lost.
"""

from __future__ import annotations

import time

from deploy.harness import PipelineRun, deleted_by_retention, send_stamped
from services.kafka_topics import alter_topic_configs, topic_config
from services.settings import Settings

OCTOBER_2010_MS = 1_285_891_200_000  # 2010-10-01T00:00:00Z
TEN_MINUTES_MS = 600_000


def run(posts: int = 3000, wait: float = 420, producer_clock: bool = False) -> dict:
    pipeline = PipelineRun.create(Settings.from_env(), "bench-backfill", NLP_HASHTAG_MODEL="")
    try:
        if producer_clock:
            alter_topic_configs(pipeline.bootstrap, pipeline.topics.posts_raw,
                                {"message.timestamp.type": "CreateTime"})
        topic = pipeline.topics.posts_raw
        stamping = topic_config(pipeline.bootstrap, topic, "message.timestamp.type")
        batch = [(f"backfill-{n}", OCTOBER_2010_MS + n * TEN_MINUTES_MS) for n in range(posts)]
        send_stamped(pipeline.bootstrap, topic, batch)
        print(f"sent {posts} posts stamped 2010-10-01 on, 10 min apart, to {topic} "
              f"({stamping}); no worker for {wait:.0f} s", flush=True)
        time.sleep(wait)
        gone = deleted_by_retention(pipeline.bootstrap, topic)
        print(f"deleted by retention: {gone}; starting a worker", flush=True)
        pipeline.start_worker()
        ids = [post_id for post_id, _ in batch]
        pipeline.wait_indexed(ids, timeout=60 + posts / 20)
        outcome = pipeline.outcome(ids)
        return {"posts": posts, "topic_timestamps": stamping, "waited_s": wait,
                "deleted_by_retention": gone, "indexed": outcome["indexed"],
                "duplicate_documents": outcome["duplicate_documents"],
                "dead_lettered": outcome["good_dead_lettered"], "lost": outcome["lost"]}
    finally:
        pipeline.cleanup()
