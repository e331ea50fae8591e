"""Train the keyword model (nlp_models/hashtag/keywords.py) on the training posts.

Every post candidate (text.post_candidates) of every training post is one example; its label
is its ROUGE-1 F against the post's hashtags (the issue's measure; most are 0), and the model
is fitted with binary cross-entropy on those soft labels, so its output is a probability
that can be compared across posts and with the generator's (tune.py calibrates both). The
features of a training post leave its own hashtags and its own document count out, as a new
post's would.

Called by `python -m training tune hashtag` for English checkpoints: about three minutes for
the 66,942 training pairs of the served model on two idle cores.
"""

from __future__ import annotations

import sys
import time
from collections import Counter

import torch

from nlp_models.hashtag.keywords import KeywordModel, KeywordStats, PostText, features
from nlp_models.hashtag.text import normalize_hashtag, post_candidates, split_hashtag
from training.hashtag.data import Pair
from training.hashtag.metrics import make_scorer, sequence_text

EPOCHS = 8
BATCH = 2048
LR = 0.01


def collect_stats(pairs: list[Pair]) -> KeywordStats:
    df: Counter = Counter()
    tag_words: Counter = Counter()
    tags: Counter = Counter()
    for pair in pairs:
        df.update(set(PostText.read(pair.text).tokens))
        for tag in pair.hashtags:
            words = split_hashtag(tag, "en")
            tag_words.update(words)
            tags[normalize_hashtag("".join(words))] += 1
    return KeywordStats(len(pairs), dict(df), dict(tag_words), dict(tags))


def examples(pairs: list[Pair], stats: KeywordStats) -> tuple[torch.Tensor, torch.Tensor]:
    """(features, labels) of every candidate of every post (module doc)."""
    scorer = make_scorer("en")
    rows: list[list[float]] = []
    labels: list[float] = []
    start = time.time()
    for n, pair in enumerate(pairs, 1):
        refs = [split_hashtag(t, "en") for t in pair.hashtags]
        own_words = Counter(w for words in refs for w in words)
        own_tags = Counter(normalize_hashtag("".join(words)) for words in refs)
        reference = sequence_text(refs)
        prefixes = {w[:3] for w in own_words}
        post = PostText.read(pair.text)
        for words in post_candidates(pair.text, "en"):
            rows.append(features(words, post, stats, own_words, own_tags, own_post=True))
            # ROUGE matches stems; no stem match is possible without a shared 3-letter
            # prefix, and skipping the scorer there saves most of the time
            overlap = any(w[:3] in prefixes for w in words)
            labels.append(scorer.score(reference, sequence_text([words]))["rouge1"].fmeasure
                          if overlap else 0.0)
        if n % 10_000 == 0 or n == len(pairs):
            print(f"\rkeywords: {n}/{len(pairs)} posts, {len(rows)} candidates, "
                  f"{time.time() - start:.0f} s", end="", file=sys.stderr, flush=True)
    print(file=sys.stderr)
    return torch.tensor(rows), torch.tensor(labels)


def train_keywords(pairs: list[Pair], seed: int = 0, epochs: int = EPOCHS,
                   batch: int = BATCH) -> KeywordModel:
    """A keyword model fitted on `pairs` (the checkpoint's training pairs)."""
    stats = collect_stats(pairs)
    x, y = examples(pairs, stats)
    torch.manual_seed(seed)
    model = KeywordModel(stats)
    model.mean.copy_(x.mean(0))
    model.std.copy_(x.std(0).clamp_min(1e-6))
    optimizer = torch.optim.Adam(model.net.parameters(), lr=LR)
    for epoch in range(epochs):
        order, total = torch.randperm(len(x)), 0.0
        for i in range(0, len(x), batch):
            rows = order[i : i + batch]
            loss = torch.nn.functional.binary_cross_entropy_with_logits(model(x[rows]), y[rows])
            optimizer.zero_grad()
            loss.backward()
            optimizer.step()
            total += loss.item() * len(rows)
        print(f"keywords: epoch {epoch + 1}/{epochs} loss {total / len(x):.4f}",
              file=sys.stderr, flush=True)
    return model.eval()
