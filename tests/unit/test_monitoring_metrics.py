"""What the alert rules read: the lag exporter's arithmetic and the worker's counters."""

from __future__ import annotations

from kafka import TopicPartition
from prometheus_client import REGISTRY

from services import errors
from services.dlq import Origin
from services.es.bulk import BulkItem, ItemFailure
from services.lag_exporter import committed_offsets, end_offsets, lags
from services.stream.delivery import output_or_dead_letter
from services.stream.indexing import record_indexed


def samples(family) -> dict[tuple[str, ...], float]:  # type: ignore[no-untyped-def]
    return {tuple(s.labels.values()): s.value for s in family.samples}


RAW0, RAW1, TAGGED0 = (TopicPartition("posts.raw", 0), TopicPartition("posts.raw", 1),
                       TopicPartition("posts.tagged", 0))
ENDS = {RAW0: 100, RAW1: 50, TAGGED0: 30}


def test_lag_sums_partitions_and_counts_an_uncommitted_partition_from_its_start() -> None:
    committed = {"pipeline": {RAW0: 90}}
    assert samples(lags(ENDS, committed)) == {("pipeline", "posts.raw"): 10 + 50}


def test_a_group_has_lag_only_on_the_topics_it_consumes() -> None:
    committed = {"pipeline": {RAW0: 100, RAW1: 50}, "indexer": {TAGGED0: 10}}
    assert samples(lags(ENDS, committed)) == {("indexer", "posts.tagged"): 20,
                                              ("pipeline", "posts.raw"): 0}
    assert samples(committed_offsets(committed)) == {("indexer", "posts.tagged"): 10,
                                                     ("pipeline", "posts.raw"): 150}


def test_end_offsets_are_per_topic() -> None:
    assert samples(end_offsets(ENDS)) == {("posts.raw",): 150, ("posts.tagged",): 30}


def test_every_dead_letter_code_is_exported_from_the_start() -> None:
    for code in errors.CODES:
        assert REGISTRY.get_sample_value("nlp_dead_letters_total", {"code": code}) is not None


class Topic:
    name = "out"


def test_an_output_record_keeps_its_inputs_kafka_timestamp() -> None:
    origin = Origin("posts.raw", 0, 7, b"k", b"v", timestamp=1_700_000_000.5)
    record = output_or_dead_letter(Topic(), b"k", b"value", origin, Topic())  # type: ignore[arg-type]
    assert record.timestamp == 1_700_000_000.5


def test_indexed_documents_are_counted_with_their_delay_and_failures_are_not() -> None:
    def value(name: str, **labels: str) -> float:
        return REGISTRY.get_sample_value(name, labels) or 0.0

    before = value("nlp_end_to_end_seconds_count", kind="unit")
    done = value("nlp_stream_records_total", agent="index_unit", outcome="done")
    origins = [Origin("t", 0, n, b"k", b"v", timestamp=1.0) for n in range(3)]
    items = [BulkItem("i", f"d{n}", {}, n) for n in range(3)]
    record_indexed("unit", origins, items, [ItemFailure(items[2], 400, "mapping")])
    assert value("nlp_end_to_end_seconds_count", kind="unit") == before + 2
    assert value("nlp_stream_records_total", agent="index_unit", outcome="done") == done + 2
    assert value("nlp_stream_records_total", agent="index_unit",
                 outcome="dead_lettered") >= 1
