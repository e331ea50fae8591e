"""Decoding and validation of raw articles, and building the ``EnrichedArticle``.

Pure functions on protobuf messages, like ``posts.py``: the agent stays a thin loop and every
rule is unit-testable without Kafka or Triton. Outcomes for bad input:

- undecodable bytes, no id, an empty body: the article is rejected (dead letter, reason);
- a body over the character limit: cut, and ``truncated`` set (bodies over the broker's
  2 MiB message limit never reach the topic: the replay producer refuses them);
- a phrase that cannot be used -- blank, over MAX_PHRASE_CHARS characters, beyond the first
  MAX_PHRASES, or refused by the model (too long for a headline, a script the model's
  language does not use, a language without a model): no constrained candidates for it,
  and an issue in ``EnrichedArticle.issues`` saying why; the rest of the article is served.
"""

from __future__ import annotations

from dataclasses import dataclass
from datetime import UTC, datetime

from services import errors
from services.fields import (
    check_id,
    check_key,
    check_lang,
    check_text,
    check_timestamp,
    has_control,
    is_blank,
)
from services.headlines import CONSTRAINED, FULL, Answer
from services.limits import (
    MAX_NAME_CHARS,
    MAX_PHRASE_CHARS,
    MAX_PHRASES,
    MAX_REQUIRED_PHRASES,
    MAX_TITLE_CHARS,
)
from services.pb import messages_pb2 as pb

#: An issue names its phrase; a longer one is cut (a 1 MB phrase must not double the record).
ISSUE_PHRASE_CHARS = 10 * MAX_PHRASE_CHARS


@dataclass(frozen=True)
class PreparedArticle:
    """A valid article ready for generation; ``article.body`` is already cut to the limit."""

    article: pb.Article
    truncated: bool

    def phrases(self) -> tuple[list[str], list[pb.GenerationIssue]]:
        """The distinct required phrases to generate for, and issues for the others."""
        usable: list[str] = []
        issues: list[pb.GenerationIssue] = []
        for phrase in dict.fromkeys(p.strip() for p in self.article.required_phrases):
            status = message = ""
            if is_blank(phrase):
                status, message = "empty_phrase", "the required phrase is blank"
            elif len(phrase) > MAX_PHRASE_CHARS:
                status, message = "phrase_too_long", (
                    f"the phrase has {len(phrase)} characters; the limit is {MAX_PHRASE_CHARS}")
                if len(phrase) > ISSUE_PHRASE_CHARS:  # the issue names it, cut
                    phrase = phrase[:ISSUE_PHRASE_CHARS] + "…"
            elif has_control(phrase) or "\n" in phrase:
                status, message = "invalid_phrase", "the phrase contains control characters"
            elif len(usable) == MAX_PHRASES:
                status, message = "too_many_phrases", (
                    f"only the first {MAX_PHRASES} phrases of an article are served")
            if status:
                issues.append(pb.GenerationIssue(kind=pb.CONSTRAINED, phrase=phrase,
                                                 status=status, message=message))
            else:
                usable.append(phrase)
        return usable, issues


def decode_article(raw: bytes | None, max_bytes: int) -> pb.Article:
    return errors.decode(pb.Article, raw, max_bytes)


def validate_article(article: pb.Article, now: datetime) -> None:
    """Raise ``Rejected(INVALID)`` unless id and body are usable and every other field is
    within its limits (``services.fields``)."""
    check_id("article", article.id)
    if is_blank(article.body):
        raise errors.Rejected(errors.INVALID, f"article {article.id!r} has an empty body")
    check_lang(article.lang)
    check_text("source", article.source, MAX_NAME_CHARS)
    if article.HasField("title"):
        check_text("title", article.title, MAX_TITLE_CHARS)
    if article.HasField("published_at"):
        check_timestamp("published_at", article.published_at, now)
    if len(article.required_phrases) > MAX_REQUIRED_PHRASES:
        raise errors.Rejected(errors.INVALID, (
            f"{len(article.required_phrases)} required phrases; the limit is "
            f"{MAX_REQUIRED_PHRASES} (the first {MAX_PHRASES} are served)"))


def prepare_article(raw: bytes | None, *, max_bytes: int, max_chars: int,
                    key: bytes | None = None, now: datetime | None = None) -> PreparedArticle:
    """Decode, validate and cut one raw message (and its Kafka ``key``); raises
    ``Rejected``. ``now`` bounds ``published_at`` (default: the current time)."""
    check_key(key)
    article = decode_article(raw, max_bytes)
    validate_article(article, now or datetime.now(UTC))
    if len(article.body) <= max_chars:
        return PreparedArticle(article, truncated=False)
    cut = pb.Article()
    cut.CopyFrom(article)
    cut.body = article.body[:max_chars]
    return PreparedArticle(cut, truncated=True)


def headline_language(article: pb.Article) -> str:
    """The language the models are asked for; empty lets them guess from the script."""
    return article.lang


KINDS = {FULL: pb.FULL, CONSTRAINED: pb.CONSTRAINED}


def build_enriched_article(prepared: PreparedArticle, answers: list[Answer],
                           now: datetime) -> pb.EnrichedArticle:
    """Candidates of every model call, best first per call; refusals become issues, after
    the issues of phrases that were never sent to a model."""
    out = pb.EnrichedArticle(article=prepared.article, truncated=prepared.truncated,
                             issues=prepared.phrases()[1])
    for a in answers:
        r, kind = a.result, KINDS[a.kind]
        out.truncated |= r.truncated
        if r.status != "ok":
            out.issues.append(pb.GenerationIssue(kind=kind, phrase=r.phrase, status=r.status,
                                                 message=r.message))
            continue
        model = pb.ModelRef(name=a.model, version=a.version)
        for text, score in r.candidates:
            out.candidates.append(pb.HeadlineCandidate(
                text=text, score=score, kind=kind, phrase=r.phrase, model=model))
    out.processed_at.FromDatetime(now)
    return out
