"""Search request bodies and rendering (no servers)."""

from __future__ import annotations

import pytest

from services.search.query import (
    SearchRequest,
    build_query,
    split_tag_spec,
    top_hashtags_body,
)
from services.search.render import render_hit, tagged_text


def test_text_query_with_all_filters() -> None:
    body = build_query(SearchRequest(
        text="obama speech", tags=["NNP:Obama"], ark_tags=["^:obama"], hashtags=["#News"],
        user_hashtags=["win"], platform="Twitter", since="2011-01-01", until="2011-02-01",
        size=5,
    ))
    q = body["query"]["bool"]
    assert q["must"] == [{"match": {"text": {"query": "obama speech", "operator": "and"}}}]
    assert {"term": {"pos_terms": "NNP|obama"}} in q["filter"]
    assert {"term": {"pos_terms": "ark:^|obama"}} in q["filter"]
    assert {"term": {"hashtags.text": "news"}} in q["filter"]
    assert {"term": {"user_hashtags": "win"}} in q["filter"]
    assert {"term": {"platform": "twitter"}} in q["filter"]
    assert {"range": {"created_at": {"gte": "2011-01-01", "lte": "2011-02-01"}}} in q["filter"]
    assert body["size"] == 5 and "sort" not in body


def test_no_text_sorts_newest_first() -> None:
    body = build_query(SearchRequest())
    assert body["query"]["bool"]["must"] == [{"match_all": {}}]
    assert body["sort"][0]["created_at"]["order"] == "desc"


def test_tag_without_word_is_a_prefix_query() -> None:
    body = build_query(SearchRequest(tags=["NNP"]))
    assert body["query"]["bool"]["filter"] == [{"prefix": {"pos_terms": "NNP|"}}]


@pytest.mark.parametrize(
    ("spec", "expected"),
    [("NNP:obama", ("NNP", "obama")), ("::foo", (":", "foo")),
     ("URL:http://t.co/x", ("URL", "http://t.co/x")), ("^", ("^", ""))],
)
def test_split_tag_spec(spec: str, expected: tuple[str, str]) -> None:
    assert split_tag_spec(spec) == expected


def test_split_tag_spec_needs_a_tag() -> None:
    with pytest.raises(ValueError):
        split_tag_spec(":obama")


def test_top_hashtags_aggregates_both_kinds_without_hits() -> None:
    body = top_hashtags_body(SearchRequest(since="2011-01-01"), size=7)
    assert body["size"] == 0 and "sort" not in body
    assert body["aggs"]["generated"]["terms"] == {"field": "hashtags.text", "size": 7}
    assert body["aggs"]["user"]["terms"]["field"] == "user_hashtags"


def test_rendering_shows_word_slash_tag() -> None:
    src = {"id": "p1", "created_at": "2011-01-01T00:00:00Z", "platform": "twitter",
           "text": "Obama won", "user_hashtags": ["win"], "hashtags": [],
           "tokens": [{"text": "Obama", "ptb": "NNP", "ark": "^"},
                      {"text": "won", "ptb": "VBD", "ark": "V"}]}
    assert tagged_text(src) == "Obama/NNP won/VBD"
    assert tagged_text(src, "ark") == "Obama/^ won/V"
    out = render_hit({"_id": "p1", "_source": src})
    assert "p1" in out and "Obama/NNP" in out and "#win" in out


def test_rendering_shows_each_suggestions_source_and_probability() -> None:
    src = {"id": "p2", "text": "Obama won", "user_hashtags": [],
           "hashtags": [{"text": "obama", "score": 0.4213, "source": "similar posts"},
                        {"text": "win", "score": 0.0625, "source": "trending"}]}
    out = render_hit({"_id": "p2", "_source": src})
    assert "suggested #obama (similar posts, 0.42) #win (trending, 0.06)" in out
