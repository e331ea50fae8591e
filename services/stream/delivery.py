"""What every agent shares: message origins, publishing with delivery, failure isolation.

Offsets and acks (at-least-once): ``stream.take_events`` acks the events of a batch when
the agent asks for the next batch, i.e. after the batch body returned. The body therefore
returns only after every downstream write (Kafka delivery, Elasticsearch bulk) succeeded.
That alone is not enough: when the worker stops (or the stream is stopped for any other
reason) Faust closes the ``take_events`` generator while the agent is still inside the
batch, and the generator's cleanup acks the whole batch -- observed in the integration
test ``test_stop_during_outage_loses_nothing``: offsets of a batch still waiting for
Triton were committed on SIGTERM, and those posts were lost. So ``InOrder`` holds one
extra reference on every message of the batch while it runs and drops it only when the
batch is done; a cleanup ack of an unfinished batch is then never the final ack, its
offsets stay uncommitted and the batch is redelivered (harmless: downstream writes are
idempotent by key / ``_id``).

Several batches in flight (``InOrder``): while one batch waits for Triton, the agent takes
and starts the next ones, but releases them strictly in the order they were taken. Faust
commits the first run of consecutive acked offsets of a partition and checks that the run
starts at the committed offset only when one was committed before and by "more than one"
(faust-streaming 0.15.3, ``Consumer._new_offset``): acks out of order commit past a batch
still in flight, and a stop then loses it -- observed with four Faust actors per agent,
``test_restart_mid_stream_indexes_each_post_exactly_once`` lost posts in CI. One actor
releasing in order never leaves a gap behind an acked offset.

Poison messages (a record that makes the batch body raise: a bug, an output the broker
refuses) must neither stall the partition nor take good messages with them. ``guarded``
therefore splits a failing batch in halves until the failing records stand alone, and
dead-letters only those (``INTERNAL_ERROR``); a batch with one poison record costs about
2·log2(n) extra calls. A dead letter the broker refuses for good is resent without the
original bytes, and if even that fails it is logged and counted as dropped: a dead
letter's copy is never worth a held partition. Outages (transient errors, including the
ones Faust wraps in ``ProducerSendError``) are waited out, never dead-lettered.
"""

from __future__ import annotations

import asyncio
import logging
from collections import Counter
from collections.abc import Awaitable, Callable, Sequence
from dataclasses import dataclass
from datetime import UTC, datetime

import faust
from aiokafka.errors import KafkaError, MessageSizeTooLargeError
from faust.types import EventT

from services import errors
from services.config import RetryPolicy
from services.dlq import Origin, dead_letter, record_key
from services.limits import MAX_DLQ_VALUE_BYTES, MAX_RAW_BYTES
from services.retry import RetryGaveUp, retry_async
from services.stream.metrics import DEAD_LETTERS

log = logging.getLogger(__name__)

#: Per-record bytes a Kafka record batch adds beyond key and value (headers, offsets,
#: varints); generous, so a record that passes the check is never refused for size.
RECORD_OVERHEAD = 1024
#: Counters since the worker started: ``dead_letters.<CODE>`` and ``dead_letter_drops``
#: (served by the worker's ``/health/`` page).
COUNTS: Counter[str] = Counter()


#: The header that carries, on an enriched record, when its input reached the broker (ms
#: since the epoch). Every topic stamps records with their arrival (LogAppendTime,
#: services/kafka_topics.py), so an output record's own timestamp is when *it* was written;
#: the indexer reads this header to measure from the input's arrival (``nlp_end_to_end_seconds``).
ARRIVED_HEADER = "nlp-arrived-ms"


@dataclass(frozen=True)
class Outgoing:
    """A record to produce: raw key and value bytes for a raw-serialized topic."""

    topic: faust.TopicT
    key: bytes
    value: bytes
    #: when the input behind it reached the broker (seconds), sent as ``ARRIVED_HEADER``
    arrived: float | None = None

    def headers(self) -> list[tuple[str, bytes]] | None:
        if self.arrived is None:
            return None
        return [(ARRIVED_HEADER, str(round(self.arrived * 1000)).encode())]


def origin_of(event: EventT) -> Origin:
    """The Kafka coordinates and exact bytes of the record behind ``event``, and when its
    input arrived: the ``ARRIVED_HEADER`` if it has one, else its own timestamp."""
    msg = event.message
    return Origin(msg.topic, msg.partition, msg.offset, msg.key, msg.value,
                  arrived_from_header(msg.headers) or msg.timestamp)


def arrived_from_header(headers: object) -> float | None:
    """``ARRIVED_HEADER`` in seconds, from Faust's headers (a mapping or (key, value) pairs);
    None if absent or not a number."""
    pairs = headers.items() if isinstance(headers, dict) else headers or ()
    for key, value in pairs:  # type: ignore[union-attr]
        if key == ARRIVED_HEADER:
            try:
                return int(value) / 1000
            except (TypeError, ValueError):
                return None
    return None


def now_utc() -> datetime:
    return datetime.now(UTC)


def dlq_record(dlq: faust.TopicT, origin: Origin, code: str, reason: str,
               max_value_bytes: int = MAX_DLQ_VALUE_BYTES) -> Outgoing:
    """The dead letter for ``origin`` (cut to fit the topic), counted by code."""
    letter = dead_letter(origin, code, reason, now_utc(), max_value_bytes=max_value_bytes)
    COUNTS[f"dead_letters.{code}"] += 1
    DEAD_LETTERS.labels(code).inc()
    return Outgoing(dlq, record_key(origin.key), letter.SerializeToString())


def output_or_dead_letter(out: faust.TopicT, key: bytes, value: bytes, origin: Origin,
                          dlq: faust.TopicT, limit: int = MAX_RAW_BYTES) -> Outgoing:
    """The output record, or a ``TOO_LARGE`` dead letter if the broker would refuse it
    (enrichment can make a record near the limit grow past it). The output keeps the
    input's arrival (``ARRIVED_HEADER``), so the indexer can tell how long ago the input
    arrived (``nlp_end_to_end_seconds``)."""
    size = len(key) + len(value)
    if size + RECORD_OVERHEAD <= limit:
        return Outgoing(out, key, value, origin.arrived)
    return dlq_record(dlq, origin, errors.TOO_LARGE,
                      f"the output record would be {size} bytes; the limit is {limit}")


def causes(exc: BaseException) -> list[BaseException]:
    """``exc`` and what it was raised from (Faust wraps aiokafka's errors)."""
    chain: list[BaseException] = []
    while exc is not None and exc not in chain:
        chain.append(exc)
        exc = exc.__cause__ or exc.__context__
    return chain


def is_transient_kafka(exc: BaseException) -> bool:
    """Broker unavailable, leader moving, timeouts: worth retrying; oversize is not.

    Looks through wrappers: Faust raises ``ProducerSendError`` from aiokafka's errors,
    and a wrapped ``KafkaTimeoutError`` (metadata wait during an outage) is an outage."""
    chain = causes(exc)
    if any(isinstance(e, MessageSizeTooLargeError) for e in chain):
        return False
    return any(isinstance(e, KafkaError | OSError | TimeoutError) for e in chain)


async def publish(records: Sequence[Outgoing], policy: RetryPolicy, what: str) -> None:
    """Produce ``records`` and wait until the broker acknowledged every one (acks=all).

    On a transient error the whole set is resent; downstream consumers are idempotent by
    key/``_id``, so a duplicate record is harmless while a missing one is not.
    """
    if not records:
        return

    async def attempt() -> None:
        pending = [await r.topic.send(key=r.key, value=r.value, headers=r.headers())
                   for r in records]
        await asyncio.gather(*pending)

    await retry_async(attempt, policy=policy, is_transient=is_transient_kafka,
                      what=f"publish {len(records)} records ({what})", log=log)


def hold(events: Sequence[EventT]) -> None:
    """One extra reference per message: no ack by anyone else can be the final one."""
    for event in events:
        event.message.incref()


def release(events: Sequence[EventT]) -> None:
    """Drop ``hold``'s reference: the batch is done. Whichever of this and the stream's
    own ack comes last is the final ack that makes the offset committable."""
    for event in events:
        message = event.message
        if event.ack():  # the final ack: tell the sensors, as ``Stream.ack`` would
            event.app.sensors.on_message_out(message.tp, message.offset, message)


async def guarded(
    events: Sequence[EventT],
    handle: Callable[[Sequence[Origin]], Awaitable[None]],
    dlq: faust.TopicT,
    policy: RetryPolicy,
    what: str,
) -> None:
    """Run ``handle`` on one batch; never crash the agent, never let one bad record hold
    or dead-letter the others. Run it through ``InOrder``, which holds the batch's offsets
    until it is done."""
    try:
        await isolate([origin_of(e) for e in events], handle, dlq, policy, what)
    except asyncio.CancelledError:
        log.warning("%s: cancelled mid-batch; %d messages stay uncommitted for redelivery",
                    what, len(events))
        raise


class InOrder:
    """Run up to ``limit`` batches at once; release each batch's messages only after every
    batch taken before it was released (see the module docstring for why)."""

    def __init__(self, limit: int) -> None:
        self._slots = asyncio.Semaphore(max(1, limit))
        self._tasks: set[asyncio.Task[None]] = set()
        self._last: asyncio.Task[None] | None = None

    async def submit(self, events: Sequence[EventT],
                     work: Callable[[], Awaitable[None]]) -> None:
        """Start ``work`` for ``events`` once a slot is free; re-raise a failed batch's
        error here, in the agent (``guarded`` work raises only when cancelled)."""
        await self._slots.acquire()
        for task in [t for t in self._tasks if t.done()]:
            self._tasks.discard(task)
            task.result()
        hold(events)
        task = asyncio.create_task(self._run(events, work, self._last))
        self._tasks.add(task)
        self._last = task

    async def _run(self, events: Sequence[EventT], work: Callable[[], Awaitable[None]],
                   previous: asyncio.Task[None] | None) -> None:
        try:
            await work()
            if previous is not None:
                await previous  # raises if it was cancelled or failed: we stay held too
            release(events)
        finally:
            self._slots.release()

    async def cancel(self) -> None:
        """Stop every unfinished batch; its messages stay held, uncommitted, redelivered."""
        for task in self._tasks:
            task.cancel()
        await asyncio.gather(*self._tasks, return_exceptions=True)
        self._tasks.clear()


async def consume_batches(
    stream: faust.StreamT,
    batch_size: int,
    within: float,
    in_flight: int,
    handle: Callable[[Sequence[Origin]], Awaitable[None]],
    dlq: faust.TopicT,
    policy: RetryPolicy,
    what: str,
) -> None:
    """The loop every agent runs: batches of up to ``batch_size`` records (or what came
    within ``within`` seconds), ``in_flight`` at once, each ``guarded``, released in order."""
    batches = InOrder(in_flight)
    try:
        async for events in stream.take_events(batch_size, within=within):
            await batches.submit(
                events, lambda events=events: guarded(events, handle, dlq, policy, what))
    finally:
        await batches.cancel()


async def isolate(
    origins: Sequence[Origin],
    handle: Callable[[Sequence[Origin]], Awaitable[None]],
    dlq: faust.TopicT,
    policy: RetryPolicy,
    what: str,
) -> None:
    """``handle(origins)``; on an unexpected error, halves until the failing records are
    alone, then dead-letter just those. Halves already handled may be handled again by
    a redelivery: harmless, every write is idempotent."""
    try:
        await handle(origins)
        return
    except asyncio.CancelledError:
        raise
    except RetryGaveUp as exc:  # a finite RetryPolicy.max_wait (tests): no point splitting
        log.error("%s: gave up on a batch of %d: %s", what, len(origins), exc)
        await send_dead_letters(dlq, [(o, errors.UNAVAILABLE, str(exc)) for o in origins],
                                policy, what)
        return
    except Exception as exc:
        if len(origins) == 1:
            log.exception("%s: record %s/%d@%d fails on its own; dead-lettering it", what,
                          origins[0].topic, origins[0].partition, origins[0].offset)
            reason = f"{what} failed: {type(exc).__name__}: {exc}"
            await send_dead_letters(dlq, [(origins[0], errors.INTERNAL_ERROR, reason)],
                                    policy, what)
            return
        log.warning("%s: a batch of %d failed (%s: %s); splitting it to isolate the cause",
                    what, len(origins), type(exc).__name__, str(exc)[:300])
    middle = len(origins) // 2
    await isolate(origins[:middle], handle, dlq, policy, what)
    await isolate(origins[middle:], handle, dlq, policy, what)


async def send_dead_letters(
    dlq: faust.TopicT,
    letters: Sequence[tuple[Origin, str, str]],
    policy: RetryPolicy,
    what: str,
) -> None:
    """Deliver (origin, code, reason) dead letters one by one. Outages are waited out; a
    letter the broker refuses is resent without the original bytes, then dropped (logged,
    counted in ``COUNTS["dead_letter_drops"]``) -- never raised while a batch is held."""
    for origin, code, reason in letters:
        for max_value_bytes in (MAX_DLQ_VALUE_BYTES, 0):
            record = dlq_record(dlq, origin, code, reason, max_value_bytes=max_value_bytes)
            try:
                await publish([record], policy, f"{what} dead letter")
                break
            except Exception as exc:  # not transient: publish waited out the others
                log.error("%s: the broker refused a dead letter of %d bytes for %s/%d@%d: "
                          "%s", what, len(record.value), origin.topic, origin.partition,
                          origin.offset, exc)
        else:
            COUNTS["dead_letter_drops"] += 1
            log.error("%s: dropped the dead letter of %s/%d@%d (%s: %s)", what, origin.topic,
                      origin.partition, origin.offset, code, reason[:300])
