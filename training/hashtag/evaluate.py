"""Score a hashtag generator on a JSONL test file with the paper's protocol.

    python -m training evaluate hashtag --data FILE.jsonl --lang en|zh [--model PATH]
        [--predictions OUT.jsonl]

ROUGE scores the hashtags of the best beam sequence; F1@k pools the hashtags of the top
`n_best` sequences of a beam of `beam` (paper: beam 20, top 10), best first, de-duplicated.
Without --model the newest shipped `hashtag_generator` version for the language is used.
Every model decodes as served, with the serving version's blocklist (predictor.py): a
candidate sequence with a blocklisted hashtag is passed over.

`by_length` scores two halves of the test set separately: posts with at most top_k
segments, where SegTrm's selection keeps every segment (soft is then the SgT encoder plus an
ordinary decoder), and longer posts, where selection drops some. The split uses the
checkpoint's segment_len and top_k, which every model of a config shares, so the halves are
the same posts for the Transformer and for SegTrm; comparing models per half separates what
selection does from what the rest of the model does. `by_presence` splits the posts by
whether one of their reference hashtags occurs in the text (normalized, see
`hashtag_in_text`): selecting segments can only help where there is something to select.

Collapse onto a few training favourites shows in `distinct_best` (how many different best
sequences) and `top_share` (the share of posts whose best sequence is the most frequent
one). The checkpoint's prior weight λ re-ranks the beam (predictor.py); `shown` is what
serving would show with the checkpoint's threshold (tune.py). `--predictions` writes one
JSON line per post (`text`, `references`, `generated`: the best sequence's hashtags, joined
as served) so anyone can read what the model says.
"""

from __future__ import annotations

import json
import math
import sys
import time
from collections import Counter
from pathlib import Path

from nlp_models import registry
from nlp_models.hashtag.blocklist import Blocklist
from nlp_models.hashtag.predictor import Generated, HashtagPredictor
from nlp_models.hashtag.text import join_words, normalize_hashtag
from training.hashtag.data import Pair, read_pairs
from training.hashtag.metrics import gold_keys, hashtag_key, score, shown_hits
from training.repository import shipped


def shipped_checkpoint(lang: str) -> Path:
    """The serving version's checkpoint for `lang` in the repository's model_repository."""
    return shipped(registry.HASHTAG.name, f"hashtag_{lang}.pt")


def load_predictor(model: str | None, lang: str | None, threads: int) -> HashtagPredictor:
    """A checkpoint (default: the shipped one for `lang`) decoding as served: with the
    serving version's blocklist, so that scores are those of what users would see."""
    if model is None and lang is None:
        raise ValueError("name a checkpoint or a language")
    predictor = HashtagPredictor(model or shipped_checkpoint(lang), threads=threads)
    if lang is not None and predictor.lang != lang:
        raise SystemExit(f"{model} is a {predictor.lang!r} model, but --lang is {lang!r}")
    predictor.blocklist = Blocklist.load(shipped(registry.HASHTAG.name, "blocklist.txt"))
    return predictor


def evaluate(data: str, lang: str, model: str | None = None, beam: int = 20,
             n_best: int = 10, predictions: str | None = None, threads: int = 2,
             prior_weight: float | None = None) -> dict:
    """Scores as JSON-able dict. `threads`: torch threads; 1 when the CPUs are shared (two
    threads on an oversubscribed 2-core machine wait on each other at every operation).
    `prior_weight`: overrides the checkpoint's (predictor.py)."""
    predictor = load_predictor(model, lang, threads)
    if prior_weight is not None:
        predictor.prior_weight = prior_weight
    pairs = read_pairs(data)
    t0, outputs = time.time(), []
    for i in range(0, len(pairs), 64):
        chunk = [p.text for p in pairs[i : i + 64]]
        outputs += predictor.generate(chunk, beam=beam, n_best=n_best)
        print(f"\r{len(outputs)}/{len(pairs)} posts", end="", file=sys.stderr, flush=True)
    print(file=sys.stderr)
    result = {**_score(outputs, pairs, lang), **collapse(outputs),
              "shown": shown(outputs, pairs, lang, predictor.min_score)}
    if predictions:
        write_predictions(predictions, outputs, pairs, lang)
    long_post = [_segments(predictor, p.text) > predictor.cfg.top_k for p in pairs]
    present = [hashtag_in_text(p) for p in pairs]
    result["by_length"] = _halves(outputs, pairs, lang, long_post,
                                  "at_most_top_k_segments", "more_segments")
    result["by_presence"] = _halves(outputs, pairs, lang, present,
                                    "no_hashtag_in_text", "a_hashtag_in_text")
    return {**result, "model": predictor.meta.get("run", str(model)), "beam": beam,
            "n_best": n_best, "prior_weight": predictor.prior_weight,
            "seconds": round(time.time() - t0, 1)}


def collapse(outputs: list[Generated]) -> dict:
    """How many different best sequences over all posts (`distinct_best`), and the share of
    posts whose best sequence is the most frequent one (`top_share`): a model that ignores
    the post has few, and one that falls back on a training favourite has a large share."""
    counts = Counter(tuple(map(tuple, o.best)) for o in outputs)
    top = counts.most_common(1)[0][1] if counts else 0
    return {"distinct_best": len(counts), "top_share": round(top / max(len(outputs), 1), 4)}


def shown(outputs: list[Generated], pairs: list[Pair], lang: str,
          min_score: float | None) -> dict:
    """What serving would show with the checkpoint's threshold: the ranked hashtags whose
    score reaches `min_score` (exactly the served ones with --beam 4 --n-best 3, the served
    model's settings). `posts` is the share of posts that get any; precision/recall/f1 are
    micro-averaged over shown and reference hashtags; `top_share` is the share of posts whose
    first shown hashtag is the most frequent first shown one (the best sequence can be
    hidden by the threshold while a lower-ranked favourite is shown)."""
    shown_words = [[words for words, score in o.ranked if min_score is None or score >= min_score]
                   for o in outputs]
    right, total, posts = shown_hits(shown_words, [p.hashtags for p in pairs], lang)
    first = Counter(hashtag_key(words[0], lang) for words in shown_words if words)
    gold = sum(len(gold_keys(p.hashtags, lang)) for p in pairs)
    precision, recall = right / max(total, 1), right / max(gold, 1)
    top = first.most_common(1)[0][1] if first else 0
    return {"min_score": min_score, "posts": round(posts / max(len(pairs), 1), 4),
            "top_share": round(top / max(len(pairs), 1), 4),
            "precision": round(precision, 4), "recall": round(recall, 4),
            "f1": round(2 * precision * recall / (precision + recall), 4) if right else 0.0}


def write_predictions(path: str, outputs: list[Generated], pairs: list[Pair], lang: str) -> None:
    """One JSON line per post: its text, reference hashtags and generated (best sequence)."""
    with open(path, "w", encoding="utf-8") as f:
        for o, p in zip(outputs, pairs, strict=True):
            row = {"text": p.text, "references": p.hashtags,
                   "generated": [join_words(words, lang) for words in o.best]}
            f.write(json.dumps(row, ensure_ascii=False) + "\n")


def _score(outputs: list[Generated], pairs: list[Pair], lang: str) -> dict:
    return score([o.best for o in outputs], [[w for w, _ in o.ranked] for o in outputs],
                 [p.hashtags for p in pairs], lang)


def _halves(outputs: list[Generated], pairs: list[Pair], lang: str, flags: list[bool],
            if_false: str, if_true: str) -> dict:
    """Scores of the posts whose flag is False and of those whose flag is True."""
    return {name: _score([o for o, f in zip(outputs, flags, strict=True) if f == want],
                         [p for p, f in zip(pairs, flags, strict=True) if f == want], lang)
            for name, want in ((if_false, False), (if_true, True))}


def hashtag_in_text(pair: Pair) -> bool:
    """Does a reference hashtag occur in the post, both lower-cased without spaces or '#'
    (`#BostonStrong` in "boston strong!" does; `#maga` in "Make America great" does not)?"""
    text = normalize_hashtag(pair.text)
    return any(len(tag) > 1 and tag in text for tag in map(normalize_hashtag, pair.hashtags))


def _segments(predictor: HashtagPredictor, text: str) -> int:
    """How many segments SegTrm's layout cuts the post into (for any variant's config)."""
    tokens = predictor.vocab.encode(text)[: predictor.cfg.max_source]
    return max(1, math.ceil(len(tokens) / predictor.cfg.segment_len))
