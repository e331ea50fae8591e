"""The ``DeadLetter`` envelope: the original message byte for byte, and why it failed."""

from __future__ import annotations

import hashlib
from dataclasses import dataclass
from datetime import datetime

from services.limits import MAX_DLQ_KEY_BYTES, MAX_DLQ_VALUE_BYTES, MAX_REASON_CHARS
from services.pb import messages_pb2 as pb


@dataclass(frozen=True)
class Origin:
    """Where a message came from (taken from the Kafka record)."""

    topic: str
    partition: int
    offset: int
    key: bytes | None
    value: bytes | None
    #: when the input this record derives from reached the broker, seconds: a raw record's
    #: own Kafka timestamp (LogAppendTime), an enriched record's ``nlp-arrived-ms`` header
    #: (services/stream/delivery.py); None where neither was given
    arrived: float | None = None


def dead_letter(
    origin: Origin,
    code: str,
    reason: str,
    now: datetime,
    max_value_bytes: int = MAX_DLQ_VALUE_BYTES,
    max_key_bytes: int = MAX_DLQ_KEY_BYTES,
) -> pb.DeadLetter:
    """Build the envelope; a value or key over its cap is cut and the reason says so.

    Cutting keeps a ~2 MiB poison message (or a 1.5 MB key) from making its own envelope
    too large for the DLQ topic, which would turn a bad message into a stuck partition.
    The original sizes and the value's digest stay, so a cut copy is still identifiable.
    """
    value, key = origin.value or b"", origin.key or b""
    notes = []
    if len(value) > max_value_bytes:
        notes.append(f"original_value cut to {max_value_bytes} of {len(value)} bytes")
    if len(key) > max_key_bytes:
        notes.append(f"original_key cut to {max_key_bytes} of {len(key)} bytes")
    if notes:
        reason = f"{reason} [{'; '.join(notes)}]"
    letter = pb.DeadLetter(
        original_value=value[:max_value_bytes],
        original_key=key[:max_key_bytes],
        reason=cut_reason(reason),
        source_topic=origin.topic,
        partition=origin.partition,
        offset=origin.offset,
        error_code=code,
        original_value_size=len(value),
        original_key_size=len(key),
        original_value_sha256=hashlib.sha256(value).hexdigest(),
    )
    letter.failed_at.FromDatetime(now)
    return letter


def cut_reason(reason: str) -> str:
    """At most ``MAX_REASON_CHARS``, keeping the end (where notes about cuts are)."""
    if len(reason) <= MAX_REASON_CHARS:
        return reason
    tail = 200
    return reason[: MAX_REASON_CHARS - tail - 1] + "…" + reason[-tail:]


def record_key(key: bytes | None) -> bytes:
    """The dead letter's Kafka key: the original one, or its digest when over the cap
    (same partitioning for the same key, and a record the broker accepts)."""
    key = key or b""
    if len(key) <= MAX_DLQ_KEY_BYTES:
        return key
    return b"sha256:" + hashlib.sha256(key).hexdigest().encode()


def is_complete(letter: pb.DeadLetter) -> bool:
    """Whether the envelope holds the whole original key and value (replayable)."""
    return (len(letter.original_value) == letter.original_value_size
            and len(letter.original_key) == letter.original_key_size)
