"""Poison records: isolated inside a batch, dead-lettered alone, never a held partition.

The Kafka topic here is a fake that records sends (or refuses them like a broker would):
these tests specify the batching logic; the integration tests in
tests/integration/test_pipeline.py check the same outcomes on a real broker.
"""

from __future__ import annotations

import asyncio
import hashlib
from collections.abc import Callable, Sequence
from types import SimpleNamespace

import pytest
from aiokafka.errors import KafkaTimeoutError, MessageSizeTooLargeError
from faust.exceptions import ProducerSendError
from faust.types.tuples import Message
from tritonclient.utils import InferenceServerException

from services import errors
from services.config import RetryPolicy
from services.dlq import Origin, is_complete
from services.limits import MAX_RAW_BYTES
from services.pb import messages_pb2 as pb
from services.retry import RetryGaveUp
from services.stream import delivery
from services.stream.delivery import (
    guarded,
    is_transient_kafka,
    output_or_dead_letter,
    send_dead_letters,
)
from services.stream.indexing import POSTS, bulk_items
from services.triton import BatchTimedOut, PosTaggerClient

FAST = RetryPolicy(initial=0.001, factor=2.0, max_delay=0.01, max_wait=0.2)


class FakeTopic:
    """Records what is sent; ``refuse(key, value)`` may return an error to raise."""

    def __init__(self, refuse: Callable[[bytes, bytes], Exception | None] = lambda k, v: None):
        self.refuse = refuse
        self.sent: list[tuple[bytes, bytes]] = []

    async def send(self, key: bytes, value: bytes,
                   headers: list[tuple[str, bytes]] | None = None) -> asyncio.Future[None]:
        error = self.refuse(key, value)
        if error is not None:
            raise error
        self.sent.append((key, value))
        done: asyncio.Future[None] = asyncio.get_running_loop().create_future()
        done.set_result(None)
        return done

    def letters(self) -> list[pb.DeadLetter]:
        return [pb.DeadLetter.FromString(v) for _, v in self.sent]


def events(n: int) -> list[SimpleNamespace]:
    out = []
    for offset in range(n):
        msg = Message("posts.raw", 0, offset, 0.0, 0, None, b"k%d" % offset, b"v", None)
        msg.incref()  # the stream's own reference
        out.append(SimpleNamespace(message=msg))
    return out


def test_a_poison_record_is_dead_lettered_alone_and_the_rest_is_handled() -> None:
    handled: list[int] = []
    calls = {"n": 0}

    async def handle(origins: Sequence[Origin]) -> None:
        calls["n"] += 1
        if any(o.offset == 11 for o in origins):
            raise ValueError("Platform has no value 7")  # what a bad enum once did
        handled.extend(o.offset for o in origins)

    dlq, batch = FakeTopic(), events(64)
    asyncio.run(guarded(batch, handle, dlq, FAST, "index_posts"))  # type: ignore[arg-type]
    assert sorted(handled) == [o for o in range(64) if o != 11]
    [letter] = dlq.letters()
    assert (letter.offset, letter.error_code) == (11, errors.INTERNAL_ERROR)
    assert "Platform has no value 7" in letter.reason
    assert calls["n"] <= 2 * 6 + 1  # halving: about 2·log2(64) calls, not 64
    assert all(e.message.refcount == 1 for e in batch)  # guarded takes no reference


def test_a_dead_letter_the_broker_refuses_is_resent_without_bytes_then_dropped() -> None:
    async def handle(origins: Sequence[Origin]) -> None:
        raise RuntimeError("bug")

    small_only = FakeTopic(lambda k, v: MessageSizeTooLargeError() if len(v) > 300 else None)
    asyncio.run(send_dead_letters(small_only, [  # type: ignore[arg-type]
        (Origin("t", 0, 1, b"k", b"x" * 1000), errors.INTERNAL_ERROR, "bug")], FAST, "t"))
    [letter] = small_only.letters()
    assert letter.original_value == b"" and letter.original_value_size == 1000
    assert not is_complete(letter)

    drops = delivery.COUNTS["dead_letter_drops"]
    refuses_all = FakeTopic(lambda k, v: ProducerSendError("x"))
    batch = events(3)
    asyncio.run(guarded(batch, handle, refuses_all, FAST, "t"))  # type: ignore[arg-type]
    assert delivery.COUNTS["dead_letter_drops"] == drops + 3
    assert all(e.message.refcount == 1 for e in batch)  # never a held batch


def test_outages_behind_fausts_wrapper_are_transient_and_oversize_is_not() -> None:
    def wrapped(cause: Exception) -> ProducerSendError:
        try:
            raise ProducerSendError(f"Error while sending: {cause!r}") from cause
        except ProducerSendError as exc:
            return exc

    assert is_transient_kafka(wrapped(KafkaTimeoutError()))
    assert not is_transient_kafka(wrapped(MessageSizeTooLargeError()))
    assert not is_transient_kafka(ProducerSendError("No transaction producer"))
    assert not is_transient_kafka(ValueError("bug"))


def test_a_huge_key_and_value_make_a_dead_letter_that_fits_the_topic() -> None:
    dlq = FakeTopic()
    origin = Origin("posts.raw", 2, 9, b"k" * 1_500_000, b"v" * (MAX_RAW_BYTES - 100))
    asyncio.run(send_dead_letters(dlq, [(origin, errors.INVALID, "key too long")],  # type: ignore[arg-type]
                                  FAST, "t"))
    [(key, value)] = dlq.sent
    assert len(key) + len(value) < MAX_RAW_BYTES - delivery.RECORD_OVERHEAD
    assert key == b"sha256:" + hashlib.sha256(origin.key).hexdigest().encode()
    letter = pb.DeadLetter.FromString(value)
    assert letter.original_key_size == 1_500_000 and len(letter.original_key) == 512
    assert letter.original_value_size == len(origin.value)
    assert letter.original_value_sha256 == hashlib.sha256(origin.value).hexdigest()
    assert "original_key cut to 512" in letter.reason and "original_value cut" in letter.reason


def test_an_output_over_the_record_limit_becomes_a_too_large_dead_letter() -> None:
    out, dlq = FakeTopic(), FakeTopic()
    origin = Origin("articles.raw", 0, 3, b"a1", b"article")
    fits = output_or_dead_letter(out, b"a1", b"x" * 100, origin, dlq, limit=2000)  # type: ignore[arg-type]
    over = output_or_dead_letter(out, b"a1", b"x" * 1000, origin, dlq, limit=2000)  # type: ignore[arg-type]
    assert fits.topic is out and fits.value == b"x" * 100
    assert over.topic is dlq
    letter = pb.DeadLetter.FromString(over.value)
    assert letter.error_code == errors.TOO_LARGE and "1002 bytes" in letter.reason


def test_a_tagged_post_the_document_cannot_take_is_rejected_alone_at_indexing() -> None:
    good = pb.TaggedPost(post=pb.Post(id="good", platform=pb.TWITTER, text="x"))
    bad = pb.TaggedPost(post=pb.Post(id="bad", platform=pb.TWITTER, text="x"))
    bad.post.platform = 7  # produced straight to posts.tagged by someone else's code
    origins = [Origin("posts.tagged", 0, i, m.post.id.encode(), m.SerializeToString())
               for i, m in enumerate([good, bad])]
    items, rejected = bulk_items(origins, "posts", POSTS)
    assert [i.doc_id for i in items] == ["good"]
    [(origin, rej)] = rejected
    assert origin.offset == 1 and rej.code == errors.INVALID and "7" in rej.reason


def test_a_batch_past_its_deadline_is_split_not_retried_forever() -> None:
    class SlowServer:
        async def infer(self, *args: object, **kwargs: object) -> None:
            raise InferenceServerException("Deadline Exceeded", "StatusCode.DEADLINE_EXCEEDED")

    async def call(n: int) -> None:
        client = PosTaggerClient("127.0.0.1:1", retry=FAST)
        client._client = SlowServer()  # type: ignore[assignment]
        await client.tag(["a post"] * n)

    with pytest.raises(BatchTimedOut):
        asyncio.run(call(8))  # the caller's ModelError path splits the batch
    with pytest.raises(RetryGaveUp):
        asyncio.run(call(1))  # one text: an outage, waited out (until max_wait here)
