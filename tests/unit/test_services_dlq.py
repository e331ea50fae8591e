"""DeadLetter envelopes (no servers)."""

from __future__ import annotations

from datetime import UTC, datetime

from services.dlq import Origin, dead_letter
from services.pb import messages_pb2 as pb

NOW = datetime(2024, 5, 6, 7, 8, 9, tzinfo=UTC)


def test_envelope_keeps_bytes_coordinates_and_reason() -> None:
    origin = Origin("posts.raw", 3, 1234, b"key-1", b"\x00\xffraw")
    letter = pb.DeadLetter.FromString(
        dead_letter(origin, "DECODE_ERROR", "not a Post", NOW).SerializeToString()
    )
    assert letter.original_value == b"\x00\xffraw"
    assert letter.original_key == b"key-1"
    assert (letter.source_topic, letter.partition, letter.offset) == ("posts.raw", 3, 1234)
    assert letter.error_code == "DECODE_ERROR" and letter.reason == "not a Post"
    assert letter.failed_at.ToDatetime(tzinfo=UTC) == NOW


def test_missing_key_and_value_become_empty_bytes() -> None:
    letter = dead_letter(Origin("t", 0, 0, None, None), "DECODE_ERROR", "tombstone", NOW)
    assert letter.original_key == b"" and letter.original_value == b""


def test_huge_value_is_cut_and_the_reason_says_so() -> None:
    origin = Origin("t", 0, 0, b"k", b"x" * 100)
    letter = dead_letter(origin, "TOO_LARGE", "too big", NOW, max_value_bytes=10)
    assert letter.original_value == b"x" * 10
    assert "cut to 10 of 100 bytes" in letter.reason
