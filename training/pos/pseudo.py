"""Pseudo-labelled tweets for one head: raw tweets that every teacher tags identically.

    python -m training data pos-pseudo --teacher A.pt --teacher B.pt ... --out data/pos/pseudo
        [--tweets 8000] [--tagset ptb|ark]

The PTB head has only 551 tagged tweets (Ritter's) beside 10K chat lines; unlabeled tweets
are plentiful (`extra/tweets_en/`, ~260K distinct). Vote-constrained bootstrapping
(Derczynski et al. 2013, "Twitter Part-of-Speech Tagging for All") tags raw tweets with
several taggers and keeps only those on which all of them agree on every token: about half
of the tweets, and the easier half, but their tags are right far more often than the
teachers' average. The tweets are drawn in a fixed shuffled order (seed 13), tokenized by
the served tokenizer, 5-40 tokens long; no test or dev text of `pos/` is among them
(`overlap` in the summary counts exact token sequences shared with any `pos/` file).

The ARK head (`--tagset ark`) has 1,327 tagged tweets (OCT27 train + dev) and the same
raw tweets to learn from. Writes OUT/tweets.conll (`TOKEN<TAB>TAG`, the teachers' tags of
that head), read by a config's [data] train as `"data/pos/pseudo/tweets" = "ptb"` (or
`"ark"`); the last stdout line is a JSON summary.
"""

from __future__ import annotations

import json
import random
import time
from collections.abc import Sequence
from pathlib import Path

import torch

from nlp_models.pos.predictor import PosPredictor
from nlp_models.pos.tokenizer import tokenize
from training.paths import data_dir
from training.pos.data import read_conll
from training.pos.embeddings import raw_tweets
from training.provenance import sha256

CHUNK = 2000  # tweets tagged per round: progress output and an early stop


def unanimous(sentences: Sequence[list[str]],
              votes: Sequence[Sequence[list[str]]]) -> list[tuple[list[str], list[str]]]:
    """(tokens, tags) of the sentences every teacher tagged identically. `votes[t][i]` is
    teacher t's tag sequence for sentence i."""
    if not votes:
        raise ValueError("no teachers")
    return [(tokens, votes[0][i]) for i, tokens in enumerate(sentences)
            if all(v[i] == votes[0][i] for v in votes[1:])]


def build(teachers: list[str], out: Path, want: int = 8000, tagset: str = "ptb", seed: int = 13,
          min_tokens: int = 5, max_tokens: int = 40) -> dict:
    if len(teachers) < 2:
        raise SystemExit("pos-pseudo needs at least two --teacher checkpoints to vote")
    t0 = time.time()
    root = data_dir()
    texts = list(dict.fromkeys(raw_tweets(root)))
    random.Random(seed).shuffle(texts)
    models = [PosPredictor(t) for t in teachers]
    for path, m in zip(teachers, models, strict=True):
        if tagset not in m.tagsets:
            raise SystemExit(f"teacher {path} has no {tagset!r} head (it has {m.tagsets})")
    kept: list[tuple[list[str], list[str]]] = []
    tagged = 0
    for k in range(0, len(texts), CHUNK):
        sents = [[s.text for s in tokenize(t)] for t in texts[k:k + CHUNK]]
        sents = [s for s in sents if min_tokens <= len(s) <= max_tokens]
        tagged += len(sents)
        votes = [[tags[tagset] for tags in m.tag_tokens(sents)] for m in models]
        kept += unanimous(sents, votes)
        print(f"{tagged} tweets tagged, {len(kept)} unanimous ({time.time() - t0:.0f} s)",
              flush=True)
        if len(kept) >= want:
            break
    agreement = len(kept) / max(tagged, 1)  # of every tweet tagged, before the cut to `want`
    kept = kept[:want]
    known = {tuple(s.tokens) for path in (root / "pos").rglob("*.conll")
             for s in read_conll(path, "any")}
    out.mkdir(parents=True, exist_ok=True)
    with open(out / "tweets.conll", "w", encoding="utf-8") as f:
        for tokens, tags in kept:
            f.write("".join(f"{w}\t{t}\n" for w, t in zip(tokens, tags, strict=True)) + "\n")
    return {"out": str(out / "tweets.conll"), "tweets": len(kept),
            "tokens": sum(len(t) for t, _ in kept), "tagged": tagged,
            "tagset": tagset, "agreement": round(agreement, 4),
            "overlap": sum(tuple(t) in known for t, _ in kept),
            "teachers": {t: sha256(t) for t in teachers}, "seed": seed,
            "seconds": round(time.time() - t0, 1)}


def main(teachers: list[str], out: str, want: int, tagset: str) -> None:
    # one thread: 8,000 ARK-head tweets took 110 s beside two trainings; two threads thrashed
    # there (over 200 s per 2,000 tweets)
    torch.set_num_threads(1)
    print(json.dumps(build(teachers, Path(out), want, tagset)))
