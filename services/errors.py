"""Why a message went to a dead-letter topic: machine-readable codes + a typed exception."""

from __future__ import annotations

DECODE_ERROR = "DECODE_ERROR"  # not a protobuf of the expected type (incl. invalid UTF-8)
INVALID = "INVALID"  # decoded, but a required field is missing or malformed
TOO_LARGE = "TOO_LARGE"  # raw message above the hard byte limit
MODEL_ERROR = "MODEL_ERROR"  # Triton rejected this input (not an outage)
INDEX_ERROR = "INDEX_ERROR"  # Elasticsearch rejected the document (mapping error, ...)
INTERNAL_ERROR = "INTERNAL_ERROR"  # the record made the service fail (a bug); isolated
UNAVAILABLE = "UNAVAILABLE"  # a dependency stayed down past a finite RetryPolicy.max_wait


class Rejected(Exception):
    """A single message cannot be processed; it goes to the DLQ with ``code`` and reason."""

    def __init__(self, code: str, reason: str) -> None:
        super().__init__(f"{code}: {reason}")
        self.code = code
        self.reason = reason
