"""Retention counts from each record's arrival, not from the producer's clock.

Many producers stamp a record with its post's creation time (``timestamp_ms=created_at``:
connectors, replay tools). Kafka deletes a segment once its newest timestamp is older than
the topic's retention, so with the producer's clock (``CreateTime``) a backfill of old
posts was deleted at the broker's next retention check, before any worker read it, and a
record stamped in the future kept its segment forever. Every pipeline topic now stamps
arrival (``LogAppendTime``: deploy/kafka.py, services/kafka_topics.py).

The broker is this module's own (private state dir, free ports) and checks retention every
second instead of every five minutes, so "several retention checks" take seconds. Each case
sends the same records to a control topic created with the producer's clock, which shows
what the broker does to them there: the old ones are deleted before any worker starts, the
future ones outlive their retention.
"""

from __future__ import annotations

import time
import urllib.request
from collections.abc import Iterator
from dataclasses import replace
from pathlib import Path

import pytest
from kafka import KafkaAdminClient, KafkaConsumer
from kafka.admin import NewTopic
from prometheus_client.parser import text_string_to_metric_families

from deploy.harness import PipelineRun, deleted_by_retention, send_stamped, wait_until
from deploy.kafka import Kafka
from deploy.testing import ElasticsearchInfo, TritonInfo, free_ports
from services.kafka_topics import alter_topic_configs
from services.settings import Settings

pytestmark = [pytest.mark.integration, pytest.mark.slow, pytest.mark.timeout(900)]

POSTS = 200
TEN_MINUTES_MS = 600_000
OCTOBER_2010_MS = 1_285_891_200_000  # 2010-10-01T00:00:00Z
YEAR_2040_MS = 2_208_988_800_000  # 2040-01-01T00:00:00Z
#: ConsumerRecord.timestamp_type of a record the broker stamped with its arrival
LOG_APPEND_TIME = 1


class FastRetentionKafka(Kafka):
    """The local broker, checking retention every second."""

    retention_check_ms = 1000


@pytest.fixture(scope="module")
def stack(tmp_path_factory: pytest.TempPathFactory, elasticsearch: ElasticsearchInfo,
          triton: TritonInfo) -> Iterator[Settings]:
    """The shared Elasticsearch and Triton, and a broker of this module's own."""
    port, controller = free_ports(2)
    settings = replace(triton.settings, state_dir=Path(tmp_path_factory.mktemp("retention")),
                       kafka_port=port, kafka_controller_port=controller)
    broker = FastRetentionKafka(settings)
    broker.start(timeout=180, owner="fixture")
    try:
        yield settings
    finally:
        broker.stop()


def create_with_producer_clock(bootstrap: str, topic: str) -> None:
    admin = KafkaAdminClient(bootstrap_servers=bootstrap)
    try:
        admin.create_topics([NewTopic(topic, 4, 1, topic_configs={
            "message.timestamp.type": "CreateTime"})])
    finally:
        admin.close()


def timestamp_types(bootstrap: str, topic: str) -> set[int]:
    """The timestamp types of the records on ``topic``."""
    consumer = KafkaConsumer(topic, bootstrap_servers=bootstrap, auto_offset_reset="earliest",
                             consumer_timeout_ms=3000)
    try:
        return {record.timestamp_type for record in consumer}
    finally:
        consumer.close()


def end_to_end_buckets(url: str) -> dict[str, float]:
    """The worker's ``nlp_end_to_end_seconds`` histogram of posts: ``le`` -> count."""
    with urllib.request.urlopen(url, timeout=10) as response:
        text = response.read().decode()
    return {sample.labels["le"]: sample.value
            for family in text_string_to_metric_families(text)
            if family.name == "nlp_end_to_end_seconds" for sample in family.samples
            if sample.name.endswith("_bucket") and sample.labels.get("kind") == "posts"}


def assert_indexed_once(run: PipelineRun, ids: list[str]) -> None:
    assert run.wait_indexed(ids, timeout=300), run.log()[-3000:]
    outcome = run.outcome(ids)
    assert outcome["lost"] == 0 and outcome["duplicate_documents"] == 0, outcome
    assert outcome["good_dead_lettered"] == 0, outcome["dead_letters_by_code"]


def test_a_backfill_stamped_years_ago_waits_for_a_worker_and_is_indexed_once(
        stack: Settings) -> None:
    [web_port] = free_ports(1)
    run = PipelineRun.create(stack, "backfill-past", NLP_HASHTAG_MODEL="",
                             NLP_STREAM_WEB_PORT=str(web_port))
    control = f"{run.name}.producer-clock"
    posts = [(f"past-{n}", OCTOBER_2010_MS + n * TEN_MINUTES_MS) for n in range(POSTS)]
    try:
        create_with_producer_clock(run.bootstrap, control)
        send_stamped(run.bootstrap, control, posts)
        send_stamped(run.bootstrap, run.topics.posts_raw, posts)
        wait_until(lambda: deleted_by_retention(run.bootstrap, control) == POSTS, 60,
                   "retention deleting the control topic's records")
        time.sleep(5)  # five more retention checks with no worker running
        assert deleted_by_retention(run.bootstrap, run.topics.posts_raw) == 0

        run.start_worker()
        assert_indexed_once(run, [post_id for post_id, _ in posts])
        for topic in (run.topics.posts_raw, run.topics.posts_tagged):
            assert timestamp_types(run.bootstrap, topic) == {LOG_APPEND_TIME}, topic
        # the delay counts from each post's arrival on posts.raw (over the 5 s it waited
        # for a worker), neither from 2010 nor from its tagged record's arrival
        delays = end_to_end_buckets(f"http://127.0.0.1:{web_port}/metrics")
        assert delays["+Inf"] == POSTS and delays["5.0"] == 0 and delays["900.0"] == POSTS
    finally:
        run.cleanup()


def test_records_stamped_in_the_future_are_indexed_and_still_deleted_on_schedule(
        stack: Settings) -> None:
    run = PipelineRun.create(stack, "backfill-future", NLP_HASHTAG_MODEL="")
    control = f"{run.name}.producer-clock"
    posts = [(f"future-{n}", YEAR_2040_MS + n * TEN_MINUTES_MS) for n in range(POSTS)]
    try:
        create_with_producer_clock(run.bootstrap, control)
        send_stamped(run.bootstrap, control, posts)
        send_stamped(run.bootstrap, run.topics.posts_raw, posts)
        run.start_worker()
        assert_indexed_once(run, [post_id for post_id, _ in posts])

        for topic in (run.topics.posts_raw, control):  # 3 s from arrival, on both
            alter_topic_configs(run.bootstrap, topic, {"retention.ms": "3000"})
        wait_until(lambda: deleted_by_retention(run.bootstrap, run.topics.posts_raw) == POSTS, 60,
                   "retention deleting the records 3 s after they arrived")
        time.sleep(5)  # five more retention checks
        assert deleted_by_retention(run.bootstrap, control) == 0  # stamped 2040: kept until then
    finally:
        run.cleanup()
