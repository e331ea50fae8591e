"""The headline API's edge validation: every rule, and the plan it produces."""

from __future__ import annotations

import grpc
import pytest

from services.headline_api.server import Refused, status_of
from services.headline_api.validation import MAX_ARTICLE_CHARS, Invalid, plan
from services.pb import headline_api_pb2 as api
from services.retry import RetryGaveUp

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
        ({"article": "x" * (MAX_ARTICLE_CHARS + 1)}, "the limit is 100000"),
        ({"language": "fr"}, "language 'fr' is not supported"),
        ({"required_phrases": [f"p{i}" for i in range(6)]}, "at most 5"),
        ({"required_phrases": ["  "]}, "blank"),
        ({"required_phrases": ["y" * 101]}, "the limit is 100"),
        ({"num_candidates": 6}, "use 1 to 5"),
        ({"num_candidates": -1}, "use 1 to 5"),
        ({"max_length": 5}, "10 to 300"),
        ({"skip_full": True}, "needs at least one required phrase"),
        ({"order": 9}, "not a GenerationOrder"),
    ],
)
def test_each_invalid_request_says_what_to_change(fields, fragment):
    with pytest.raises(Invalid, match=fragment):
        plan(request(**fields))


@pytest.mark.parametrize(
    ("exc", "code"),
    [
        (Invalid("x"), grpc.StatusCode.INVALID_ARGUMENT),
        (Refused("phrase_too_long: ..."), grpc.StatusCode.INVALID_ARGUMENT),
        (TimeoutError(), grpc.StatusCode.DEADLINE_EXCEEDED),
        (RetryGaveUp("Triton down"), grpc.StatusCode.UNAVAILABLE),
        (ConnectionRefusedError(), grpc.StatusCode.UNAVAILABLE),
        (KeyError("bug"), None),
    ],
)
def test_failures_map_to_grpc_statuses(exc, code):
    assert status_of(exc)[0] == code
