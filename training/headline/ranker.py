"""Fit and measure the headline ranker (nlp_models/headline/ranker.py) offline.

    python -m training ranker collect --model FILE --data PAIRS.jsonl --candidates OUT.jsonl
        [--limit N] [--every K] [--target 12] [--noun-groups]
    python -m training ranker fit --candidates DEV.jsonl [--candidates ...] --ranker RANKER.json
    python -m training ranker evaluate --candidates TEST.jsonl --ranker RANKER.json [--show N]

``collect`` proposes every article's candidates with an English full generator file that
holds a compressor (``training lead --spans compressed``): the beam's 4 best, the
compressor's deletions of the first sentence at the target and target ± 4 words (each also
in few runs) and at its own length (with ``--noun-groups``, each keeping its noun groups
whole or with their heads: ``compressor.noun_groups``), and the lead trimmed by rule;
withholds, with the reason counted, those that state a number or name the article lacks,
say a word twice, or are shorter than 4 or longer than 30 words
(``ranker.withheld_because``); judges the rest with the generator; writes each with its
features and its ROUGE-L F against the editors' headline. ``fit`` fits the pairwise
logistic regression; ``evaluate`` compares the ranker's first candidate with each source's
own first, the served rule's order and the best candidate (an upper bound).
"""

from __future__ import annotations

import itertools
import json
import sys
from collections import Counter
from pathlib import Path

import numpy as np

from nlp_models.headline.compressor import Tagger, is_word, tokens
from nlp_models.headline.lead import first_sentence
from nlp_models.headline.predictor import HeadlinePredictor
from nlp_models.headline.ranker import (
    FEATURES,
    Candidate,
    Ranker,
    article_vocabulary,
    features,
    withheld_because,
)
from nlp_models.headline.titles import headline_titles
from nlp_models.headline.trim import trimmed_lead
from training.headline.metrics import rouge_per_article

SPREAD = 4  # the compressor's lengths: target - SPREAD, target, target + SPREAD
MIN_GAP = 0.05  # two candidates closer than this in ROUGE-L F make no training pair


def propose(pred: HeadlinePredictor, articles: list[str], target: int, beam: int = 4,
            tagger: Tagger | None = None) -> list[list[tuple[str, str]]]:
    """(text, source) per article, deduplicated, in proposal order, before filtering;
    `tagger`: the compressions keep noun groups whole or with their heads."""
    if pred.compressor is None:
        raise ValueError("collect needs a generator file with a compressor "
                         "(python -m training lead --spans compressed)")
    read = [headline_titles(pred._read(a)) for a in articles]
    sources, _ = pred._sources(read)
    out: list[list[tuple[str, str]]] = [[] for _ in articles]
    lengths = [max(3, target - SPREAD), target, target + SPREAD]
    for batch in pred._encoded(sources):
        beams = pred._search(batch, [read[i] for i in batch.group], beam, beam)
        for k, i in enumerate(batch.group):
            proposed = [(text, "beam") for text, _ in beams[k]]
            sentence = first_sentence(read[i])
            if sentence:
                kept = pred.compressor.compressions(sentence, lengths, runs=True,
                                                    tagger=tagger)
                proposed += [(text, "compressed") for text in kept.values()]
            proposed.append((trimmed_lead(read[i], target), "trimmed"))
            first_source: dict[str, str] = {}  # a text proposed twice keeps its first source
            for text, source in proposed:
                if text.strip():
                    first_source.setdefault(text, source)
            out[i] = list(first_source.items())
    return out


def collect(pred: HeadlinePredictor, pairs: list[dict], target: int, out: Path,
            tagger: Tagger | None = None) -> int:
    """Write one JSON line per article: its candidates with features and ROUGE-L F."""
    count = 0
    with out.open("w") as f:
        for start in range(0, len(pairs), 32):
            chunk = pairs[start: start + 32]
            articles = [p["article"] for p in chunk]
            proposed_all = propose(pred, articles, target, tagger=tagger)
            for pair, proposed in zip(chunk, proposed_all, strict=True):
                row = candidates_row(pred, pair, proposed, target)
                f.write(json.dumps(row, ensure_ascii=False) + "\n")
                count += 1
            print(f"collect: {count}/{len(pairs)} articles", file=sys.stderr, flush=True)
    return count


def candidates_row(pred: HeadlinePredictor, pair: dict, proposed: list[tuple[str, str]],
                   target: int) -> dict:
    article = headline_titles(pred._read(pair["article"]))
    reasons = [withheld_because(t, article) for t, _ in proposed]
    kept = [p for p, why in zip(proposed, reasons, strict=True) if why is None]
    withheld = dict(Counter(why for why in reasons if why))
    if not kept:
        return {"id": pair.get("id", ""), "headline": pair["headline"], "candidates": [],
                "withheld": withheld}
    judged = pred.judge(article, [t for t, _ in kept])
    toks = tokens(first_sentence(article))
    logits = pred.compressor.keep_logits([toks])[0] if toks else []
    words = [(t.lower(), x) for t, x in zip(toks, logits, strict=False) if is_word(t)]
    article_pairs, article_words = article_vocabulary(article)
    scores = rouge_per_article([t for t, _ in kept], [pair["headline"]] * len(kept), "en")
    rl = [s["rougeL"][2] for s in scores]
    return {"id": pair.get("id", ""), "headline": pair["headline"], "withheld": withheld,
            "candidates": [
                {"text": t, "source": s, "rougeL": r,
                 "features": features(t, s, j, [w for w, _ in words], [x for _, x in words],
                                      article_pairs, article_words, target)}
                for (t, s), j, r in zip(kept, judged, rl, strict=True)]}


def read_rows(paths: list[Path]) -> list[dict]:
    return [json.loads(line) for p in paths for line in p.open() if line.strip()]


def matrix(candidates: list[dict]) -> np.ndarray:
    return np.array([[c["features"][name] for name in FEATURES] for c in candidates])


def fit(rows: list[dict], c: float = 1.0) -> Ranker:
    """Pairwise logistic regression (scikit-learn) on feature differences of two candidates
    of one article, labelled by which is closer to the editors' headline; the scaling is
    folded into the weights so the ranker reads raw features."""
    from sklearn.linear_model import LogisticRegression

    diffs, labels = [], []
    for row in rows:
        cands = row["candidates"]
        x = matrix(cands) if cands else None
        for a, b in itertools.combinations(range(len(cands)), 2):
            gap = cands[a]["rougeL"] - cands[b]["rougeL"]
            if abs(gap) >= MIN_GAP:
                diffs += [x[a] - x[b], x[b] - x[a]]
                labels += [int(gap > 0), int(gap < 0)]
    if not diffs:
        raise ValueError("no pair of candidates differs by MIN_GAP: nothing to fit")
    d = np.array(diffs)
    scale = d.std(axis=0)
    scale[scale == 0] = 1.0
    model = LogisticRegression(C=c, fit_intercept=False, max_iter=1000)
    model.fit(d / scale, np.array(labels))
    weights = model.coef_[0] / scale
    return Ranker({name: round(float(w), 6) for name, w in zip(FEATURES, weights, strict=True)})


def as_candidate(c: dict) -> Candidate:
    return Candidate(c["text"], c["source"], c["features"])


def evaluate(rows: list[dict], ranker: Ranker, show: int = 0) -> dict:
    """Mean ROUGE-L F ×100 of the first candidate each way picks (articles without any
    candidate count 0 for all), and the mean words of the ranker's picks; `show`: print the
    first articles' picks to stderr, to be read."""
    picks: dict[str, list[float]] = {k: [] for k in ("ranker", "beam_first", "compressed_first",
                                                     "trimmed", "judge_best", "oracle")}
    words, chosen_from = [], {"beam": 0, "compressed": 0, "trimmed": 0}
    for row in rows:
        cands = row["candidates"]
        if not cands:
            for v in picks.values():
                v.append(0.0)
            continue
        best = max(range(len(cands)), key=lambda i: ranker.score(as_candidate(cands[i])))
        chosen_from[cands[best]["source"]] += 1
        words.append(len(cands[best]["text"].split()))
        picks["ranker"].append(cands[best]["rougeL"])
        for name, source in (("beam_first", "beam"), ("compressed_first", "compressed"),
                             ("trimmed", "trimmed")):
            first = next((c for c in cands if c["source"] == source), None)
            picks[name].append(first["rougeL"] if first else 0.0)
        picks["judge_best"].append(max(cands, key=lambda c: c["features"]["judge"])["rougeL"])
        picks["oracle"].append(max(c["rougeL"] for c in cands))
        if show > 0:
            show -= 1
            firsts = {c["source"]: c["text"] for c in reversed(cands)}
            print(f"editors:    {row['headline']}\nranker:     {cands[best]['text']}\n"
                  f"compressed: {firsts.get('compressed', '-')}\n"
                  f"beam:       {firsts.get('beam', '-')}\n", file=sys.stderr)
    return {"articles": len(rows),
            "rougeL": {k: round(100 * sum(v) / max(len(v), 1), 2) for k, v in picks.items()},
            "ranker_words": round(sum(words) / max(len(words), 1), 2),
            "ranker_sources": chosen_from}
