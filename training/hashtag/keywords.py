"""Train the keyword model (nlp_models/hashtag/keywords.py) on the training posts.

Every post candidate (text.post_candidate_words) of every training post is one example; its label
is its ROUGE-1 F against the post's hashtags (the issue's measure; most are 0), and the model
is fitted with binary cross-entropy on those soft labels, so its output is a probability
that can be compared across posts and with the generator's (tune.py calibrates both). The
features of a training post leave its own hashtags and its own document count out, as a new
post's would.

Called by `python -m training tune hashtag`: about three minutes for the 66,942 English
training pairs of the served model on two idle cores.
"""

from __future__ import annotations

import re
import sys
import time
from collections import Counter

import torch

from nlp_models.hashtag.keywords import (
    KeywordModel,
    KeywordStats,
    PostText,
    features,
    hashtag_words,
)
from nlp_models.hashtag.text import (
    normalize_hashtag,
    post_candidate_words,
    split_hashtag,
    zh_segmenter,
)
from training.hashtag.data import Pair
from training.hashtag.metrics import make_scorer, sequence_text

EPOCHS = 8
BATCH = 2048
LR = 0.01
# Chinese training topics kept whole by jieba (keywords.py): 2-6 characters, no digits or
# letters (4,168 of the served model's topics; measured against none and against those
# seen twice, docs/models/hashtag.md)
_ZH_PHRASE = re.compile(r"[\u4e00-\u9fff]{2,6}")


def collect_stats(pairs: list[Pair], lang: str) -> KeywordStats:
    phrases = sorted({t.lower() for p in pairs for t in p.hashtags if _ZH_PHRASE.fullmatch(t)}
                     if lang == "zh" else [])
    segmenter = zh_segmenter(phrases) if lang == "zh" else None
    df: Counter = Counter()
    tag_words: Counter = Counter()
    tags: Counter = Counter()
    for pair in pairs:
        df.update(set(PostText.read(pair.text, lang, segmenter).tokens))
        for tag in pair.hashtags:
            words = hashtag_words(tag, lang, segmenter)
            tag_words.update(words)
            tags[normalize_hashtag("".join(words))] += 1
    return KeywordStats(len(pairs), dict(df), dict(tag_words), dict(tags), lang, phrases)


def examples(pairs: list[Pair], stats: KeywordStats,
             segmenter=None) -> tuple[torch.Tensor, torch.Tensor]:
    """(features, labels) of every candidate of every post (module doc); Chinese posts cut
    by `segmenter` (the model's, zh_segmenter of `stats.phrases`)."""
    lang = stats.lang
    scorer = make_scorer(lang)
    rows: list[list[float]] = []
    labels: list[float] = []
    start = time.time()
    for n, pair in enumerate(pairs, 1):
        own = [hashtag_words(t, lang, segmenter) for t in pair.hashtags]
        own_words = Counter(w for words in own for w in words)
        own_tags = Counter(normalize_hashtag("".join(words)) for words in own)
        reference = sequence_text([split_hashtag(t, lang) for t in pair.hashtags])
        post = PostText.read(pair.text, lang, segmenter)
        for words in post_candidate_words(pair.text, lang, segmenter):
            rows.append(features(words, post, stats, own_words, own_tags, own_post=True))
            labels.append(candidate_rouge1(scorer, reference, words, lang))
        if n % 10_000 == 0 or n == len(pairs):
            print(f"\rkeywords: {n}/{len(pairs)} posts, {len(rows)} candidates, "
                  f"{time.time() - start:.0f} s", end="", file=sys.stderr, flush=True)
    print(file=sys.stderr)
    return torch.tensor(rows), torch.tensor(labels)


def candidate_rouge1(scorer, reference: str, words: list[str], lang: str) -> float:
    """ROUGE-1 F of one candidate against the reference sequence. English ROUGE matches
    stems, and no stem match is possible without a shared 3-letter prefix; Chinese matches
    characters. Skipping the scorer where nothing can match saves most of the time."""
    if lang == "zh":
        chars = list("".join(words))
        return (scorer.score(reference, sequence_text([chars]))["rouge1"].fmeasure
                if set(chars) & set(reference) else 0.0)
    if not any(w[:3] in reference for w in words):
        return 0.0
    return scorer.score(reference, sequence_text([words]))["rouge1"].fmeasure


def train_keywords(pairs: list[Pair], lang: str, seed: int = 0, epochs: int = EPOCHS,
                   batch: int = BATCH) -> KeywordModel:
    """A keyword model fitted on `pairs` (the checkpoint's training pairs)."""
    stats = collect_stats(pairs, lang)
    torch.manual_seed(seed)
    model = KeywordModel(stats)
    x, y = examples(pairs, stats, model.segmenter)
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
