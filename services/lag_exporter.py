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
- ``nlp_kafka_up``: 1 when the broker answered this scrape, else 0 (and no other series).
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

from services.settings import Settings

log = logging.getLogger("lag_exporter")


class LagCollector(Collector):
    """Reads offsets from the broker on each ``collect`` (one scrape)."""

    def __init__(self, bootstrap: str, timeout_ms: int = 3000) -> None:
        self.bootstrap = bootstrap
        self.timeout_ms = timeout_ms
        self._admin: KafkaAdminClient | None = None
        self._consumer: KafkaConsumer | None = None

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

    def collect(self) -> Iterator[GaugeMetricFamily]:
        up = GaugeMetricFamily("nlp_kafka_up", "1 when the broker answered this scrape")
        try:
            ends, committed = self.offsets()
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
