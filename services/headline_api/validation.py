"""Validation at the edge: a SuggestRequest becomes a plan of model calls, or an error
message for INVALID_ARGUMENT. Pure functions, unit-tested without a server.

Why every text field is checked for visible characters: the English models' tokenizer
drops format characters (U+200B, U+FEFF, bidi marks), some controls, U+2581 (its own space
symbol) and U+FFFD, so an article or phrase made only of them reaches the model as zero
tokens and crashes it (and, in Triton's dynamic batches, every request batched with it).
"""

from __future__ import annotations

import re
import unicodedata
from dataclasses import dataclass

from nlp_models.language import resolve_language
from nlp_models.limits import MAX_ARTICLE_CHARS, MAX_CANDIDATES
from services.fields import BLANK_GRAPHEMES, is_blank
from services.limits import MAX_LANG_CHARS, MAX_PHRASE_CHARS, MAX_PHRASES_PER_REQUEST
from services.pb import headline_api_pb2 as api

DEFAULT_CANDIDATES = 3
MIN_LENGTH, MAX_LENGTH = 10, 300
#: Candidates longer than this are dropped even with max_length 0: a model copying an
#: unknown token (e.g. a 100,000-emoji run the tokenizer reads as one piece) can write a
#: "headline" of megabytes, more than the 1 MiB response limit.
MAX_HEADLINE_CHARS = MAX_LENGTH
LANGUAGE_TAG = re.compile(r"[A-Za-z]{2,8}([-_][A-Za-z0-9]{1,8})*")
LANGUAGES = ("en", "zh")
ORDERS = {api.SEQ_B: "seq-b", api.SEQ_F: "seq-f", api.TOK_B: "tok-b", api.TOK_F: "tok-f",
          api.GENERATION_ORDER_UNSPECIFIED: ""}


class Invalid(ValueError):
    """The request cannot be served as sent; the message says what to change."""


class Unsupported(ValueError):
    """The request is well formed but the served models cannot take it (a language without
    a model): FAILED_PRECONDITION, which tells a client that resending will not help until
    the deployment changes."""


@dataclass(frozen=True)
class Plan:
    article: str
    language: str
    phrases: list[str]  # distinct, in request order
    full: bool  # generate free headlines too
    n: int  # candidates per generator call
    order: str  # "" = the model's default
    max_length: int  # 0 = no limit


def is_control_or_format(c: str) -> bool:
    """A control character other than whitespace (Cc) or a format character (Cf)."""
    category = unicodedata.category(c)
    return (category == "Cc" and not c.isspace()) or category == "Cf"


def is_invisible(c: str) -> bool:
    """Nothing a reader sees and nothing a model can use: control, format, blank graphemes."""
    return is_control_or_format(c) or c in BLANK_GRAPHEMES


def name_of(c: str) -> str:
    """'U+200B ZERO WIDTH SPACE', for messages (never the raw invisible character)."""
    fallback = "(a control character)" if unicodedata.category(c) == "Cc" else "(unnamed)"
    return f"U+{ord(c):04X} {unicodedata.name(c, fallback)}"


def shown(text: str, limit: int = 30) -> str:
    """A field's value as a message may quote it: cut, with invisible characters escaped."""
    cut = "".join(f"<{name_of(c).split()[0]}>" if is_invisible(c) or not c.isprintable()
                  else c for c in text[:limit])
    return repr(cut + ("..." if len(text) > limit else ""))


def clean_article(article: str) -> str:
    """The article without control and format characters: they carry no words, and a model
    would copy them into headlines (e.g. NUL bytes from a broken paste)."""
    return "".join(c for c in article if not is_control_or_format(c))


def check_article(article: str) -> str:
    """The article to send to the models, or Invalid."""
    if not article.strip():
        raise Invalid("article is empty (nothing but whitespace)")
    if len(article) > MAX_ARTICLE_CHARS:
        raise Invalid(f"article has {len(article)} characters; the limit is {MAX_ARTICLE_CHARS}")
    if is_blank(article):
        sample = next((c for c in article if not c.isspace()), article[0])
        raise Invalid(f"article has no visible characters, only whitespace, control or "
                      f"format characters such as {name_of(sample)}")
    return clean_article(article)


def check_language(language: str, article: str) -> str:
    """'en' or 'zh': as given (a BCP-47 tag) or detected from the article's script."""
    tag = language.strip()
    if tag and (len(tag) > MAX_LANG_CHARS or not LANGUAGE_TAG.fullmatch(tag)):
        raise Invalid(f"language {shown(tag)} is not a BCP-47 tag such as 'en' or 'zh-Hans'")
    resolved = resolve_language(tag, article)
    if resolved not in LANGUAGES:
        raise Unsupported(f"language {shown(tag)} has no headline model; use one of "
                          f"{', '.join(LANGUAGES)} or leave it empty to detect it")
    return resolved


def check_phrase(phrase: str) -> None:
    """A required phrase must be visible text: headlines contain it verbatim, and a model
    given a phrase of invisible characters has nothing to place."""
    if not phrase:
        raise Invalid("a required phrase is blank")
    if len(phrase) > MAX_PHRASE_CHARS:
        raise Invalid(f"required phrase {shown(phrase)} has {len(phrase)} characters; the "
                      f"limit is {MAX_PHRASE_CHARS}")
    hidden = next((c for c in phrase if is_invisible(c) or unicodedata.category(c) == "Cc"),
                  None)
    if hidden is not None:
        raise Invalid(f"required phrase {shown(phrase)} contains {name_of(hidden)}, an "
                      f"invisible or control character; remove it (headlines contain the "
                      f"phrase verbatim)")
    if is_blank(phrase):
        raise Invalid(f"required phrase {shown(phrase)} has no visible characters")


def plan(request: api.SuggestRequest) -> Plan:
    article = check_article(request.article)
    language = check_language(request.language, article)
    phrases = list(dict.fromkeys(p.strip() for p in request.required_phrases))
    if len(phrases) > MAX_PHRASES_PER_REQUEST:
        raise Invalid(f"{len(phrases)} required phrases; "
                      f"at most {MAX_PHRASES_PER_REQUEST} are allowed")
    for p in phrases:
        check_phrase(p)
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
