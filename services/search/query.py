"""Elasticsearch request bodies for the search CLI (pure, unit-tested).

Tag filters use the ``pos_terms`` keyword field written by the indexer: ``--tag NNP:obama``
is the term ``NNP|obama``, ``--ark-tag ^:obama`` is ``ark:^|obama``; a tag without a word
(``--tag NNP``) matches any word with that tag (prefix query).
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

from services.es.documents import ARK_PREFIX


@dataclass(frozen=True)
class SearchRequest:
    text: str = ""
    tags: list[str] = field(default_factory=list)  # "NNP:obama" or "NNP"
    ark_tags: list[str] = field(default_factory=list)  # "^:obama"
    hashtags: list[str] = field(default_factory=list)  # generated
    user_hashtags: list[str] = field(default_factory=list)
    platform: str = ""
    since: str = ""
    until: str = ""
    size: int = 10


def split_tag_spec(spec: str) -> tuple[str, str]:
    """``"NNP:obama"`` -> ``("NNP", "obama")``; the PTB tag ``:`` is written ``::word``."""
    if spec.startswith("::"):
        return ":", spec[2:]
    tag, _, word = spec.partition(":")
    if not tag:
        raise ValueError(f"tag spec {spec!r} has no tag (expected TAG:word or TAG)")
    return tag, word


def tag_clause(spec: str, prefix: str = "") -> dict[str, Any]:
    tag, word = split_tag_spec(spec)
    if word:
        return {"term": {"pos_terms": f"{prefix}{tag}|{word.lower()}"}}
    return {"prefix": {"pos_terms": f"{prefix}{tag}|"}}


def strip_hash(tag: str) -> str:
    return tag.lstrip("#").lower()


def filters(req: SearchRequest) -> list[dict[str, Any]]:
    """Non-scoring clauses: tags, hashtags, platform, time range."""
    out = [tag_clause(s) for s in req.tags]
    out += [tag_clause(s, ARK_PREFIX) for s in req.ark_tags]
    out += [{"term": {"hashtags.text": strip_hash(h)}} for h in req.hashtags]
    out += [{"term": {"user_hashtags": strip_hash(h)}} for h in req.user_hashtags]
    if req.platform:
        out.append({"term": {"platform": req.platform.lower()}})
    if req.since or req.until:
        bounds = {k: v for k, v in (("gte", req.since), ("lte", req.until)) if v}
        out.append({"range": {"created_at": bounds}})
    return out


def build_query(req: SearchRequest) -> dict[str, Any]:
    """Full-text ``text`` match (AND of words) over filters; newest first without text."""
    must: list[dict[str, Any]] = []
    if req.text:
        must.append({"match": {"text": {"query": req.text, "operator": "and"}}})
    body: dict[str, Any] = {
        "query": {"bool": {"must": must or [{"match_all": {}}], "filter": filters(req)}},
        "size": req.size,
        "track_total_hits": True,
    }
    if not req.text:
        body["sort"] = [{"created_at": {"order": "desc", "unmapped_type": "date"}}]
    return body


def top_hashtags_body(req: SearchRequest, size: int = 20) -> dict[str, Any]:
    """Aggregations of generated and user hashtags over the filtered posts."""
    body = build_query(req)
    body["size"] = 0
    body.pop("sort", None)
    body["aggs"] = {
        "generated": {"terms": {"field": "hashtags.text", "size": size}},
        "user": {"terms": {"field": "user_hashtags", "size": size}},
    }
    return body


def article_query(text: str = "", phrase: str = "", lang: str = "", size: int = 10
                  ) -> dict[str, Any]:
    """Articles whose body, title or headline candidates contain ``text``, optionally with
    a given required phrase and language; newest processed first."""
    must: list[dict[str, Any]] = []
    filters: list[dict[str, Any]] = []
    if text:
        must.append({"multi_match": {"query": text, "operator": "and",
                                     "fields": ["title", "body", "candidates.text"]}})
    if phrase:
        filters.append({"term": {"required_phrases": phrase}})
    if lang:
        filters.append({"term": {"lang": lang}})
    query = {"bool": {"must": must or [{"match_all": {}}], "filter": filters}}
    return {"query": query, "size": size, "sort": [{"processed_at": {"order": "desc"}}]}
