"""Token features of the POS tagger: the word, character, tag and ARK-cluster vocabularies a
checkpoint carries, and the encoding of token strings into the model's input tensors.
Shared by training (training/pos/data.py batches gold sentences) and serving (predictor.py).
"""

from __future__ import annotations

import random
import re
from collections import Counter
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import NamedTuple

import torch
from torch import Tensor

from nlp_models.pos.clusters import BITS, Clusters

PAD, UNK = "<pad>", "<unk>"
MAX_WORD_CHARS = 24  # longer tokens (URLs) are cut for the char-CNN only

_URL = re.compile(r"^(?:https?://|www\.)", re.I)
_DIGIT = re.compile(r"\d")


def normalize_word(token: str) -> str:
    """The word-embedding key: lower case, one symbol for URLs, mentions and digits."""
    if _URL.match(token):
        return "<url>"
    if token.startswith("@") and len(token) > 1:
        return "<user>"
    return _DIGIT.sub("0", token.lower())


class Vocab:
    """String <-> id, with 0 = padding and 1 = unknown."""

    def __init__(self, items: Sequence[str], with_unk: bool = True):
        specials = [PAD, UNK] if with_unk else [PAD]
        self.itos = specials + [s for s in items if s not in specials]
        self.stoi = {s: i for i, s in enumerate(self.itos)}
        self.unk = 1 if with_unk else None

    def __len__(self) -> int:
        return len(self.itos)

    def id(self, s: str) -> int:
        i = self.stoi.get(s, self.unk)
        if i is None:
            raise KeyError(f"unknown label {s!r}")
        return i

    @classmethod
    def build(cls, counts: Counter, min_count: int = 1, with_unk: bool = True) -> Vocab:
        return cls(sorted(s for s, n in counts.items() if n >= min_count), with_unk)


@dataclass
class Vocabularies:
    words: Vocab
    chars: Vocab
    tags: dict[str, Vocab]  # head -> tag vocabulary (no unk: tags are closed sets)
    clusters: Clusters | None = None  # ARK word clusters, for models that use them

    def to_json(self) -> dict:
        d = {
            "words": self.words.itos,
            "chars": self.chars.itos,
            "tags": {h: v.itos for h, v in self.tags.items()},
        }
        if self.clusters is not None:
            d["clusters"] = self.clusters.to_json()
        return d

    @classmethod
    def from_json(cls, d: dict, cluster_path: Path | None = None) -> Vocabularies:
        """`cluster_path`: the cluster file (default: the resolved artifact, see clusters.py)."""
        clusters = d.get("clusters")
        return cls(
            Vocab(d["words"]),
            Vocab(d["chars"]),
            {h: Vocab(t, with_unk=False) for h, t in d["tags"].items()},
            Clusters.from_json(clusters, cluster_path) if clusters else None,
        )

    @classmethod
    def build(
        cls, sentences: Sequence, min_word_count: int = 1,
        clusters: Clusters | None = None,
        extra_words: Sequence[str] = (),
    ) -> Vocabularies:
        """From training sentences (training.pos.data.Sentence: tokens, tags, head).
        `extra_words`: word keys added to the training words (pre-trained embeddings)."""
        words, chars, tags = Counter(), Counter(), {}
        for s in sentences:
            words.update(normalize_word(t) for t in s.tokens)
            chars.update(c for t in s.tokens for c in t[:MAX_WORD_CHARS])
            tags.setdefault(s.head, Counter()).update(s.tags)
        for w in extra_words:
            words[w] = max(words[w], min_word_count)
        return cls(
            Vocab.build(words, min_word_count),
            Vocab.build(chars, 2),
            {h: Vocab.build(c, with_unk=False) for h, c in tags.items()},
            clusters,
        )


class Encoded(NamedTuple):
    words: Tensor  # (B,T)
    types: Tensor  # (B,T)
    chars: Tensor  # (U,L)
    lengths: Tensor  # (B,)
    clusters: Tensor | None  # (U,levels), None without a cluster file


def encode_tokens(
    batch_tokens: Sequence[Sequence[str]],
    vocabs: Vocabularies,
    word_dropout: float = 0.0,
) -> Encoded:
    """Token strings -> words (B,T), token types (B,T), type chars (U,L), lengths (B,),
    type cluster-prefix ids (U,levels) or None.

    Each distinct token string of the batch is spelled once in `chars` (row 0 = padding),
    and `types` points every position at its row, so the char-CNN runs once per type; the
    same rows of `clusters` hold each type's ARK cluster prefixes (row 0 = padding).
    `word_dropout` replaces that share of known words with <unk> so the model learns to
    tag from characters and context alone, as it must for out-of-vocabulary tokens.
    """
    B = len(batch_tokens)
    T = max(1, max(len(t) for t in batch_tokens))
    word_ids, type_ids = [0] * (B * T), [0] * (B * T)
    type_of: dict[str, int] = {}
    wget, unk = vocabs.words.stoi.get, vocabs.words.unk
    for b, tokens in enumerate(batch_tokens):
        for i, tok in enumerate(tokens):
            wid = wget(normalize_word(tok), unk)
            if word_dropout and random.random() < word_dropout:
                wid = unk
            word_ids[b * T + i] = wid
            type_ids[b * T + i] = type_of.setdefault(tok, len(type_of) + 1)
    L = max([1] + [min(len(t), MAX_WORD_CHARS) for t in type_of])
    char_ids = [0] * ((len(type_of) + 1) * L)
    cget = vocabs.chars.stoi.get
    for tok, row in type_of.items():
        for k, c in enumerate(tok[:MAX_WORD_CHARS]):
            char_ids[row * L + k] = cget(c, unk)
    words = torch.tensor(word_ids, dtype=torch.long).view(B, T)
    types = torch.tensor(type_ids, dtype=torch.long).view(B, T)
    chars = torch.tensor(char_ids, dtype=torch.long).view(-1, L)
    lengths = torch.tensor([max(1, len(t)) for t in batch_tokens], dtype=torch.long)
    clusters = None
    if vocabs.clusters is not None:
        levels = [[0] * len(BITS)] + [vocabs.clusters.ids(t) for t in type_of]
        clusters = torch.tensor(levels, dtype=torch.long)
    return Encoded(words, types, chars, lengths, clusters)
