"""The ``DeadLetter`` envelope: the original message byte for byte, and why it failed."""

from __future__ import annotations

from dataclasses import dataclass
from datetime import datetime

from services.config import MAX_DLQ_VALUE_BYTES
from services.pb import messages_pb2 as pb


@dataclass(frozen=True)
class Origin:
    """Where a message came from (taken from the Kafka record)."""

    topic: str
    partition: int
    offset: int
    key: bytes | None
    value: bytes | None


def dead_letter(
    origin: Origin,
    code: str,
    reason: str,
    now: datetime,
    max_value_bytes: int = MAX_DLQ_VALUE_BYTES,
) -> pb.DeadLetter:
    """Build the envelope; a value above ``max_value_bytes`` is cut and the reason says so.

    Cutting keeps a ~2 MiB poison message from making its own envelope too large for the
    DLQ topic, which would turn a bad message into a stuck partition.
    """
    value = origin.value or b""
    if len(value) > max_value_bytes:
        reason = f"{reason} [original_value cut to {max_value_bytes} of {len(value)} bytes]"
        value = value[:max_value_bytes]
    letter = pb.DeadLetter(
        original_value=value,
        original_key=origin.key or b"",
        reason=reason,
        source_topic=origin.topic,
        partition=origin.partition,
        offset=origin.offset,
        error_code=code,
    )
    letter.failed_at.FromDatetime(now)
    return letter
