"""Headline metrics: ROUGE-1/2/L precision, recall and F (rouge-score), success rate, ALD.

English is scored with rouge-score's default tokenizer (lower-cased, letters and digits)
and the Porter stemmer, as the issue asks. Chinese is scored on characters, punctuation
and spaces removed (rouge-score's default tokenizer would delete every Chinese character).
Success rate (Seq2BF paper) is the share of headlines containing the required phrase
verbatim (case kept, runs of spaces collapsed; Chinese ignores spaces). ALD (its Eq. 2) is
the mean of generated minus reference length, in the same units ROUGE counts. The
repeated-word rate (English only) is the share of headlines in which a word of 3+ letters
or digits occurs twice, the symptom of a decoder that loops. `paired_bootstrap` gives the
confidence interval of a difference between two models scored on the same articles.
"""

from __future__ import annotations

import unicodedata
from collections import Counter
from collections.abc import Sequence

import numpy as np
from rouge_score.rouge_scorer import RougeScorer
from rouge_score.scoring import Score
from rouge_score.tokenizers import DefaultTokenizer

ROUGE_TYPES = ("rouge1", "rouge2", "rougeL")


class ChineseCharTokenizer:
    def tokenize(self, text: str) -> list[str]:
        return [c.lower() for c in text
                if not c.isspace() and not unicodedata.category(c).startswith("P")]


def tokenizer(lang: str):
    return ChineseCharTokenizer() if lang == "zh" else DefaultTokenizer(use_stemmer=False)


def rouge_per_article(predictions: Sequence[str], references: Sequence[str],
                      lang: str) -> list[dict[str, Score]]:
    """rouge-score's (precision, recall, fmeasure) per ROUGE type, one dict per article."""
    if len(predictions) != len(references):
        raise ValueError(f"{len(predictions)} predictions for {len(references)} references")
    if lang == "zh":
        scorer = RougeScorer(list(ROUGE_TYPES), tokenizer=ChineseCharTokenizer())
    else:
        scorer = RougeScorer(list(ROUGE_TYPES), use_stemmer=True)
    return [scorer.score(gold, predicted)
            for predicted, gold in zip(predictions, references, strict=True)]


def rouge(predictions: Sequence[str], references: Sequence[str], lang: str) -> dict:
    """Mean P/R/F per ROUGE type over articles, in 0..1, rounded to 4 places."""
    per_article = rouge_per_article(predictions, references, lang)
    n = max(len(per_article), 1)
    return {name: {k: round(sum(s[name][i] for s in per_article) / n, 4)
                   for i, k in enumerate("prf")}
            for name in ROUGE_TYPES}


def paired_bootstrap(a: Sequence[float], b: Sequence[float], resamples: int = 1000,
                     seed: int = 0) -> dict:
    """Mean per-article difference b - a with a 95 % percentile interval from resampling the
    articles with replacement. Both models are scored on the same resampled articles, so
    the interval reflects how much the difference depends on which articles were drawn,
    not the (much larger) spread of each model's own scores."""
    diffs = np.asarray(b, dtype=float) - np.asarray(a, dtype=float)
    if diffs.size == 0:
        raise ValueError("no articles to compare")
    draws = np.random.default_rng(seed).integers(0, diffs.size, (resamples, diffs.size))
    low, high = np.percentile(diffs[draws].mean(axis=1), [2.5, 97.5])
    return {"diff": round(float(diffs.mean()), 4), "low": round(float(low), 4),
            "high": round(float(high), 4)}


def _normalized(text: str, lang: str) -> str:
    return "".join(text.split()) if lang == "zh" else " ".join(text.split())


def contains_phrase(headline: str, phrase: str, lang: str) -> bool:
    return _normalized(phrase, lang) in _normalized(headline, lang)


def success_rate(predictions: Sequence[str], phrases: Sequence[str], lang: str) -> float:
    hits = sum(contains_phrase(h, p, lang) for h, p in zip(predictions, phrases, strict=True))
    return round(hits / max(len(phrases), 1), 4)


def ald(predictions: Sequence[str], references: Sequence[str], lang: str) -> float:
    """Average length difference, generated minus reference (negative = shorter)."""
    tok = tokenizer(lang)
    diffs = [len(tok.tokenize(p)) - len(tok.tokenize(r))
             for p, r in zip(predictions, references, strict=True)]
    return round(sum(diffs) / max(len(diffs), 1), 3)


def repeated_word_rate(predictions: Sequence[str]) -> float:
    """Share of English headlines with a word (3+ letters or digits, lower-cased) twice."""
    tok = tokenizer("en")

    def repeats(text: str) -> bool:
        counts = Counter(w for w in tok.tokenize(text) if len(w) >= 3)
        return any(n > 1 for n in counts.values())

    return round(sum(map(repeats, predictions)) / max(len(predictions), 1), 4)
