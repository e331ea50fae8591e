"""Post/hashtag pairs -> padded SegTrm batches.

A pair's target is the word-split hashtag sequence `h1 # h2 # ...` (see text.py) followed by
[SEP]; the decoder input is the same shifted right behind [S].
"""

from __future__ import annotations

import json
import random
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path

import torch

from nlp_models.hashtag.model import SegTrmConfig, encode_sources, pad
from nlp_models.hashtag.text import normalize_hashtag, target_words
from nlp_models.hashtag.vocab import SEP, S, Vocab


@dataclass
class Pair:
    text: str
    hashtags: list[str]
    source: str = ""


@dataclass
class Batch:
    ids: torch.Tensor  # (B, L) encoder input with [S]/[SEG]
    segs: torch.Tensor  # (B, L) segment ids
    y_in: torch.Tensor  # (B, T) [S] y1 .. y_{T-1}
    y_out: torch.Tensor  # (B, T) y1 .. [SEP], PAD where there is no target


def read_pairs(path: str | Path) -> list[Pair]:
    with open(path, encoding="utf-8") as f:
        return [Pair(d["text"], d["hashtags"], d.get("source", ""))
                for d in map(json.loads, f) if d.get("text")]


def training_pairs(train: list[Pair], dev_ood: list[Pair]) -> list[Pair]:
    """The training pairs minus every pair of a source held out in `dev_ood` (whole sources
    are held out, so no source of the second dev set is ever trained on)."""
    held = {p.source for p in dev_ood}
    return [p for p in train if p.source not in held]


def cap_recurring(pairs: list[Pair], cap: int, seed: int = 13) -> list[Pair]:
    """At most `cap` pairs per target sequence (the post's hashtags, normalized), chosen by a
    seeded shuffle, in their original order. A crawl that follows a few trending topics repeats
    each topic on thousands of posts (the Chinese COVID crawl: `最新疫情地图` on 1,631 posts);
    uncapped, the decoder learns these topics as an answer to any post."""
    order = list(range(len(pairs)))
    random.Random(seed).shuffle(order)
    seen: dict[tuple[str, ...], int] = {}
    keep = set()
    for i in order:
        key = tuple(normalize_hashtag(h) for h in pairs[i].hashtags)
        if seen.get(key, 0) < cap:
            seen[key] = seen.get(key, 0) + 1
            keep.add(i)
    return [p for i, p in enumerate(pairs) if i in keep]


def selection_score(dev: dict, dev_ood: dict | None) -> float:
    """Model selection: dev ROUGE-1, or the mean of the in-distribution and held-out-source
    dev ROUGE-1 when there is a second dev set."""
    return dev["rouge1"] if dev_ood is None else (dev["rouge1"] + dev_ood["rouge1"]) / 2


def encode_target(hashtags: list[str], vocab: Vocab, cfg: SegTrmConfig, lang: str) -> list[int]:
    return vocab.encode_words(target_words(hashtags, lang))[: cfg.max_target - 1] + [SEP]


def make_batch(pairs: list[Pair], vocab: Vocab, cfg: SegTrmConfig, lang: str) -> Batch:
    ids, segs, _ = encode_sources([p.text for p in pairs], vocab, cfg)
    targets = [encode_target(p.hashtags, vocab, cfg, lang) for p in pairs]
    return Batch(ids, segs, pad([[S] + t[:-1] for t in targets]), pad(targets))


def batches(pairs: list[Pair], size: int, rng: random.Random) -> Iterator[list[Pair]]:
    """Shuffled batches of similar text length (less padding, same randomness per epoch)."""
    order = sorted(pairs, key=lambda p: len(p.text) + rng.random() * 20)
    groups = [order[i : i + size] for i in range(0, len(order), size)]
    rng.shuffle(groups)
    yield from groups
