"""What both agents share: message origins, publishing with delivery, failure guard.

Offsets and acks (at-least-once): ``stream.take_events`` acks the events of a batch when
the agent asks for the next batch, i.e. after the batch body returned. The body therefore
returns only after every downstream write (Kafka delivery, Elasticsearch bulk) succeeded.
That alone is not enough: when the worker stops (or the stream is stopped for any other
reason) Faust closes the ``take_events`` generator while the agent is still inside the
batch, and the generator's cleanup acks the whole batch -- observed in the integration
test ``test_stop_during_outage_loses_nothing``: offsets of a batch still waiting for
Triton were committed on SIGTERM, and those posts were lost. So ``guarded`` holds one
extra reference on every message of the batch while it runs and drops it only when the
batch succeeded; a cleanup ack of an unfinished batch is then never the final ack, its
offsets stay uncommitted and the batch is redelivered (harmless: downstream writes are
idempotent by key / ``_id``).

An unexpected exception in a batch (a bug) sends the batch to the DLQ with
``INTERNAL_ERROR`` and the agent keeps running; only if even that fails is the batch left
held and the error raised.
"""

from __future__ import annotations

import asyncio
import logging
from collections.abc import Awaitable, Callable, Sequence
from dataclasses import dataclass
from datetime import UTC, datetime

import faust
from aiokafka.errors import KafkaError, MessageSizeTooLargeError
from faust.types import EventT

from services import errors
from services.config import RetryPolicy
from services.dlq import Origin, dead_letter
from services.retry import retry_async

log = logging.getLogger(__name__)


@dataclass(frozen=True)
class Outgoing:
    """A record to produce: raw key and value bytes for a raw-serialized topic."""

    topic: faust.TopicT
    key: bytes
    value: bytes


def origin_of(event: EventT) -> Origin:
    """The Kafka coordinates and exact bytes of the record behind ``event``."""
    msg = event.message
    return Origin(msg.topic, msg.partition, msg.offset, msg.key, msg.value)


def now_utc() -> datetime:
    return datetime.now(UTC)


def dlq_record(dlq: faust.TopicT, origin: Origin, code: str, reason: str) -> Outgoing:
    letter = dead_letter(origin, code, reason, now_utc())
    return Outgoing(dlq, origin.key or b"", letter.SerializeToString())


def is_transient_kafka(exc: BaseException) -> bool:
    """Broker unavailable, leader moving, timeouts: worth retrying; oversize is not."""
    if isinstance(exc, MessageSizeTooLargeError):
        return False
    return isinstance(exc, KafkaError | OSError | TimeoutError)


async def publish(records: Sequence[Outgoing], policy: RetryPolicy, what: str) -> None:
    """Produce ``records`` and wait until the broker acknowledged every one (acks=all).

    On a transient error the whole set is resent; downstream consumers are idempotent by
    key/``_id``, so a duplicate record is harmless while a missing one is not.
    """
    if not records:
        return

    async def attempt() -> None:
        pending = [await r.topic.send(key=r.key, value=r.value) for r in records]
        await asyncio.gather(*pending)

    await retry_async(attempt, policy=policy, is_transient=is_transient_kafka,
                      what=f"publish {len(records)} records ({what})", log=log)


def hold(events: Sequence[EventT]) -> None:
    """One extra reference per message: no ack by anyone else can be the final one."""
    for event in events:
        event.message.incref()


def release(events: Sequence[EventT]) -> None:
    """Drop ``hold``'s reference: the batch is done, its acks may now commit."""
    for event in events:
        event.message.decref()


async def guarded(
    events: Sequence[EventT],
    body: Callable[[], Awaitable[None]],
    dlq: faust.TopicT,
    policy: RetryPolicy,
    what: str,
) -> None:
    """Run one batch; never crash the agent, never let unfinished work be committed."""
    hold(events)
    try:
        await body()
    except asyncio.CancelledError:
        log.warning("%s: cancelled mid-batch; %d messages stay uncommitted for redelivery",
                    what, len(events))
        raise
    except Exception as exc:
        log.exception("%s: batch of %d failed; sending it to %s", what, len(events), dlq)
        reason = f"{what} failed: {type(exc).__name__}: {exc}"[:2000]
        records = [dlq_record(dlq, origin_of(e), errors.INTERNAL_ERROR, reason) for e in events]
        await publish(records, policy, f"{what} dead letters")
    release(events)
