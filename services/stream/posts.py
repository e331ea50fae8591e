"""Decoding, validation and truncation of raw posts, and building the ``TaggedPost``.

Pure functions on protobuf messages so that the agent stays a thin loop and every rule
here is unit-testable without Kafka or Triton.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from datetime import UTC, datetime

from nlp_models.contract import HashtagResult, TagResult
from services import errors
from services.fields import (
    check_attributes,
    check_enum,
    check_hashtags,
    check_id,
    check_key,
    check_lang,
    check_text,
    check_timestamp,
    is_blank,
)
from services.hashtags import GENERATED, Suggestion
from services.limits import MAX_NAME_CHARS
from services.pb import messages_pb2 as pb


@dataclass(frozen=True)
class PreparedPost:
    """A valid post ready for tagging; ``post.text`` is already cut to the limit."""

    post: pb.Post
    truncated: bool
    original_length: int


def decode_post(raw: bytes | None, max_bytes: int) -> pb.Post:
    return errors.decode(pb.Post, raw, max_bytes)


def validate_post(post: pb.Post, now: datetime) -> None:
    """Raise ``Rejected(INVALID)`` unless every field is usable downstream.

    Required: id, visible text, a known platform. Checked: every other field's size and
    characters, and ``created_at``'s range (``services.fields``)."""
    check_id("post", post.id)
    if is_blank(post.text):
        raise errors.Rejected(errors.INVALID, f"post {post.id!r} has empty text")
    if post.platform == pb.PLATFORM_UNSPECIFIED:
        raise errors.Rejected(errors.INVALID, f"post {post.id!r} has no platform")
    check_enum("platform", post.platform, pb.Platform.values())
    check_lang(post.lang)
    check_text("author", post.author, MAX_NAME_CHARS)
    if post.HasField("created_at"):
        check_timestamp("created_at", post.created_at, now)
    check_attributes(post.attributes)
    check_hashtags(post.user_hashtags)


def truncate_post(post: pb.Post, max_chars: int) -> PreparedPost:
    """Cut the text to ``max_chars`` code points (Python str indices are code points)."""
    length = len(post.text)
    if length <= max_chars:
        return PreparedPost(post, truncated=False, original_length=length)
    cut = pb.Post()
    cut.CopyFrom(post)
    cut.text = post.text[:max_chars]
    return PreparedPost(cut, truncated=True, original_length=length)


def prepare_post(raw: bytes | None, *, max_bytes: int, max_chars: int,
                 key: bytes | None = None, now: datetime | None = None) -> PreparedPost:
    """Decode, validate and truncate one raw message (and its Kafka ``key``); raises
    ``Rejected``. ``now`` bounds ``created_at`` (default: the current time)."""
    check_key(key)
    post = decode_post(raw, max_bytes)
    validate_post(post, now or datetime.now(UTC))
    return truncate_post(post, max_chars)


def hashtag_language(post: pb.Post) -> str:
    """The language the hashtag model is asked for: the post's own, else Weibo -> zh; an
    empty answer lets the model guess from the script."""
    if post.lang:
        return post.lang
    return "zh" if post.platform == pb.WEIBO else ""


def pos_applies(post: pb.Post) -> bool:
    """The POS tagger is an English Twitter model: other languages get no tokens rather
    than English tags on, say, Chinese characters. Unknown language counts as English
    unless the post is from Weibo."""
    return hashtag_language(post).split("-")[0].lower() in ("en", "")


def build_tagged_post(
    prepared: PreparedPost,
    result: TagResult | None,
    model: pb.ModelRef,
    now: datetime,
    hashtags: HashtagResult | None = None,
    hashtag_model: pb.ModelRef | None = None,
    suggestions: Sequence[Suggestion] | None = None,
) -> pb.TaggedPost:
    """The message for posts.tagged.

    ``truncated`` is also set when the model itself tagged only a prefix of the text, so
    the flag always means "tokens do not cover the original text". ``result`` None means
    the POS tagger did not apply (no tokens, no pos_model). Suggested hashtags go to
    ``hashtags``: ``suggestions`` (the scorer's merge of the generator and the hashtag
    memory) when given, else the generator's own with their log-probabilities; the
    author's own stay in ``post.user_hashtags``.
    """
    tagged = pb.TaggedPost(
        post=prepared.post,
        truncated=prepared.truncated or (result is not None and result.truncated),
        original_length=prepared.original_length,
    )
    if result is not None:
        tagged.pos_model.CopyFrom(model)
    if hashtags is not None:
        shown = suggestions if suggestions is not None else [
            Suggestion(t, s, GENERATED) for t, s in hashtags.hashtags]
        tagged.hashtags.extend(pb.Hashtag(text=h.tag, score=h.score, source=h.source)
                               for h in shown)
        tagged.hashtag_status = hashtags.status
        if hashtag_model is not None:
            tagged.hashtag_model.CopyFrom(hashtag_model)
    add = tagged.tokens.add  # in place: a built Token would be copied in (twice the time)
    for t in result.tokens if result is not None else ():
        add(text=t.text, start=t.start, end=t.end, pos_ptb=t.ptb, pos_ark=t.ark)
    tagged.processed_at.FromDatetime(now)
    return tagged
