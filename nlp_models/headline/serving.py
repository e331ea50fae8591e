"""Headline candidates for batches of requests: the logic the two Triton models wrap.

Kept out of the Triton entry points so the benchmark's in-process path and the served path
run the same code. Every request gets a `HeadlineResult` (nlp_models/contract.py) with a
`status`; only "ok" carries candidates. Statuses, in the order they are checked:

    empty_article         the article has no text
    unsupported_language  no model for the article's language (given, or guessed from script)
    empty_phrase          (constrained) the required phrase is blank
    phrase_too_long       (constrained) the phrase leaves no room for a headline around it
    unsupported_phrase    (constrained) most of the phrase is unknown to the language's
                          vocabulary, e.g. Chinese characters for the English model
    invalid_strategy      (constrained) not one of seq-b, seq-f, tok-b, tok-f

Articles longer than MAX_ARTICLE_CHARS are cut before tokenizing and marked `truncated`, as
are articles whose tokens exceed what the model reads (its max_source).
"""

from __future__ import annotations

from dataclasses import replace
from pathlib import Path

from nlp_models.contract import HeadlineResult
from nlp_models.headline.faithful import names_zh
from nlp_models.headline.predictor import HeadlinePredictor, Headlines
from nlp_models.headline.seq2bf import STRATEGIES
from nlp_models.headline.vocab import UNK
from nlp_models.language import resolve_language
from nlp_models.limits import MAX_ARTICLE_CHARS, MAX_CANDIDATES

LANGUAGES = ("en", "zh")
ROOM_FOR_HEADLINE = 4  # tokens a constrained headline needs besides the phrase


def _load(directory: str | Path) -> dict[str, HeadlinePredictor]:
    predictors = {lang: HeadlinePredictor.load(path) for lang in LANGUAGES
                  if (path := Path(directory) / f"headline_{lang}.pt").exists()}
    if not predictors:
        raise FileNotFoundError(f"no headline_en.pt or headline_zh.pt in {directory}")
    if "zh" in predictors:  # load jieba's dictionary now (~2 s), not in the first request
        names_zh("新华社北京电")
    return predictors


def _refusal(status: str, lang: str, message: str) -> HeadlineResult:
    return HeadlineResult((), status, lang, False, message)


def _result(out: Headlines, n: int, lang: str, cut: bool, phrase: str = "",
            strategy: str = "") -> HeadlineResult:
    return HeadlineResult(tuple(out.candidates[:n]), "ok", lang, out.truncated or cut,
                          phrase=phrase, strategy=strategy)


class _Service:
    def __init__(self, directory: str | Path, beam: int, n_best: int):
        self.beam, self.n_best = beam, n_best
        self.predictors = _load(directory)

    def versions(self) -> dict[str, str]:
        return {lang: p.name for lang, p in self.predictors.items()}

    def _counts(self, counts: list[int] | None, rows: int) -> list[int]:
        """Candidates per request: given (clamped to 1..MAX_CANDIDATES) or the default."""
        if counts is None:
            return [self.n_best] * rows
        return [min(n, MAX_CANDIDATES) if n > 0 else self.n_best for n in counts]

    def _search(self, counts: list[int]) -> tuple[int, int]:
        """(beam, n_best) for one decoding batch: wide enough for its largest request."""
        n = max(counts)
        return max(self.beam, n), n

    def _route(self, article: str, lang: str) -> tuple[str, HeadlineResult | None]:
        resolved = resolve_language(lang, article)
        if not article.strip():
            return resolved, _refusal("empty_article", resolved, "the article has no text")
        if resolved not in self.predictors:
            return resolved, _refusal("unsupported_language", resolved,
                                      f"no headline model for language {resolved!r}")
        return resolved, None


class HeadlineService(_Service):
    """Full headlines from `headline_<lang>.pt` files in one directory."""

    def __init__(self, directory: str | Path, beam: int = 4, n_best: int = 3):
        super().__init__(directory, beam, n_best)

    def generate(self, articles: list[str], langs: list[str],
                 counts: list[int] | None = None) -> list[HeadlineResult]:
        """`counts`: candidates per request (absent or <= 0: the configured n_best)."""
        counts = self._counts(counts, len(articles))
        results: list[HeadlineResult | None] = [None] * len(articles)
        by_lang: dict[str, list[int]] = {}
        for i, (article, lang) in enumerate(zip(articles, langs, strict=True)):
            resolved, refusal = self._route(article, lang)
            if refusal:
                results[i] = refusal
            else:
                by_lang.setdefault(resolved, []).append(i)
        for lang, idx in by_lang.items():
            cut = [articles[i][:MAX_ARTICLE_CHARS] for i in idx]
            outputs = self.predictors[lang].headlines(cut, *self._search([counts[i] for i in idx]))
            for i, text, out in zip(idx, cut, outputs, strict=True):
                results[i] = _result(out, counts[i], lang, len(text) < len(articles[i]))
        return results


class ConstrainedHeadlineService(_Service):
    """Headlines containing a required phrase (one phrase per request)."""

    def __init__(self, directory: str | Path, beam: int = 3, n_best: int = 3):
        super().__init__(directory, beam, n_best)

    def _check_phrase(self, phrase: str, strategy: str, lang: str) -> HeadlineResult | None:
        predictor = self.predictors[lang]
        if not phrase.strip():
            return _refusal("empty_phrase", lang, "the required phrase is blank")
        tokens = predictor.vocab.tokens(phrase)
        limit = predictor.cfg.max_target - ROOM_FOR_HEADLINE
        if len(tokens) > limit:
            return _refusal("phrase_too_long", lang, f"the phrase is {len(tokens)} tokens; at "
                            f"most {limit} fit in a headline")
        # Characters, not tokens: SentencePiece folds a run of unknown characters into one
        # [UNK] piece, so "丰田汽车" is one unknown token among one or two.
        unknown = sum(len(s.strip()) for i, s in tokens if i == UNK)
        if unknown * 2 > len("".join(phrase.split())):
            return _refusal("unsupported_phrase", lang,
                            f"the phrase is mostly unknown to the {lang} model's vocabulary")
        if strategy and strategy not in STRATEGIES:
            return _refusal("invalid_strategy", lang,
                            f"strategy {strategy!r} is not one of {', '.join(STRATEGIES)}")
        return None

    def generate(self, articles: list[str], langs: list[str], phrases: list[str],
                 strategies: list[str], counts: list[int] | None = None
                 ) -> list[HeadlineResult]:
        """`counts`: candidates per request (absent or <= 0: the configured n_best)."""
        counts = self._counts(counts, len(articles))
        results: list[HeadlineResult | None] = [None] * len(articles)
        groups: dict[tuple[str, str], list[int]] = {}
        for i, (article, lang) in enumerate(zip(articles, langs, strict=True)):
            resolved, refusal = self._route(article, lang)
            refusal = refusal or self._check_phrase(phrases[i], strategies[i], resolved)
            if refusal:
                results[i] = replace(refusal, phrase=phrases[i])
            else:
                strategy = strategies[i] or self.predictors[resolved].default_strategy
                groups.setdefault((resolved, strategy), []).append(i)
        for (lang, strategy), idx in groups.items():
            predictor = self.predictors[lang]
            cut = [articles[i][:MAX_ARTICLE_CHARS] for i in idx]
            outputs = predictor.constrained(cut, [phrases[i] for i in idx], strategy,
                                            *self._search([counts[i] for i in idx]))
            used = strategy if predictor.kind == "seq2bf" else "he"
            for i, text, out in zip(idx, cut, outputs, strict=True):
                results[i] = _result(out, counts[i], lang, len(text) < len(articles[i]),
                                     phrase=phrases[i], strategy=used)
        return results
