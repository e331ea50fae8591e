"""The Elasticsearch documents of tagged posts and enriched articles, and their indices.

Monthly indices ``<prefix>-YYYY.MM`` by ``created_at`` (UTC): old months can be closed or
deleted without touching new data, Kibana's data view ``posts-*`` spans them all, and the
index is a pure function of the post, so a redelivered post lands on the same ``_id`` in
the same index (idempotent). Posts without ``created_at`` go to ``<prefix>-undated``.

Tokens are kept twice: ``tokens`` (stored, not indexed) renders ``Obama/NNP`` in results,
and ``pos_terms`` makes "word X tagged T" a single keyword term: ``NNP|obama`` for the PTB
tag, ``ark:^|obama`` for the ARK tag (word lowercased). A nested mapping would answer the
same queries with heavier indexing and clumsier Kibana support.
"""

from __future__ import annotations

from datetime import UTC, datetime
from typing import Any

from google.protobuf.timestamp_pb2 import Timestamp

from services.hashtags import author_hashtags, memory_language
from services.pb import messages_pb2 as pb

ARK_PREFIX = "ark:"


def timestamp_iso(ts: Timestamp) -> str:
    return ts.ToDatetime(tzinfo=UTC).isoformat().replace("+00:00", "Z")


def index_name(prefix: str, post: pb.Post) -> str:
    """``<prefix>-YYYY.MM`` of the post's creation month (UTC)."""
    if not post.HasField("created_at"):
        return f"{prefix}-undated"
    created = post.created_at.ToDatetime(tzinfo=UTC)
    return f"{prefix}-{created:%Y.%m}"


def pos_terms(tokens: list[pb.Token]) -> list[str]:
    """Distinct ``TAG|word`` and ``ark:TAG|word`` terms, in token order."""
    return _token_fields(tokens)[1]


def _token_fields(tokens: list[pb.Token]) -> tuple[list[dict[str, Any]], list[str],
                                                    list[str], list[str]]:
    """``tokens``, ``pos_terms``, ``ptb_tags``, ``ark_tags`` of a document in one pass
    over the tokens (reading a protobuf field costs more than the work done with it)."""
    rendered: list[dict[str, Any]] = []
    terms: dict[str, None] = {}
    ptb_tags: dict[str, None] = {}
    ark_tags: dict[str, None] = {}
    for tok in tokens:
        text, ptb, ark = tok.text, tok.pos_ptb, tok.pos_ark
        rendered.append({"text": text, "start": tok.start, "end": tok.end, "ptb": ptb,
                         "ark": ark})
        word = text.lower()
        if ptb:
            terms[f"{ptb}|{word}"] = ptb_tags[ptb] = None
        if ark:
            terms[f"{ARK_PREFIX}{ark}|{word}"] = ark_tags[ark] = None
    return rendered, list(terms), list(ptb_tags), list(ark_tags)


def _model(ref: pb.ModelRef) -> dict[str, str] | None:
    return {"name": ref.name, "version": ref.version} if ref.name else None


def agreement(tagged: pb.TaggedPost, author: list[str] | None = None
              ) -> dict[str, int] | None:
    """Did the suggestions find the author's own hashtags? ``hit1`` 1: the first one is
    one of them; ``hit5`` 1: one of the first five is (0 or 1, so an average is a rate in
    Kibana). None when the author wrote none or no suggestion was attempted: every post
    that carries hashtags is a free test item, because suggestions are made as if the
    author had written none. ``author``: ``author_hashtags(tagged.post)`` if the caller
    has it already."""
    own = {h.lower() for h in (author_hashtags(tagged.post) if author is None else author)}
    if not own or tagged.hashtag_status != "ok":
        return None
    shown = [h.text.lstrip("#").lower() for h in tagged.hashtags]
    return {"hit1": int(bool(shown) and shown[0] in own),
            "hit5": int(any(tag in own for tag in shown[:5]))}


def post_document(tagged: pb.TaggedPost) -> dict[str, Any]:
    """The ``_source`` for one post (``_id`` is ``post.id``)."""
    post = tagged.post
    tokens, terms, ptb_tags, ark_tags = _token_fields(tagged.tokens)
    author = author_hashtags(post)
    doc: dict[str, Any] = {
        "id": post.id,
        "platform": pb.Platform.Name(post.platform).lower(),
        "lang": post.lang or None,
        "text": post.text,
        "author": post.author or None,
        "created_at": timestamp_iso(post.created_at) if post.HasField("created_at") else None,
        "attributes": dict(post.attributes),
        "user_hashtags": author,
        "tokens": tokens,
        "token_count": len(tokens),
        "pos_terms": terms,
        "ptb_tags": ptb_tags,
        "ark_tags": ark_tags,
        "hashtags": [{"text": h.text.lstrip("#"), "score": h.score,
                      "source": h.source or None} for h in tagged.hashtags],
        "pos_model": _model(tagged.pos_model),
        "hashtag_model": _model(tagged.hashtag_model),
        "hashtag_status": tagged.hashtag_status or None,
        "hashtag_lang": memory_language(post),
        "hashtag_agreement": agreement(tagged, author),
        "processed_at": (
            timestamp_iso(tagged.processed_at) if tagged.HasField("processed_at") else None
        ),
        "truncated": tagged.truncated,
        "original_length": tagged.original_length or len(post.text),
    }
    return doc


def article_index_name(prefix: str, article: pb.Article) -> str:
    """``<prefix>-YYYY.MM`` of the article's publication month (UTC)."""
    if not article.HasField("published_at"):
        return f"{prefix}-undated"
    return f"{prefix}-{article.published_at.ToDatetime(tzinfo=UTC):%Y.%m}"


def article_document(enriched: pb.EnrichedArticle) -> dict[str, Any]:
    """The ``_source`` for one article (``_id`` is ``article.id``).

    Candidates stay one array of objects (kind, phrase, text, score, model); the best full
    candidate is also a field of its own so a Kibana table can show it in one column."""
    a = enriched.article
    candidates = [
        {"text": c.text, "score": c.score, "kind": pb.HeadlineKind.Name(c.kind).lower(),
         "phrase": c.phrase or None, "model": _model(c.model)}
        for c in enriched.candidates
    ]
    full = [c for c in candidates if c["kind"] == "full"]
    return {
        "id": a.id,
        "source": a.source or None,
        "lang": a.lang or None,
        "title": a.title if a.HasField("title") else None,
        "body": a.body,
        "published_at": timestamp_iso(a.published_at) if a.HasField("published_at") else None,
        "required_phrases": list(a.required_phrases),
        "best_headline": full[0]["text"] if full else None,
        "candidates": candidates,
        "candidate_count": len(candidates),
        "issues": [
            {"kind": pb.HeadlineKind.Name(i.kind).lower(), "phrase": i.phrase or None,
             "status": i.status, "message": i.message}
            for i in enriched.issues
        ],
        "processed_at": (
            timestamp_iso(enriched.processed_at) if enriched.HasField("processed_at") else None
        ),
        "truncated": enriched.truncated,
    }


def now_utc() -> datetime:
    return datetime.now(UTC)
