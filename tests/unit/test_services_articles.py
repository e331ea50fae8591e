"""Articles: validation outcomes, phrase issues, the EnrichedArticle and its document."""

from __future__ import annotations

from datetime import UTC, datetime

import pytest

from nlp_models.contract import HeadlineResult
from services import errors
from services.es.documents import article_document, article_index_name
from services.es.template import mapping_properties
from services.headlines import CONSTRAINED, FULL, Answer
from services.limits import MAX_PHRASE_CHARS, MAX_PHRASES
from services.pb import messages_pb2 as pb
from services.stream.articles import (
    ISSUE_PHRASE_CHARS,
    build_enriched_article,
    prepare_article,
)

NOW = datetime(2026, 11, 22, 12, 0, tzinfo=UTC)


def raw(**fields) -> bytes:
    article = pb.Article(id="a1", lang="en", body="Toyota recalls 1 mln cars.", **fields)
    return article.SerializeToString()


def prepare(value: bytes, max_chars: int = 1000):
    return prepare_article(value, max_bytes=1 << 21, max_chars=max_chars)


@pytest.mark.parametrize(
    ("value", "code", "fragment"),
    [
        (b"\xff\xff", errors.DECODE_ERROR, "not an Article"),
        (pb.Article(id="a", body=" ").SerializeToString(), errors.INVALID, "empty body"),
        (pb.Article(body="text").SerializeToString(), errors.INVALID, "no id"),
        (None, errors.DECODE_ERROR, "tombstone"),
    ],
)
def test_unusable_articles_are_rejected_with_a_reason(value, code, fragment):
    with pytest.raises(errors.Rejected) as info:
        prepare(value)
    assert info.value.code == code and fragment in info.value.reason


def test_fields_that_would_fail_downstream_are_rejected_where_articles_enter():
    cases = {
        "published_at": pb.Article(id="a", body="b"),
        "required phrases": pb.Article(id="a", body="b", required_phrases=["p"] * 65),
        "lang contains control characters": pb.Article(id="a", body="b", lang="en\n"),
        "empty body": pb.Article(id="a", body="\u200b\u2060"),
    }
    cases["published_at"].published_at.seconds = 253_402_300_800  # year 10000
    for fragment, article in cases.items():
        with pytest.raises(errors.Rejected) as info:
            prepare_article(article.SerializeToString(), max_bytes=1 << 21, max_chars=100,
                            now=NOW)
        assert info.value.code == errors.INVALID and fragment in info.value.reason


def test_invisible_or_control_phrases_are_issues_not_model_calls():
    usable, issues = prepare(raw(required_phrases=["\u200b\ufeff", "a\x07b", "ok"])).phrases()
    assert usable == ["ok"]
    assert [i.status for i in issues] == ["empty_phrase", "invalid_phrase"]


def test_a_huge_phrase_is_named_cut_in_its_issue():
    _, issues = prepare(raw(required_phrases=["x" * 100_000])).phrases()
    assert issues[0].status == "phrase_too_long"
    assert len(issues[0].phrase) == ISSUE_PHRASE_CHARS + 1 and issues[0].phrase.endswith("…")


def test_long_bodies_are_cut_and_flagged():
    prepared = prepare(raw(), max_chars=6)
    assert prepared.article.body == "Toyota" and prepared.truncated


def test_phrases_that_cannot_be_served_become_issues_and_the_rest_is_kept():
    phrases = ["Toyota", "Toyota", " ", "x" * (MAX_PHRASE_CHARS + 1)]
    phrases += [f"p{i}" for i in range(MAX_PHRASES)]
    usable, issues = prepare(raw(required_phrases=phrases)).phrases()
    assert usable == ["Toyota"] + [f"p{i}" for i in range(MAX_PHRASES - 1)]
    assert [i.status for i in issues] == ["empty_phrase", "phrase_too_long", "too_many_phrases"]
    assert all(i.kind == pb.CONSTRAINED and i.message for i in issues)


def enriched() -> pb.EnrichedArticle:
    prepared = prepare(raw(required_phrases=["Toyota", "丰田"]))
    model = ("headline_generator", "1")
    generated = [
        Answer(FULL, 0, "", HeadlineResult((("Toyota recalls cars", -0.5), ("Recall", -0.9)),
                                           "ok", "en", False), *model),
        Answer(CONSTRAINED, 0, "Toyota", HeadlineResult(
            (("Toyota recalls 1 mln", -0.4),), "ok", "en", True, phrase="Toyota",
            strategy="tok-b"), *model),
        Answer(CONSTRAINED, 0, "丰田", HeadlineResult(
            (), "unsupported_phrase", "en", False, "mostly unknown", phrase="丰田"), *model),
    ]
    return build_enriched_article(prepared, generated, NOW)


def test_enriched_article_keeps_candidates_in_order_and_refusals_as_issues():
    out = enriched()
    assert [(c.kind, c.text, c.phrase) for c in out.candidates] == [
        (pb.FULL, "Toyota recalls cars", ""), (pb.FULL, "Recall", ""),
        (pb.CONSTRAINED, "Toyota recalls 1 mln", "Toyota")]
    assert [(i.phrase, i.status) for i in out.issues] == [("丰田", "unsupported_phrase")]
    assert out.truncated  # one model read only a prefix
    assert out.candidates[0].model.name == "headline_generator"


def test_article_document_fits_the_strict_mapping():
    doc = article_document(enriched())
    assert set(doc) <= set(mapping_properties("articles"))
    assert doc["best_headline"] == "Toyota recalls cars"
    assert doc["candidates"][2] == {"text": "Toyota recalls 1 mln", "score": pytest.approx(-0.4),
                                    "kind": "constrained", "phrase": "Toyota",
                                    "model": {"name": "headline_generator", "version": "1"}}
    assert doc["issues"][0]["status"] == "unsupported_phrase"


def test_articles_go_to_monthly_indices_by_publication_date():
    article = pb.Article(id="a")
    assert article_index_name("articles", article) == "articles-undated"
    article.published_at.FromDatetime(datetime(1987, 3, 9, tzinfo=UTC))
    assert article_index_name("articles", article) == "articles-1987.03"


def test_overlapping_index_prefixes_are_refused_at_configuration():
    from services.config import PipelineConfig

    overlapping = {"NLP_INDEX_PREFIX": "run-posts", "NLP_ARTICLE_INDEX_PREFIX": "run"}
    with pytest.raises(ValueError, match="overlap"):
        PipelineConfig.from_env(overlapping)
    distinct = PipelineConfig.from_env({"NLP_ARTICLE_INDEX_PREFIX": "news"})
    assert distinct.article_index_prefix == "news"
