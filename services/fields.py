"""Checks of single fields, shared by posts and articles where they enter the pipeline.

Everything a later stage relies on is checked here, once, so that a record that passes
can no longer fail downstream: an enum value this code does not know, a timestamp
``datetime`` cannot represent, a Kafka key or an attribute too large for a dead letter or
an Elasticsearch keyword, control characters in identifiers. Each check raises
``errors.Rejected(INVALID, reason)`` naming the field, so the dead letter says what to fix.
"""

from __future__ import annotations

import unicodedata
from collections.abc import Mapping, Sequence
from datetime import UTC, datetime, timedelta

from google.protobuf.timestamp_pb2 import Timestamp

from services import errors
from services.limits import (
    MAX_ATTRIBUTE_KEY_CHARS,
    MAX_ATTRIBUTE_VALUE_CHARS,
    MAX_ATTRIBUTES,
    MAX_CLOCK_SKEW_DAYS,
    MAX_HASHTAG_CHARS,
    MAX_ID_BYTES,
    MAX_KEY_BYTES,
    MAX_LANG_CHARS,
    MAX_USER_HASHTAGS,
)

EPOCH = datetime(1970, 1, 1, tzinfo=UTC)


def invalid(reason: str) -> errors.Rejected:
    return errors.Rejected(errors.INVALID, reason)


def has_control(text: str) -> bool:
    """Control (Cc) characters other than tab and newlines, and unpaired surrogates."""
    return any(
        unicodedata.category(ch) in ("Cc", "Cs") and ch not in "\t\n\r" for ch in text
    )


#: Letters and symbols that render blank or that the English tokenizer drops: Hangul fillers,
#: the blank Braille pattern, SentencePiece's space symbol U+2581 and U+FFFD.
BLANK_GRAPHEMES = frozenset("\u115f\u1160\u3164\uffa0\u2800\u2581\ufffd")


def is_visible(ch: str) -> bool:
    """A letter, digit, punctuation mark or symbol that renders as something."""
    return unicodedata.category(ch)[0] in "LNPS" and ch not in BLANK_GRAPHEMES


def is_blank(text: str) -> bool:
    """Nothing visible (`is_visible`): only whitespace, control and format characters (Cf,
    e.g. U+200B), marks, or blank graphemes. The stream and the headline API share it."""
    return not any(is_visible(ch) for ch in text)


def check_key(key: bytes | None) -> None:
    """Kafka keys are ids: at most ``MAX_KEY_BYTES`` (a 1.5 MB key once made a 3 MB dead
    letter that the broker refused, and the partition stalled)."""
    if key is not None and len(key) > MAX_KEY_BYTES:
        raise invalid(f"Kafka key is {len(key)} bytes; the limit is {MAX_KEY_BYTES}")


def check_id(kind: str, value: str) -> None:
    """A post's or article's id (the document ``_id`` and the Kafka key): visible, at most
    ``MAX_ID_BYTES`` in UTF-8, one line without control characters."""
    if is_blank(value):
        raise invalid(f"{kind} has no id")
    if len(value.encode("utf-8")) > MAX_ID_BYTES:
        raise invalid(f"{kind} id longer than {MAX_ID_BYTES} bytes")
    check_text(f"{kind} id", value, MAX_ID_BYTES)


def check_text(field: str, value: str, max_chars: int, *, required: bool = False) -> None:
    """A short single-line field (author, lang, source): no control characters."""
    if required and is_blank(value):
        raise invalid(f"{field} is empty")
    if len(value) > max_chars:
        raise invalid(f"{field} has {len(value)} characters; the limit is {max_chars}")
    if has_control(value) or "\n" in value or "\r" in value:
        raise invalid(f"{field} contains control characters")


def check_lang(value: str) -> None:
    """Empty (unknown) or a BCP-47-shaped tag: letters, digits and hyphens."""
    check_text("lang", value, MAX_LANG_CHARS)
    if value and not all(c.isascii() and (c.isalnum() or c == "-") for c in value):
        raise invalid(f"lang {value!r} is not a language tag like 'en' or 'zh-CN'")


def check_enum(field: str, value: int, known: Sequence[int]) -> None:
    """Proto3 keeps unknown enum numbers; they must not reach code that names them."""
    if value not in known:
        raise invalid(f"{field} {value} is not one of {sorted(known)}")


def check_timestamp(field: str, ts: Timestamp, now: datetime) -> None:
    """Between the epoch and ``MAX_CLOCK_SKEW_DAYS`` after ``now``."""
    try:
        when = ts.ToDatetime(tzinfo=UTC)
    except (ValueError, OverflowError) as exc:
        raise invalid(f"{field} is not a valid time ({ts.seconds}s, {ts.nanos}ns): {exc}") from None
    latest = now + timedelta(days=MAX_CLOCK_SKEW_DAYS)
    if not EPOCH <= when <= latest:
        raise invalid(f"{field} {when.isoformat()} is outside {EPOCH:%Y-%m-%d} .. "
                      f"{latest:%Y-%m-%d}")


def check_attributes(attributes: Mapping[str, str]) -> None:
    """Attributes become Elasticsearch fields: a bounded number of plain names.

    A dot would make ``a.b`` an object under ``a`` (a mapping conflict with a keyword
    ``a``); a leading underscore is reserved for Elasticsearch's metadata fields."""
    if len(attributes) > MAX_ATTRIBUTES:
        raise invalid(f"{len(attributes)} attributes; the limit is {MAX_ATTRIBUTES}")
    for name, value in attributes.items():
        check_text("attribute name", name, MAX_ATTRIBUTE_KEY_CHARS, required=True)
        if "." in name or name.startswith("_"):
            raise invalid(f"attribute name {name!r} contains '.' or starts with '_'")
        if len(value) > MAX_ATTRIBUTE_VALUE_CHARS:
            raise invalid(f"attribute {name!r} has {len(value)} characters; "
                          f"the limit is {MAX_ATTRIBUTE_VALUE_CHARS}")


def check_hashtags(hashtags: Sequence[str]) -> None:
    if len(hashtags) > MAX_USER_HASHTAGS:
        raise invalid(f"{len(hashtags)} user hashtags; the limit is {MAX_USER_HASHTAGS}")
    for tag in hashtags:
        check_text("user hashtag", tag, MAX_HASHTAG_CHARS)
