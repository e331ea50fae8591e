"""Consumer lag per group and topic, and the end offset of every topic, for Prometheus.

    python -m services.lag_exporter [--bootstrap HOST:PORT] [--host H] [--port P]

Why a process of its own: lag matters most when every worker is dead or stalled, and a
gauge the workers exported would vanish with them. Each scrape asks the broker afresh
(committed offsets of every consumer group, end offsets of every partition; two or three
small requests), so the numbers are never older than the scrape. Served metrics:

- ``nlp_consumer_lag{group,topic}``: end offset minus committed offset, summed over the
  topic's partitions (a partition without a committed offset counts from its start);
- ``nlp_consumer_committed_offset{group,topic}``: the group's committed offsets, summed
  (unchanged for minutes while the lag is above 0: the group is stalled);
- ``nlp_topic_end_offset{topic}``: records ever written to the topic (``rate()`` of a
  ``.dlq`` topic is its dead-letter rate, seen from the broker's side);
- ``nlp_consumer_oldest_unread_age_seconds{group,topic}``: how long ago the group's
  oldest unread record arrived (the timestamp of the record at its committed offset, the
  broker's append time; 0 when it has read everything). Retention deletes records by that
  age, read or not: ``UnreadRecordsNearRetention`` compares the two;
- ``nlp_topic_retention_seconds{topic}``: the ``retention.ms`` in force (none for a topic
  kept forever);
- ``nlp_kafka_up``: 1 when the broker answered this scrape, else 0 (and no other series).

The age costs one small fetch per lagging partition whose committed offset moved since the
last scrape (the timestamp at an offset never changes, so it is remembered).
"""

from __future__ import annotations

import argparse
import logging
import time
from collections import defaultdict
from collections.abc import Iterator

from kafka import KafkaAdminClient, KafkaConsumer, TopicPartition
from prometheus_client.core import REGISTRY, GaugeMetricFamily
from prometheus_client.registry import Collector

from services.kafka_topics import configs_in_force
from services.settings import Settings

log = logging.getLogger("lag_exporter")


class LagCollector(Collector):
    """Reads offsets from the broker on each ``collect`` (one scrape)."""

    def __init__(self, bootstrap: str, timeout_ms: int = 3000) -> None:
        self.bootstrap = bootstrap
        self.timeout_ms = timeout_ms
        self._admin: KafkaAdminClient | None = None
        self._consumer: KafkaConsumer | None = None
        #: (partition, offset) -> the record's timestamp, for the offsets of the last scrape
        self._arrivals: dict[tuple[TopicPartition, int], float] = {}

    def _clients(self) -> tuple[KafkaAdminClient, KafkaConsumer]:
        if self._admin is None or self._consumer is None:
            opts = dict(bootstrap_servers=self.bootstrap, request_timeout_ms=self.timeout_ms,
                        client_id="nlp-lag-exporter")
            self._admin = KafkaAdminClient(**opts)
            self._consumer = KafkaConsumer(**opts, enable_auto_commit=False)
        return self._admin, self._consumer

    def _reset(self) -> None:
        for client in (self._admin, self._consumer):
            try:
                if client is not None:
                    client.close()
            except Exception:  # closing a broken client must not hide the scrape
                pass
        self._admin = self._consumer = None

    def offsets(self) -> tuple[dict[TopicPartition, int], dict[str, dict[TopicPartition, int]]]:
        """End offsets of every partition, and each consumer group's committed offsets."""
        admin, consumer = self._clients()
        partitions = [TopicPartition(topic, p) for topic in consumer.topics()
                      for p in sorted(consumer.partitions_for_topic(topic) or ())]
        ends = consumer.end_offsets(partitions) if partitions else {}
        committed = {}
        for group, _protocol in admin.list_consumer_groups():
            offsets = admin.list_consumer_group_offsets(group)
            committed[group] = {tp: meta.offset for tp, meta in offsets.items()
                                if meta.offset >= 0}
        return ends, committed

    def oldest_unread(self, ends: dict[TopicPartition, int],
                      committed: dict[str, dict[TopicPartition, int]]) -> dict[
                          tuple[str, str], float | None]:
        """(group, topic) -> when its oldest unread record arrived (Unix seconds), None when
        it has read everything (or no record came back)."""
        _, consumer = self._clients()
        starts = consumer.beginning_offsets(list(ends)) if ends else {}
        unread = first_unread(ends, starts, committed)
        wanted = {position for positions in unread.values() for position in positions}
        self._arrivals = {p: t for p, t in self._arrivals.items() if p in wanted}
        for tp, offset in sorted(wanted - self._arrivals.keys()):
            arrived = self._arrival(tp, offset)
            if arrived is not None:
                self._arrivals[(tp, offset)] = arrived
        return {key: min((self._arrivals[p] for p in positions if p in self._arrivals),
                         default=None)
                for key, positions in unread.items()}

    def _arrival(self, tp: TopicPartition, offset: int) -> float | None:
        """The timestamp (seconds) of the first record at or after ``offset``; None if none
        came back in time or it carries no timestamp."""
        _, consumer = self._clients()
        consumer.assign([tp])
        consumer.seek(tp, offset)
        for record in consumer.poll(timeout_ms=self.timeout_ms, max_records=1).get(tp, []):
            if record.timestamp > 0:
                return record.timestamp / 1000
        return None

    def retention(self, topics: set[str]) -> dict[str, float]:
        """Topic -> its retention in seconds (topics kept forever are left out)."""
        admin, _ = self._clients()
        if not topics:
            return {}
        in_force = configs_in_force(admin, sorted(topics), "retention.ms")
        return {topic: int(ms) / 1000 for topic, ms in in_force.items() if int(ms) >= 0}

    def collect(self) -> Iterator[GaugeMetricFamily]:
        up = GaugeMetricFamily("nlp_kafka_up", "1 when the broker answered this scrape")
        try:
            ends, committed = self.offsets()
            oldest = self.oldest_unread(ends, committed)
            retention = self.retention({tp.topic for tp in ends})
        except Exception as exc:  # broker down or refusing: say so, serve no stale numbers
            log.warning("broker did not answer: %s", exc)
            self._reset()
            up.add_metric([], 0)
            yield up
            return
        up.add_metric([], 1)
        yield up
        yield end_offsets(ends)
        yield lags(ends, committed)
        yield committed_offsets(committed)
        yield unread_ages(oldest, time.time())
        yield retention_seconds(retention)


def end_offsets(ends: dict[TopicPartition, int]) -> GaugeMetricFamily:
    family = GaugeMetricFamily("nlp_topic_end_offset", "Records ever written to the topic "
                               "(sum of its partitions' end offsets)", labels=["topic"])
    per_topic: dict[str, int] = defaultdict(int)
    for tp, end in ends.items():
        per_topic[tp.topic] += end
    for topic, total in sorted(per_topic.items()):
        family.add_metric([topic], total)
    return family


def lags(ends: dict[TopicPartition, int],
         committed: dict[str, dict[TopicPartition, int]]) -> GaugeMetricFamily:
    """Lag per (group, topic) for every topic a group has committed on."""
    family = GaugeMetricFamily("nlp_consumer_lag", "Records written and not yet committed "
                               "by the consumer group", labels=["group", "topic"])
    for group, offsets in sorted(committed.items()):
        topics = {tp.topic for tp in offsets}
        per_topic: dict[str, int] = defaultdict(int)
        for tp, end in ends.items():
            if tp.topic in topics:
                per_topic[tp.topic] += max(0, end - offsets.get(tp, 0))
        for topic, lag in sorted(per_topic.items()):
            family.add_metric([group, topic], lag)
    return family


def committed_offsets(committed: dict[str, dict[TopicPartition, int]]) -> GaugeMetricFamily:
    family = GaugeMetricFamily("nlp_consumer_committed_offset", "The consumer group's "
                               "committed offsets, summed over the topic's partitions",
                               labels=["group", "topic"])
    for group, offsets in sorted(committed.items()):
        per_topic: dict[str, int] = defaultdict(int)
        for tp, offset in offsets.items():
            per_topic[tp.topic] += offset
        for topic, total in sorted(per_topic.items()):
            family.add_metric([group, topic], total)
    return family


def first_unread(ends: dict[TopicPartition, int], starts: dict[TopicPartition, int],
                 committed: dict[str, dict[TopicPartition, int]]) -> dict[
                     tuple[str, str], list[tuple[TopicPartition, int]]]:
    """(group, topic) -> (partition, first unread offset) of each partition with unread
    records, for every topic the group has committed on ([] when it has read everything).
    Unread begins at the committed offset, or at the partition's start where the group never
    committed or retention already deleted what it had not read."""
    unread: dict[tuple[str, str], list[tuple[TopicPartition, int]]] = {}
    for group, offsets in sorted(committed.items()):
        topics = {tp.topic for tp in offsets}
        for tp, end in sorted(ends.items()):
            if tp.topic in topics:
                first = max(offsets.get(tp, 0), starts.get(tp, 0))
                positions = unread.setdefault((group, tp.topic), [])
                if first < end:
                    positions.append((tp, first))
    return unread


def unread_ages(oldest: dict[tuple[str, str], float | None], now: float) -> GaugeMetricFamily:
    family = GaugeMetricFamily("nlp_consumer_oldest_unread_age_seconds", "How long ago the "
                               "consumer group's oldest unread record arrived (0: all read)",
                               labels=["group", "topic"])
    for (group, topic), arrived in sorted(oldest.items()):
        family.add_metric([group, topic], 0.0 if arrived is None else max(0.0, now - arrived))
    return family


def retention_seconds(retention: dict[str, float]) -> GaugeMetricFamily:
    family = GaugeMetricFamily("nlp_topic_retention_seconds", "The topic's retention.ms in "
                               "force, in seconds", labels=["topic"])
    for topic, seconds in sorted(retention.items()):
        family.add_metric([topic], seconds)
    return family


def main(argv: list[str] | None = None) -> int:
    s = Settings.from_env()
    p = argparse.ArgumentParser(prog="python -m services.lag_exporter", description=__doc__,
                                formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("--bootstrap", default=s.kafka_bootstrap, help="Kafka (default %(default)s)")
    p.add_argument("--host", default=s.host, help="bind address (default %(default)s)")
    p.add_argument("--port", type=int, default=s.lag_exporter_port,
                   help="metrics port (default %(default)s)")
    args = p.parse_args(argv)
    logging.basicConfig(level=logging.INFO, format="%(asctime)s %(name)s %(message)s")
    from prometheus_client import start_http_server

    REGISTRY.register(LagCollector(args.bootstrap))
    start_http_server(args.port, addr=args.host)
    log.info("serving http://%s:%d/metrics for Kafka %s", args.host, args.port, args.bootstrap)
    while True:
        time.sleep(3600)


if __name__ == "__main__":
    raise SystemExit(main())
