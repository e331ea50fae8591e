"""CoNLL reading and batching for the POS tagger (the vocabularies and token encoding it
shares with serving are in nlp_models/pos/features.py).

The tagger has one output head per tagset ("ptb": Penn Treebank + RT/USR/HT/URL and the
NPSChat extras; "ark": the 25 ARK-Twitter tags). Every training sentence carries the tags
of exactly one head; the shared encoder learns from all of them.
"""

from __future__ import annotations

import random
from collections.abc import Iterator, Sequence
from dataclasses import dataclass
from pathlib import Path

import torch
from torch import Tensor

from nlp_models.pos.features import Vocabularies, encode_tokens

# CoNLL-2000 escapes brackets and slashes; tweets use the literal characters.
_UNESCAPE = {"-LRB-": "(", "-RRB-": ")", "-LCB-": "{", "-RCB-": "}", "-LSB-": "[", "-RSB-": "]"}


@dataclass
class Sentence:
    tokens: list[str]
    tags: list[str]
    head: str  # which tagset the tags belong to


def read_conll(path: str | Path, head: str) -> list[Sentence]:
    """Read `TOKEN<TAB>TAG` lines with blank lines between sentences."""
    sentences, tokens, tags = [], [], []
    for line in Path(path).read_text(encoding="utf-8").splitlines():
        if not line.strip():
            if tokens:
                sentences.append(Sentence(tokens, tags, head))
                tokens, tags = [], []
            continue
        token, tag = line.split("\t")
        tokens.append(_UNESCAPE.get(token, token.replace("\\/", "/").replace("\\*", "*")))
        tags.append(tag)
    if tokens:
        sentences.append(Sentence(tokens, tags, head))
    return sentences


@dataclass
class Batch:
    words: Tensor  # (B,T) word ids, 0 = padding
    types: Tensor  # (B,T) row of each token in `chars`
    chars: Tensor  # (U,L) char ids of each distinct token
    lengths: Tensor  # (B,)
    tags: Tensor | None  # (B,T) tag ids of `head`, -100 = padding
    head: str
    clusters: Tensor | None = None  # (U,levels) cluster-prefix ids of each distinct token


def make_batch(sents: Sequence[Sentence], vocabs: Vocabularies, word_dropout: float = 0.0) -> Batch:
    head = sents[0].head
    assert all(s.head == head for s in sents), "a batch holds one tagset"
    words, types, chars, lengths, clusters = encode_tokens(
        [s.tokens for s in sents], vocabs, word_dropout
    )
    tags = torch.full(words.shape, -100, dtype=torch.long)
    for b, s in enumerate(sents):
        tags[b, : len(s.tags)] = torch.tensor([vocabs.tags[head].id(t) for t in s.tags])
    return Batch(words, types, chars, lengths, tags, head, clusters)


def batches(
    sents: Sequence[Sentence], batch_size: int, shuffle: bool, rng: random.Random
) -> Iterator[list[Sentence]]:
    """Group sentences of one head and similar length, so padding stays small."""
    by_head: dict[str, list[Sentence]] = {}
    for s in sents:
        by_head.setdefault(s.head, []).append(s)
    groups = []
    for group in by_head.values():
        group = sorted(group, key=lambda s: len(s.tokens) + (rng.random() * 4 if shuffle else 0))
        groups += [group[i : i + batch_size] for i in range(0, len(group), batch_size)]
    if shuffle:
        rng.shuffle(groups)
    yield from groups
