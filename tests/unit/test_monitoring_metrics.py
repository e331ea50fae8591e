"""What the alert rules read: the lag exporter's arithmetic and the worker's counters."""

from __future__ import annotations

from kafka import TopicPartition
from prometheus_client import REGISTRY

from services import errors
from services.dlq import Origin
from services.es.bulk import BulkItem, ItemFailure
from services.lag_exporter import (
    committed_offsets,
    end_offsets,
    first_unread,
    lags,
    retention_seconds,
    unread_ages,
)
from services.stream.delivery import ARRIVED_HEADER, arrived_from_header, output_or_dead_letter
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


def test_unread_begins_at_the_committed_offset_or_where_retention_left_the_partition() -> None:
    starts = {RAW0: 0, RAW1: 20, TAGGED0: 0}
    committed = {"pipeline": {RAW0: 90, RAW1: 10}, "indexer": {TAGGED0: 30}}
    assert first_unread(ENDS, starts, committed) == {
        ("pipeline", "posts.raw"): [(RAW0, 90), (RAW1, 20)],  # 10..19 deleted unread
        ("indexer", "posts.tagged"): [],  # read to the end
    }


def test_a_partition_the_group_never_committed_on_is_unread_from_its_start() -> None:
    assert first_unread(ENDS, {}, {"pipeline": {RAW0: 100}}) == {
        ("pipeline", "posts.raw"): [(RAW1, 0)]}


def test_the_oldest_unread_age_is_zero_when_all_is_read() -> None:
    ages = unread_ages({("g", "posts.raw"): 1000.0, ("g", "posts.tagged"): None}, now=1060.0)
    assert samples(ages) == {("g", "posts.raw"): 60.0, ("g", "posts.tagged"): 0.0}


def test_retention_is_exported_in_seconds() -> None:
    assert samples(retention_seconds({"posts.raw": 86400.0})) == {("posts.raw",): 86400.0}


def test_every_dead_letter_code_is_exported_from_the_start() -> None:
    for code in errors.CODES:
        assert REGISTRY.get_sample_value("nlp_dead_letters_total", {"code": code}) is not None


class Topic:
    name = "out"


def test_an_output_record_carries_its_inputs_arrival_as_a_header() -> None:
    origin = Origin("posts.raw", 0, 7, b"k", b"v", arrived=1_700_000_000.5)
    record = output_or_dead_letter(Topic(), b"k", b"value", origin, Topic())  # type: ignore[arg-type]
    assert record.headers() == [(ARRIVED_HEADER, b"1700000000500")]
    assert arrived_from_header(record.headers()) == 1_700_000_000.5


def test_a_record_without_the_header_arrived_when_the_broker_stamped_it() -> None:
    assert arrived_from_header([("other", b"1")]) is None
    assert arrived_from_header(None) is None
    assert arrived_from_header({ARRIVED_HEADER: b"not a number"}) is None
    assert arrived_from_header({ARRIVED_HEADER: b"2000"}) == 2.0


def test_indexed_documents_are_counted_with_their_delay_and_failures_are_not() -> None:
    def value(name: str, **labels: str) -> float:
        return REGISTRY.get_sample_value(name, labels) or 0.0

    before = value("nlp_end_to_end_seconds_count", kind="unit")
    done = value("nlp_stream_records_total", agent="index_unit", outcome="done")
    origins = [Origin("t", 0, n, b"k", b"v", arrived=1.0) for n in range(3)]
    items = [BulkItem("i", f"d{n}", {}, n) for n in range(3)]
    record_indexed("unit", origins, items, [ItemFailure(items[2], 400, "mapping")])
    assert value("nlp_end_to_end_seconds_count", kind="unit") == before + 2
    assert value("nlp_stream_records_total", agent="index_unit", outcome="done") == done + 2
    assert value("nlp_stream_records_total", agent="index_unit",
                 outcome="dead_lettered") >= 1
