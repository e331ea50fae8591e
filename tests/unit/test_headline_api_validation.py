"""The headline API's edge validation: every rule, and the plan it produces; the statuses
failures map to, and that their messages carry nothing from inside the server."""

from __future__ import annotations

import grpc
import pytest

from services.headline_api.server import Refused, public, request_id_of, status_of
from services.headline_api.validation import MAX_ARTICLE_CHARS, Invalid, Unsupported, plan
from services.pb import headline_api_pb2 as api
from services.retry import RetryGaveUp
from services.triton import ModelError

ARTICLE = "Toyota Motor Corp said on Tuesday it would recall 1.2 million cars."


def request(**fields) -> api.SuggestRequest:
    return api.SuggestRequest(**{"article": ARTICLE, **fields})


def test_a_plain_request_gets_defaults_and_a_detected_language():
    p = plan(request(required_phrases=["Toyota", " Toyota ", "recall"]))
    assert (p.language, p.phrases, p.full, p.n, p.order, p.max_length) == (
        "en", ["Toyota", "recall"], True, 3, "", 0)
    assert plan(request(article="丰田汽车公司周二宣布召回汽车")).language == "zh"
    assert plan(request(language="zh-Hans", order=api.TOK_F)).order == "tok-f"


@pytest.mark.parametrize(
    ("fields", "fragment"),
    [
        ({"article": "  "}, "article is empty"),
        ({"article": "\u00a0\u3000\n\t"}, "article is empty"),
        ({"article": "x" * (MAX_ARTICLE_CHARS + 1)}, "the limit is 100000"),
        ({"article": "\u200b\u200b"}, "no visible characters.*U\\+200B ZERO WIDTH SPACE"),
        ({"article": "\ufeff"}, "no visible characters.*U\\+FEFF"),
        ({"article": "\u200e\u200f\u202a\u2066"}, "no visible characters.*U\\+200E"),
        ({"article": "\x00\x01 \x7f"}, "no visible characters.*U\\+0000"),
        ({"article": "\u2581\ufffd"}, "no visible characters.*U\\+2581"),
        ({"article": "\u0301\u0301"}, "no visible characters"),
        ({"article": "\u3164\u2800"}, "no visible characters"),
        ({"language": "x" * 200_000}, "not a BCP-47 tag"),
        ({"language": "en\u200b"}, "'en<U\\+200B>' is not a BCP-47 tag"),
        ({"language": "e n"}, "not a BCP-47 tag"),
        ({"required_phrases": [f"p{i}" for i in range(6)]}, "at most 5"),
        ({"required_phrases": ["  "]}, "blank"),
        ({"required_phrases": ["y" * 101]}, "the limit is 100"),
        ({"required_phrases": ["\u200b"]}, "contains U\\+200B ZERO WIDTH SPACE"),
        ({"required_phrases": ["Toy\u200bota"]}, "'Toy<U\\+200B>ota' contains U\\+200B"),
        ({"required_phrases": ["\x01"]}, "contains U\\+0001 \\(a control character\\)"),
        ({"required_phrases": ["Toyota\nrecall"]}, "contains U\\+000A"),
        ({"required_phrases": ["\ufffd"]}, "contains U\\+FFFD REPLACEMENT CHARACTER"),
        ({"required_phrases": ["\u0301"]}, "no visible characters"),
        ({"num_candidates": 6}, "use 1 to 5"),
        ({"num_candidates": -1}, "use 1 to 5"),
        ({"max_length": 5}, "10 to 300"),
        ({"skip_full": True}, "needs at least one required phrase"),
        ({"order": 9}, "not a GenerationOrder"),
    ],
)
def test_each_invalid_request_says_what_to_change(fields, fragment):
    with pytest.raises(Invalid, match=fragment) as info:
        plan(request(**fields))
    assert len(str(info.value)) < 200  # a value is quoted cut, never whole


@pytest.mark.parametrize("language", ["fr", "de-DE", "ja"])
def test_a_well_formed_language_without_a_model_is_unsupported_not_invalid(language):
    with pytest.raises(Unsupported, match=f"'{language}' has no headline model"):
        plan(request(language=language))


def test_control_and_format_characters_are_removed_from_the_article_a_model_reads():
    p = plan(request(article="Toyota\u200b recalls\x00 cars\ufeff.\n\tMore.",
                     required_phrases=["Toyota"]))
    assert p.article == "Toyota recalls cars.\n\tMore."


def test_odd_but_visible_text_is_left_to_the_models():
    for article in ("😀🎉🔥", "مرحبا بالعالم", "สวัสดีชาวโลก", "!!! ???", "\ue000x"):
        assert plan(request(article=article)).article == article


@pytest.mark.parametrize(
    ("exc", "code"),
    [
        (Invalid("x"), grpc.StatusCode.INVALID_ARGUMENT),
        (Unsupported("x"), grpc.StatusCode.FAILED_PRECONDITION),
        (Refused("phrase_too_long", "..."), grpc.StatusCode.INVALID_ARGUMENT),
        (Refused("empty_article", "..."), grpc.StatusCode.INVALID_ARGUMENT),
        (Refused("unsupported_phrase", "..."), grpc.StatusCode.FAILED_PRECONDITION),
        (Refused("unsupported_language", "..."), grpc.StatusCode.FAILED_PRECONDITION),
        (TimeoutError(), grpc.StatusCode.DEADLINE_EXCEEDED),
        (RetryGaveUp("Triton down"), grpc.StatusCode.UNAVAILABLE),
        (ConnectionRefusedError(), grpc.StatusCode.UNAVAILABLE),
        (ModelError("model crashed"), grpc.StatusCode.INTERNAL),
        (KeyError("bug"), grpc.StatusCode.INTERNAL),
    ],
)
def test_failures_map_to_grpc_statuses(exc, code):
    assert status_of(exc)[0] == code


TRACE = ("StatusCode.INTERNAL: Failed to process the request(s) for model "
         "'headline_generator_0', message: ValueError: torch.cat(): expected a non-empty list"
         "\n\nAt:\n  /work/wt-api/nlp_models/headline/encoder.py(134): _recurrent\n")


@pytest.mark.parametrize("exc", [ModelError(TRACE), RuntimeError(TRACE), RetryGaveUp(TRACE),
                                 OSError(TRACE)])
def test_a_server_side_error_text_never_reaches_the_client(exc):
    _, detail = status_of(exc)
    assert "encoder.py" not in detail and "torch" not in detail and "/" not in detail


def test_status_messages_are_one_bounded_line():
    assert public(TRACE) == TRACE.splitlines()[0]
    assert len(public("x" * 5000)) == 300


@pytest.mark.parametrize(("given", "kept"), [("abc-123.X_y:z", True), ("", False),
                                             ("a" * 65, False), ("id\nforged log line", False),
                                             ("<script>", False)])
def test_only_plain_client_request_ids_are_echoed(given, kept):
    rid = request_id_of({"x-request-id": given} if given else {})
    assert (rid == given) is kept and len(rid) <= 64
