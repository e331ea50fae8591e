"""Why a message went to a dead-letter topic: machine-readable codes + a typed exception."""

from __future__ import annotations

from google.protobuf.message import DecodeError

DECODE_ERROR = "DECODE_ERROR"  # not a protobuf of the expected type (incl. invalid UTF-8)
INVALID = "INVALID"  # decoded, but a required field is missing or malformed
TOO_LARGE = "TOO_LARGE"  # raw message above the hard byte limit
MODEL_ERROR = "MODEL_ERROR"  # Triton rejected this input (not an outage)
INDEX_ERROR = "INDEX_ERROR"  # Elasticsearch rejected the document (mapping error, ...)
INTERNAL_ERROR = "INTERNAL_ERROR"  # the record made the service fail (a bug); isolated
UNAVAILABLE = "UNAVAILABLE"  # a dependency stayed down past a finite RetryPolicy.max_wait
CODES = (DECODE_ERROR, INVALID, TOO_LARGE, MODEL_ERROR, INDEX_ERROR, INTERNAL_ERROR, UNAVAILABLE)


class Rejected(Exception):
    """A single message cannot be processed; it goes to the DLQ with ``code`` and reason."""

    def __init__(self, code: str, reason: str) -> None:
        super().__init__(f"{code}: {reason}")
        self.code = code
        self.reason = reason


def decode(message_type, raw: bytes | None, max_bytes: int | None = None):
    """``raw`` parsed as ``message_type`` (a protobuf class), or ``Rejected``: a tombstone
    (no value), over ``max_bytes``, or not that message (protobuf's UTF-8 check makes bad
    text a decode error too). The one decoding rule of every topic the pipeline reads."""
    if raw is None:
        raise Rejected(DECODE_ERROR, "message has no value (tombstone)")
    if max_bytes is not None and len(raw) > max_bytes:
        raise Rejected(TOO_LARGE, f"message is {len(raw)} bytes, limit is {max_bytes}")
    name = message_type.__name__
    try:
        return message_type.FromString(raw)
    except (DecodeError, ValueError) as exc:
        article = "an" if name[0] in "AEIOU" else "a"
        raise Rejected(DECODE_ERROR, f"not {article} {name} protobuf: {exc}") from None
