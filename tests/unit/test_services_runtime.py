"""Retry policy, Triton output parsing, bulk bodies and classification, delivery helpers (no
servers)."""

from __future__ import annotations

import asyncio
import json
import logging
from pathlib import Path
from types import SimpleNamespace

import pytest
from faust.types.tuples import Message
from tritonclient.utils import InferenceServerException

from services import errors
from services.config import PipelineConfig, RetryPolicy, Topics
from services.dlq import Origin
from services.es.bulk import BulkItem, bulk_body, classify
from services.pb import messages_pb2 as pb
from services.retry import RetryGaveUp, retry_async
from services.stream.delivery import InOrder, guarded
from services.stream.stage import Item, split_valid, sub_batches
from services.stream.tag_posts import TagPosts
from services.triton import ModelError, is_transient, parse_hashtags_json, parse_tags_json

FAST = RetryPolicy(initial=0.001, factor=2.0, max_delay=0.01, max_wait=0.2)


def test_retry_recovers_after_transient_errors(caplog: pytest.LogCaptureFixture) -> None:
    calls = {"n": 0}

    async def flaky() -> str:
        calls["n"] += 1
        if calls["n"] < 3:
            raise ConnectionError("down")
        return "ok"

    with caplog.at_level(logging.WARNING):
        result = asyncio.run(retry_async(flaky, policy=FAST, is_transient=lambda e: True,
                                         what="flaky", log=logging.getLogger("t")))
    assert result == "ok" and calls["n"] == 3
    assert sum("retrying" in r.message for r in caplog.records) == 2  # early retries logged
    assert any("recovered after 3 attempts" in r.message for r in caplog.records)


def test_retry_gives_up_only_with_a_max_wait() -> None:
    async def down() -> None:
        raise ConnectionError("down")

    with pytest.raises(RetryGaveUp):
        asyncio.run(retry_async(down, policy=FAST, is_transient=lambda e: True,
                                what="down", log=logging.getLogger("t")))


def test_retry_reraises_permanent_errors_at_once() -> None:
    async def broken() -> None:
        raise ValueError("bad input")

    with pytest.raises(ValueError):
        asyncio.run(retry_async(broken, policy=FAST, is_transient=lambda e: False,
                                what="broken", log=logging.getLogger("t")))


def test_triton_transient_statuses() -> None:
    assert is_transient(InferenceServerException("x", status="StatusCode.UNAVAILABLE"))
    assert is_transient(InferenceServerException("unknown model", status="StatusCode.NOT_FOUND"))
    assert not is_transient(InferenceServerException("bad", status="StatusCode.INVALID_ARGUMENT"))
    assert is_transient(ConnectionRefusedError())


def test_parse_tags_json() -> None:
    res = parse_tags_json(b'{"tokens": [["hi", 0, 2, "UH", "!"]], "truncated": false}')
    assert res.tokens[0].text == "hi" and res.tokens[0].ark == "!" and not res.truncated
    with pytest.raises(ModelError):
        parse_tags_json(b'{"tokens": [["hi"]]}')


def test_parse_hashtags_json() -> None:
    res = parse_hashtags_json(
        '{"hashtags": [["大选", -0.5]], "lang": "zh", "status": "ok", "truncated": true}')
    assert res.hashtags == (("大选", -0.5),) and res.status == "ok" and res.truncated
    with pytest.raises(ModelError):
        parse_hashtags_json(b'{"hashtags": [["x", -1]]}')  # no status


def test_bulk_classification() -> None:
    items = [BulkItem("i", str(n), {}, n) for n in range(3)]
    response = {"items": [
        {"index": {"status": 201}},
        {"index": {"status": 429, "error": {"type": "es_rejected_execution_exception"}}},
        {"index": {"status": 400, "error": {"type": "mapper_parsing_exception"}}},
    ]}
    retry, failed = classify(response, items)
    assert [i.doc_id for i in retry] == ["1"]
    assert [(f.item.doc_id, f.status) for f in failed] == [("2", 400)]
    assert "mapper_parsing_exception" in failed[0].error


def test_bulk_body_is_an_index_action_then_the_source_per_line() -> None:
    items = [BulkItem("posts-2026.11", "a", {"text": "Zürich #1", "n": 2}),
             BulkItem("posts-undated", "b", {"tokens": []})]
    lines = bulk_body(items).decode("utf-8").split("\n")
    assert lines[-1] == ""  # NDJSON: every line ends with a newline
    assert [json.loads(line) for line in lines[:-1]] == [
        {"index": {"_index": "posts-2026.11", "_id": "a"}}, {"text": "Zürich #1", "n": 2},
        {"index": {"_index": "posts-undated", "_id": "b"}}, {"tokens": []}]


def test_split_valid_sorts_good_from_bad() -> None:
    good = pb.Post(id="a", platform=pb.TWITTER, text="x").SerializeToString()
    origins = [Origin("t", 0, n, b"k", v) for n, v in enumerate([good, b"\xff\xff", b""])]
    stage = TagPosts(PipelineConfig(), models=None)  # type: ignore[arg-type]
    items, failed = split_valid(stage, origins)
    assert [i.origin.offset for i in items] == [0]
    assert [(f.origin.offset, f.code) for f in failed] == [(1, errors.DECODE_ERROR),
                                                           (2, errors.INVALID)]


def test_sub_batches_respect_concurrency_and_order() -> None:
    items = [Item(Origin("t", 0, n, None, None), None) for n in range(64)]  # type: ignore[arg-type]
    chunks = sub_batches(items, 4)
    assert [len(c) for c in chunks] == [16, 16, 16, 16]
    assert [i.origin.offset for c in chunks for i in c] == list(range(64))
    assert len(sub_batches(items[:5], 4)) == 1  # tiny batches are not split
    assert sub_batches([], 4) == []


class FakeEvent:
    """A Faust event's ack path without a consumer: records when its final ack happens."""

    final_acks: list[int]

    def __init__(self, offset: int, final_acks: list[int]) -> None:
        self.message = Message("t", 0, offset, 0.0, 0, None, b"k", b"v", None)
        self.message.incref()  # the stream's own reference (the conductor's incref)
        self.final_acks = final_acks
        self.app = SimpleNamespace(sensors=SimpleNamespace(on_message_out=lambda *a: None))

    def ack(self) -> bool:
        final = self.message.ack(consumer=None)  # type: ignore[arg-type]
        if final:
            self.final_acks.append(self.message.offset)
        return final


def test_a_batch_becomes_committable_when_done_and_never_when_cancelled() -> None:
    acks: list[int] = []
    done, stuck = FakeEvent(1, acks), FakeEvent(2, acks)

    async def scenario() -> None:
        batches = InOrder(2)
        await batches.submit([done], lambda: asyncio.sleep(0))  # type: ignore[list-item]
        await batches.submit([stuck], lambda: asyncio.sleep(60))  # type: ignore[list-item]
        for event in (done, stuck):  # take_events acks each batch when the next is asked
            event.ack()
        await asyncio.sleep(0.01)
        await batches.cancel()  # the worker stops while the second batch waits

    asyncio.run(scenario())
    assert acks == [1]
    assert not stuck.message.acked and stuck.message.refcount == 1


def test_batches_finishing_out_of_order_are_released_in_the_order_taken() -> None:
    """Faust commits past a gap of unacked offsets, so a later batch that finishes first
    must wait for the ones before it (services/stream/delivery.py)."""
    acks: list[int] = []
    batches_taken = [[FakeEvent(10 * b + i, acks) for i in range(3)] for b in range(3)]
    delays = [0.06, 0.0, 0.03]

    async def scenario() -> None:
        batches = InOrder(3)
        for events, delay in zip(batches_taken, delays, strict=True):
            await batches.submit(events, lambda d=delay: asyncio.sleep(d))  # type: ignore[arg-type,misc]
            for event in events:
                event.ack()
        await asyncio.sleep(0.2)

    asyncio.run(scenario())
    assert acks == [0, 1, 2, 10, 11, 12, 20, 21, 22]


def test_no_more_than_the_limit_of_batches_run_at_once() -> None:
    running, peak = [0], [0]

    async def work() -> None:
        running[0] += 1
        peak[0] = max(peak[0], running[0])
        await asyncio.sleep(0.01)
        running[0] -= 1

    async def scenario() -> None:
        batches = InOrder(2)
        for offset in range(6):
            await batches.submit([FakeEvent(offset, [])], work)  # type: ignore[list-item]
        await asyncio.sleep(0.05)

    asyncio.run(scenario())
    assert peak[0] == 2


def test_guarded_lets_cancellation_through_so_the_batch_stays_held() -> None:
    async def stuck(origins: object) -> None:
        raise asyncio.CancelledError

    event = FakeEvent(5, [])
    with pytest.raises(asyncio.CancelledError):
        asyncio.run(guarded([event], stuck, None, FAST, "t"))  # type: ignore[list-item,arg-type]


def test_topic_prefix() -> None:
    assert Topics.with_prefix("x-").posts_raw_dlq == "x-posts.raw.dlq"
    cfg = PipelineConfig.from_env({"NLP_TOPIC_PREFIX": "t-", "NLP_INDEX_PREFIX": "T-Posts",
                                   "NLP_STREAM_WEB_PORT": "0", "NLP_RETRY_MAX_WAIT": "5"})
    assert cfg.topics.posts_tagged == "t-posts.tagged" and cfg.index_pattern == "t-posts-*"
    assert cfg.web_port is None and cfg.retry.max_wait == 5.0


def test_the_workers_producer_lingers_and_batches_as_configured(tmp_path: Path) -> None:
    from services.stream.app import create_app

    cfg = PipelineConfig.from_env({"NLP_STATE_DIR": str(tmp_path)})
    assert (cfg.producer_linger_ms, cfg.producer_batch_bytes) == (5.0, 262144)
    cfg = PipelineConfig.from_env({"NLP_STATE_DIR": str(tmp_path),
                                   "NLP_PRODUCER_LINGER_MS": "0",
                                   "NLP_PRODUCER_BATCH_BYTES": "65536"})
    app = create_app(cfg)
    assert app.conf.producer_linger == 0.0 and app.conf.producer_max_batch_size == 65536


def test_the_workers_consumer_fetches_within_100_ms_and_polls_an_eighth_of_the_buffer(
        tmp_path: Path) -> None:
    from services.stream import transport
    from services.stream.app import create_app

    app = create_app(PipelineConfig.from_env({"NLP_STATE_DIR": str(tmp_path)}))
    assert isinstance(app.transport, transport.Transport)
    assert app.conf.broker_max_poll_records * 8 == app.conf.stream_buffer_maxsize

    async def fetch_waits() -> tuple[int, int]:  # aiokafka makes consumers in a running loop
        import aiokafka

        # where aiokafka keeps the value its fetcher is made with (what the transport sets)
        plain = aiokafka.AIOKafkaConsumer(fetch_max_wait_ms=7)._fetch_max_wait_ms
        ours = app.consumer._thread._create_worker_consumer(app.transport)._fetch_max_wait_ms
        return plain, ours

    assert asyncio.run(fetch_waits()) == (7, transport.FETCH_MAX_WAIT_MS)
    assert transport.FETCH_MAX_WAIT_MS == 100


def test_web_server_disabled_means_without_web() -> None:
    from services.stream.__main__ import worker_argv

    assert worker_argv(["x", "worker", "-l", "info"], None)[-1] == "--without-web"
    assert worker_argv(["x", "worker"], 6066) == ["x", "worker"]
    assert worker_argv(["x", "worker", "--with-web"], None) == ["x", "worker", "--with-web"]


def test_the_worker_loop_is_uvloop_unless_faust_loop_names_another(
        monkeypatch: pytest.MonkeyPatch) -> None:
    from services.stream.__main__ import event_loop

    monkeypatch.delenv("FAUST_LOOP", raising=False)
    assert event_loop() == "uvloop"
    monkeypatch.setenv("FAUST_LOOP", "aio")
    assert event_loop() == "aio"


def test_a_long_outage_is_logged_at_its_start_then_every_tenth_attempt(
    caplog: pytest.LogCaptureFixture,
) -> None:
    calls = {"n": 0}

    async def down_for_25_attempts() -> str:
        calls["n"] += 1
        if calls["n"] <= 25:
            raise ConnectionError("down")
        return "ok"

    policy = RetryPolicy(initial=0.0001, factor=1.0, max_delay=0.0001)
    with caplog.at_level(logging.WARNING):
        asyncio.run(retry_async(down_for_25_attempts, policy=policy,
                                is_transient=lambda e: True, what="x",
                                log=logging.getLogger("t")))
    attempts = [r.args[1] for r in caplog.records if "retrying" in r.getMessage()]
    assert attempts == [1, 2, 3, 10, 20]
