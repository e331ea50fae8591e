"""JSONL feed lines -> protobuf ``Post``/``Article`` records, with line-numbered errors.

The producer only checks what it needs to build a message (JSON syntax, field types,
dates, platform names, an id for the Kafka key); everything else (empty text, ...) is the
pipeline's job to judge, so replaying a bad feed exercises the DLQ paths. A message over
the broker's limit (e.g. a 5 MB article body) is a bad line with its size in the message:
the broker would refuse it anyway.
"""

from __future__ import annotations

import json
from collections.abc import Iterator
from dataclasses import dataclass
from datetime import UTC, datetime
from pathlib import Path
from typing import Any, TextIO

from services.limits import MAX_RAW_BYTES
from services.pb import messages_pb2 as pb

#: Largest message value the producer sends: the broker's limit minus record overhead.
MAX_VALUE_BYTES = MAX_RAW_BYTES - 4096

PLATFORMS = {"twitter": pb.TWITTER, "weibo": pb.WEIBO}


class FeedError(ValueError):
    """A line that cannot become a message; ``lineno`` is 1-based."""

    def __init__(self, lineno: int, message: str) -> None:
        super().__init__(f"line {lineno}: {message}")
        self.lineno = lineno


@dataclass(frozen=True)
class Record:
    """A message ready to send: Kafka key and protobuf bytes."""

    lineno: int
    key: bytes
    value: bytes


def parse_time(value: Any) -> datetime:
    """ISO-8601 (``Z`` allowed); naive times are taken as UTC."""
    if not isinstance(value, str):
        raise ValueError(f"expected an ISO-8601 string, got {type(value).__name__}")
    parsed = datetime.fromisoformat(value.replace("Z", "+00:00"))
    return parsed if parsed.tzinfo else parsed.replace(tzinfo=UTC)


def _str(data: dict[str, Any], key: str, required: bool = False) -> str:
    value = data.get(key)
    if value is None:
        if required:
            raise ValueError(f"missing {key!r}")
        return ""
    if not isinstance(value, str):
        raise ValueError(f"{key!r} must be a string, got {type(value).__name__}")
    return value


def _str_list(data: dict[str, Any], key: str) -> list[str]:
    value = data.get(key) or []
    if not isinstance(value, list) or not all(isinstance(v, str) for v in value):
        raise ValueError(f"{key!r} must be a list of strings")
    return value


def _attributes(data: dict[str, Any]) -> dict[str, str]:
    value = data.get("attributes") or {}
    if not isinstance(value, dict):
        raise ValueError("'attributes' must be an object")
    return {str(k): v if isinstance(v, str) else json.dumps(v) for k, v in value.items()}


def _platform(data: dict[str, Any]) -> int:
    name = _str(data, "platform").strip().lower()
    if not name:
        return pb.PLATFORM_UNSPECIFIED
    if name not in PLATFORMS:
        raise ValueError(f"unknown platform {name!r} (known: {', '.join(PLATFORMS)})")
    return PLATFORMS[name]


def post_from_json(data: dict[str, Any]) -> pb.Post:
    post = pb.Post(
        id=_str(data, "id", required=True),
        platform=_platform(data),
        lang=_str(data, "lang"),
        text=_str(data, "text"),
        author=_str(data, "author").lstrip("@"),
        attributes=_attributes(data),
        user_hashtags=[h.lstrip("#") for h in _str_list(data, "user_hashtags")],
    )
    if data.get("created_at") is not None:
        post.created_at.FromDatetime(parse_time(data["created_at"]))
    return post


def article_from_json(data: dict[str, Any]) -> pb.Article:
    article = pb.Article(
        id=_str(data, "id", required=True),
        source=_str(data, "source"),
        lang=_str(data, "lang"),
        body=_str(data, "body"),
        required_phrases=_str_list(data, "required_phrases"),
    )
    if data.get("title") is not None:
        article.title = _str(data, "title")
    if data.get("published_at") is not None:
        article.published_at.FromDatetime(parse_time(data["published_at"]))
    return article


BUILDERS = {"posts": post_from_json, "articles": article_from_json}


def parse_line(line: str, lineno: int, kind: str = "posts") -> Record | None:
    """One record, ``None`` for a blank line, ``FeedError`` for a bad one."""
    if not line.strip():
        return None
    try:
        data = json.loads(line)
    except json.JSONDecodeError as exc:
        raise FeedError(lineno, f"invalid JSON: {exc.msg} at column {exc.colno}") from None
    if not isinstance(data, dict):
        raise FeedError(lineno, f"expected a JSON object, got {type(data).__name__}")
    try:
        message = BUILDERS[kind](data)
    except ValueError as exc:
        raise FeedError(lineno, str(exc)) from None
    if not message.id.strip():
        raise FeedError(lineno, "empty 'id' (needed as the Kafka key)")
    value = message.SerializeToString()
    if len(value) > MAX_VALUE_BYTES:
        raise FeedError(lineno, f"message is {len(value) / 1e6:.1f} MB; Kafka takes at most "
                        f"{MAX_VALUE_BYTES / 1e6:.1f} MB")
    return Record(lineno, message.id.encode("utf-8"), value)


def read_feed(stream: TextIO, kind: str = "posts") -> Iterator[Record | FeedError]:
    """Records and errors in file order (the caller decides whether errors stop it)."""
    for lineno, line in enumerate(stream, start=1):
        try:
            record = parse_line(line, lineno, kind)
        except FeedError as err:
            yield err
            continue
        if record is not None:
            yield record


def count_lines(path: Path) -> int:
    with path.open("rb") as fh:
        return sum(1 for _ in fh)
