"""Paired comparison of two headline models on the same articles.

    python -m training compare headline --data FILE.jsonl --model A.pt --model B.pt [--beam 4]
    python -m training compare constrained-headline --data FILE.jsonl --model A.pt --model B.pt \
        --strategy tok-b [--beam 3]
    (both: [--start N] [--resamples 1000] [--lang en|zh] [--allow-repeats])

A difference of a point of ROUGE between two models is within noise or not depending on the
articles; the mean scores of `evaluate` cannot tell. Here both models decode the same
articles (from line `--start` on: dev lines 0-299 select checkpoints during training, so
model choices are made on the rest), each article is scored with rouge-score as in
`evaluate`, and the difference B - A of each ROUGE F comes with a 95 % paired-bootstrap
interval (`metrics.paired_bootstrap`).

For constrained models the articles are also split by whether A's headline contains the
phrase. For a comparator without guaranteed inclusion (He et al.) as A, this shows how much
of B's lead comes from A's missed phrases and how much from the words around the phrase;
the two `share` values add up to the total ROUGE-L F difference.
"""

from __future__ import annotations

from training.headline.data import Pair, read_pairs
from training.headline.evaluate import (
    CONSTRAINED_MODEL,
    FULL_MODEL,
    best_headlines,
    data_language,
    load_predictor,
    pairs_with_phrases,
)
from training.headline.metrics import (
    ROUGE_TYPES,
    contains_phrase,
    paired_bootstrap,
    rouge_per_article,
)


def compare(data: str, models: list[str], strategy: str | None = None, beam: int | None = None,
            lang: str | None = None, start: int = 0, resamples: int = 1000,
            allow_repeats: bool = False) -> dict:
    """Full headlines without `strategy`, constrained ones (the pairs' phrases) with it."""
    if len(models) != 2:
        raise SystemExit(f"compare needs exactly two --model checkpoints, got {len(models)}")
    pairs = (pairs_with_phrases(data) if strategy else read_pairs(data))[start:]
    if not pairs:
        raise SystemExit(f"{data} has no articles from line {start} on")
    lang = data_language(pairs, lang)
    beam = beam or (3 if strategy else 4)
    repository = CONSTRAINED_MODEL if strategy else FULL_MODEL
    predictors = [load_predictor(m, lang, repository, allow_repeats) for m in models]
    predictions = [best_headlines(p, pairs, beam, strategy) for p in predictors]
    f_scores = [_f_per_article(pred, pairs, lang) for pred in predictions]
    result = {
        "articles": len(pairs), "start": start, "lang": lang, "beam": beam,
        "models": [p.name for p in predictors],
        "a": {name: _mean(f_scores[0][name]) for name in ROUGE_TYPES},
        "b": {name: _mean(f_scores[1][name]) for name in ROUGE_TYPES},
        "b_minus_a": {name: paired_bootstrap(f_scores[0][name], f_scores[1][name], resamples)
                      for name in ROUGE_TYPES},
    }
    if strategy:
        result["strategy"] = strategy
        result["by_a_inclusion"] = _by_inclusion(predictions[0], pairs, lang,
                                                 f_scores[0]["rougeL"], f_scores[1]["rougeL"])
    return result


def _f_per_article(predictions: list[str], pairs: list[Pair], lang: str) -> dict[str, list[float]]:
    scores = rouge_per_article(predictions, [p.headline for p in pairs], lang)
    return {name: [s[name].fmeasure for s in scores] for name in ROUGE_TYPES}


def _mean(values: list[float]) -> float:
    return round(sum(values) / len(values), 4)


def _by_inclusion(a_predictions: list[str], pairs: list[Pair], lang: str,
                  a_f: list[float], b_f: list[float]) -> dict:
    """ROUGE-L F of both models on the articles where A's headline has the phrase and on the
    rest; `share` is each subset's part of the total difference (its summed per-article
    differences over all articles, so the shares add up to the total exactly)."""
    included = [contains_phrase(h, p.phrase, lang)
                for h, p in zip(a_predictions, pairs, strict=True)]
    out = {}
    for label, wanted in (("included", True), ("missed", False)):
        rows = [i for i, inc in enumerate(included) if inc == wanted]
        if not rows:
            out[label] = {"articles": 0}
            continue
        out[label] = {"articles": len(rows), "a_rougeL_f": _mean([a_f[i] for i in rows]),
                      "b_rougeL_f": _mean([b_f[i] for i in rows]),
                      "share": round(sum(b_f[i] - a_f[i] for i in rows) / len(pairs), 4)}
    return out
