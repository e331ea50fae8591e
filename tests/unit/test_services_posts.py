"""Post decoding, validation, truncation and TaggedPost building (no servers)."""

from __future__ import annotations

from datetime import UTC, datetime

import pytest

from nlp_models.contract import HashtagResult, TaggedToken, TagResult
from services import errors
from services.limits import MAX_ID_BYTES
from services.pb import messages_pb2 as pb
from services.stream.posts import (
    build_tagged_post,
    hashtag_language,
    pos_applies,
    prepare_post,
    truncate_post,
)

LIMITS = {"max_bytes": 2 * 1024 * 1024, "max_chars": 10}


def raw_post(**fields: object) -> bytes:
    base: dict[str, object] = {"id": "p1", "platform": pb.TWITTER, "text": "hello world"}
    base.update(fields)
    return pb.Post(**base).SerializeToString()


def rejected(raw: bytes | None, **limits: int) -> errors.Rejected:
    with pytest.raises(errors.Rejected) as info:
        prepare_post(raw, **{**LIMITS, **limits})
    return info.value


def test_valid_post_passes_unchanged() -> None:
    prepared = prepare_post(raw_post(text="short"), **LIMITS)
    assert prepared.post.text == "short"
    assert not prepared.truncated and prepared.original_length == 5


@pytest.mark.parametrize(
    ("fields", "fragment"),
    [
        ({"id": ""}, "no id"),
        ({"id": "   "}, "no id"),
        ({"text": ""}, "empty text"),
        ({"text": " \n\t "}, "empty text"),
        ({"platform": pb.PLATFORM_UNSPECIFIED}, "no platform"),
        ({"id": "x" * (MAX_ID_BYTES + 1)}, "longer than"),
    ],
)
def test_invalid_posts_are_rejected(fields: dict[str, object], fragment: str) -> None:
    err = rejected(raw_post(**fields))
    assert err.code == errors.INVALID and fragment in err.reason


def post_with(**fields: object) -> pb.Post:
    post = pb.Post(id="p1", platform=pb.TWITTER, text="hello world")
    for name, value in fields.items():
        if name == "created_at":
            post.created_at.FromSeconds(0)
            post.created_at.seconds, post.created_at.nanos = value  # type: ignore[misc]
        elif name == "attributes":
            post.attributes.update(value)  # type: ignore[arg-type]
        elif name == "user_hashtags":
            post.user_hashtags.extend(value)  # type: ignore[arg-type]
        else:
            setattr(post, name, value)
    return post


NOW = datetime(2026, 1, 1, tzinfo=UTC)


@pytest.mark.parametrize(
    ("fields", "fragment"),
    [
        # each of these once reached the indexing stage and failed there, with the batch
        ({"platform": 7}, "platform 7 is not one of"),
        ({"created_at": (253_402_300_800, 0)}, "created_at is not a valid time"),  # year 10000
        ({"created_at": (-1, 0)}, "created_at 1969-12-31"),
        ({"created_at": (1_767_225_600 + 3 * 86_400, 0)}, "outside 1970-01-01"),  # NOW + 3 d
        ({"created_at": (1_300_000_000, 2_000_000_000)}, "created_at is not a valid time"),
        ({"text": "\u200b\u200b \ufeff"}, "empty text"),  # zero-width only
        ({"id": "a\x00b"}, "post id contains control characters"),
        ({"lang": "en; drop"}, "is not a language tag"),
        ({"author": "x" * 300}, "author has 300 characters"),
        ({"attributes": {f"k{i}": "v" for i in range(65)}}, "65 attributes"),
        ({"attributes": {"a.b": "v"}}, "contains '.'"),
        ({"attributes": {"_id": "v"}}, "starts with '_'"),
        ({"attributes": {"k": "v" * 1025}}, "attribute 'k' has 1025"),
        ({"user_hashtags": ["t"] * 65}, "65 user hashtags"),
    ],
)
def test_fields_that_would_fail_downstream_are_rejected_where_posts_enter(
    fields: dict[str, object], fragment: str
) -> None:
    with pytest.raises(errors.Rejected) as info:
        prepare_post(post_with(**fields).SerializeToString(), **LIMITS, now=NOW)
    assert info.value.code == errors.INVALID
    assert fragment in info.value.reason, info.value.reason


def test_a_kafka_key_longer_than_an_id_is_rejected() -> None:
    with pytest.raises(errors.Rejected) as info:
        prepare_post(raw_post(), **LIMITS, key=b"k" * 1_500_000)
    assert info.value.code == errors.INVALID and "1500000 bytes" in info.value.reason


def test_ordinary_posts_pass_the_field_checks() -> None:
    post = post_with(lang="zh-CN", author="someone", created_at=(1_700_000_000, 5),
                     attributes={"source": "replay", "retweets": "3"},
                     user_hashtags=["BostonStrong"], text="tab\tand\nnewline are fine")
    prepared = prepare_post(post.SerializeToString(), max_bytes=1 << 20, max_chars=100,
                            key=b"p1", now=NOW)
    assert prepared.post.id == "p1"


def test_invalid_utf8_in_text_is_a_decode_error() -> None:
    raw = raw_post(text="caf\u00e9").replace("é".encode(), b"\xff\xfe")
    assert rejected(raw).code == errors.DECODE_ERROR


@pytest.mark.parametrize("raw", [b"\xff\xff\xff not a protobuf", None])
def test_garbage_and_tombstones_are_decode_errors(raw: bytes | None) -> None:
    assert rejected(raw).code == errors.DECODE_ERROR


def test_oversized_raw_message_is_too_large() -> None:
    assert rejected(raw_post(), max_bytes=5).code == errors.TOO_LARGE


def test_unknown_fields_are_accepted() -> None:
    unknown = b"\xa8\x06\x2a"  # field 101, varint 42: not in the schema
    prepared = prepare_post(raw_post() + unknown, **LIMITS)
    assert prepared.post.id == "p1"


def test_truncation_counts_code_points() -> None:
    text = "😀" * 15  # 15 code points, 60 UTF-8 bytes
    prepared = truncate_post(pb.Post(id="p", text=text), max_chars=10)
    assert prepared.post.text == "😀" * 10
    assert prepared.truncated and prepared.original_length == 15


def test_tagged_post_carries_tokens_model_and_flags() -> None:
    prepared = truncate_post(pb.Post(id="p", platform=pb.TWITTER, text="a" * 20), 10)
    result = TagResult((TaggedToken("aaaaaaaaaa", 0, 10, "NN", "N"),), truncated=False)
    now = datetime(2024, 1, 2, tzinfo=UTC)
    tagged = build_tagged_post(prepared, result, pb.ModelRef(name="pos_tagger", version="3"), now)
    assert tagged.truncated and tagged.original_length == 20
    assert [(t.text, t.start, t.end, t.pos_ptb, t.pos_ark) for t in tagged.tokens] == [
        ("aaaaaaaaaa", 0, 10, "NN", "N")
    ]
    assert tagged.pos_model.version == "3"
    assert tagged.processed_at.ToDatetime(tzinfo=UTC) == now


def test_model_side_truncation_sets_the_flag() -> None:
    prepared = truncate_post(pb.Post(id="p", text="abc"), 10)
    tagged = build_tagged_post(prepared, TagResult((), truncated=True), pb.ModelRef(),
                               datetime.now(UTC))
    assert tagged.truncated


def test_generated_hashtags_are_kept_apart_from_the_authors_own() -> None:
    prepared = prepare_post(raw_post(user_hashtags=["BostonStrong"]), **LIMITS)
    generated = HashtagResult((("marathon", -1.5), ("boston", -2.0)), "en", "ok", False)
    tagged = build_tagged_post(prepared, TagResult((), False), pb.ModelRef(name="pos_tagger"),
                               datetime(2026, 1, 1, tzinfo=UTC), generated,
                               pb.ModelRef(name="hashtag_generator", version="2"))
    assert [(h.text, h.score) for h in tagged.hashtags] == [("marathon", -1.5), ("boston", -2.0)]
    assert list(tagged.post.user_hashtags) == ["BostonStrong"]
    assert tagged.hashtag_status == "ok" and tagged.hashtag_model.version == "2"


def test_unsupported_language_is_recorded_without_hashtags() -> None:
    prepared = prepare_post(raw_post(lang="es"), **LIMITS)
    outcome = HashtagResult((), "es", "unsupported_language", False)
    tagged = build_tagged_post(prepared, TagResult((), False), pb.ModelRef(),
                               datetime(2026, 1, 1, tzinfo=UTC), outcome, pb.ModelRef())
    assert not tagged.hashtags and tagged.hashtag_status == "unsupported_language"


@pytest.mark.parametrize(
    ("fields", "lang"),
    [({"lang": "en"}, "en"), ({"platform": pb.WEIBO}, "zh"), ({}, ""),
     ({"platform": pb.WEIBO, "lang": "en"}, "en")],
)
def test_hashtag_language_is_the_posts_else_weibo_means_chinese(fields, lang) -> None:
    assert hashtag_language(pb.Post.FromString(raw_post(**fields))) == lang


def test_the_english_pos_tagger_skips_posts_in_other_languages() -> None:
    assert pos_applies(pb.Post(platform=pb.TWITTER, lang="en-US"))
    assert pos_applies(pb.Post(platform=pb.TWITTER))  # unknown language on Twitter
    assert not pos_applies(pb.Post(platform=pb.WEIBO))
    assert not pos_applies(pb.Post(platform=pb.TWITTER, lang="es"))
    prepared = prepare_post(raw_post(platform=pb.WEIBO, text="今天天气很好"), **LIMITS)
    tagged = build_tagged_post(prepared, None, pb.ModelRef(name="pos_tagger"),
                               datetime(2026, 1, 1, tzinfo=UTC))
    assert not tagged.tokens and not tagged.HasField("pos_model") and not tagged.truncated
