"""Validation at the edge: a SuggestRequest becomes a plan of model calls, or an error
message for INVALID_ARGUMENT. Pure functions, unit-tested without a server."""

from __future__ import annotations

from dataclasses import dataclass

from services.pb import headline_api_pb2 as api
from training.language import resolve_language

MAX_ARTICLE_CHARS = 100_000
MAX_PHRASES = 5
MAX_PHRASE_CHARS = 100
MAX_CANDIDATES = 5  # per generator call (the Triton models' CANDIDATES input)
DEFAULT_CANDIDATES = 3
MIN_LENGTH, MAX_LENGTH = 10, 300
LANGUAGES = ("en", "zh")
ORDERS = {api.SEQ_B: "seq-b", api.SEQ_F: "seq-f", api.TOK_B: "tok-b", api.TOK_F: "tok-f",
          api.GENERATION_ORDER_UNSPECIFIED: ""}


class Invalid(ValueError):
    """The request cannot be served as sent; the message says what to change."""


@dataclass(frozen=True)
class Plan:
    article: str
    language: str
    phrases: list[str]  # distinct, in request order
    full: bool  # generate free headlines too
    n: int  # candidates per generator call
    order: str  # "" = the model's default
    max_length: int  # 0 = no limit


def plan(request: api.SuggestRequest) -> Plan:
    article = request.article
    if not article.strip():
        raise Invalid("article is empty")
    if len(article) > MAX_ARTICLE_CHARS:
        raise Invalid(f"article has {len(article)} characters; the limit is {MAX_ARTICLE_CHARS}")
    language = resolve_language(request.language, article)
    if language not in LANGUAGES:
        raise Invalid(f"language {request.language!r} is not supported; use one of "
                      f"{', '.join(LANGUAGES)} or leave it empty to detect it")
    phrases = list(dict.fromkeys(p.strip() for p in request.required_phrases))
    if len(phrases) > MAX_PHRASES:
        raise Invalid(f"{len(phrases)} required phrases; at most {MAX_PHRASES} are allowed")
    for p in phrases:
        if not p:
            raise Invalid("a required phrase is blank")
        if len(p) > MAX_PHRASE_CHARS:
            raise Invalid(f"required phrase {p[:30]!r}... has {len(p)} characters; the limit "
                          f"is {MAX_PHRASE_CHARS}")
    n = request.num_candidates or DEFAULT_CANDIDATES
    if not 1 <= n <= MAX_CANDIDATES:
        raise Invalid(f"num_candidates is {request.num_candidates}; use 1 to {MAX_CANDIDATES}")
    if request.order not in ORDERS:
        raise Invalid(f"order {request.order} is not a GenerationOrder")
    if request.max_length and not MIN_LENGTH <= request.max_length <= MAX_LENGTH:
        raise Invalid(f"max_length is {request.max_length}; use 0 (no limit) or "
                      f"{MIN_LENGTH} to {MAX_LENGTH}")
    if request.skip_full and not phrases:
        raise Invalid("skip_full needs at least one required phrase")
    return Plan(article, language, phrases, not request.skip_full, n, ORDERS[request.order],
                request.max_length)
