"""Baselines: the paper's extractive Ext.TFIDF (one hashtag glued from the post's top
keywords), the prior (the training set's most frequent hashtags, the same for every
post: what a generator that ignores the post would learn), and the post oracle (the one
candidate hashtag of the post, `post_candidates`, that best matches the reference: an upper
bound for any method that returns one hashtag taken from the post).

"We extract 3 keywords for WHG (2 keywords for THG) ... and concatenate them following the
tokens' order in the text." Document frequencies come from the language's train split (or,
with `--train-file`/`--dev-ood-file`, from exactly the training set of a model trained so);
a keyword's weight is its count in the post times log(N / (1 + df)). The hashtag's words are
the English keywords, or the characters of the concatenated Chinese keywords (the word
protocol of nlp_models.hashtag.text).
"""

from __future__ import annotations

import json
import logging
import math
import re
import sys
import time
from collections import Counter
from collections.abc import Iterable, Iterator
from pathlib import Path

import jieba

from nlp_models.hashtag.text import join_words, post_candidates, split_hashtag
from training.hashtag.data import Pair
from training.hashtag.metrics import ROUGE_TYPES, hashtag_key, make_scorer, score, sequence_text
from training.hashtag.train import load_data

KEYWORDS = {"en": 2, "zh": 3}  # the paper: about the number of words in one hashtag
PLACEHOLDERS = re.compile(r"<url>|@user|\[[^\[\]\s]{1,10}\]")  # links, mentions, [emoticons]
WORD_CHAR = re.compile(r"[^\W_]")  # a letter, digit or CJK character
jieba.setLogLevel(logging.WARNING)  # no "Building prefix dict..." chatter on stderr


def read_jsonl(path: str | Path) -> Iterator[dict]:
    with open(path, encoding="utf-8") as f:
        for line in f:
            if line.strip():
                yield json.loads(line)


def post_words(text: str, lang: str) -> list[str]:
    """The candidate keywords of a post, in text order: English lower-case alphanumeric runs,
    Chinese jieba words holding a letter, digit or CJK character."""
    if lang == "en":
        return re.findall(r"[^\W_]+", text.replace("<url>", " ").replace("@user", " ").lower())
    words = jieba.lcut(PLACEHOLDERS.sub(" ", text))
    return [w.lower() for w in words if WORD_CHAR.search(w)]


class TfidfExtractor:
    """Document frequencies of a corpus and the top-scoring words of a new post."""

    def __init__(self, documents: Iterable[list[str]]):
        self.df: Counter[str] = Counter()
        self.n = 0
        for words in documents:
            self.df.update(set(words))
            self.n += 1

    def idf(self, word: str) -> float:
        return math.log(self.n / (1 + self.df[word]))

    def keywords(self, words: list[str], k: int) -> list[str]:
        """The k highest TF-IDF distinct words, back in the order they first occur (ties go
        to the earlier word, so the choice is deterministic)."""
        first: dict[str, int] = {}
        for i, word in enumerate(words):
            first.setdefault(word, i)
        tf = Counter(words)
        best = sorted(first, key=lambda w: (-tf[w] * self.idf(w), first[w]))[:k]
        return sorted(best, key=first.__getitem__)


def extract_hashtag(extractor: TfidfExtractor, text: str, lang: str) -> list[str]:
    """Ext.TFIDF's one hashtag for a post, as words."""
    keywords = extractor.keywords(post_words(text, lang), KEYWORDS[lang])
    return keywords if lang == "en" else split_hashtag("".join(keywords), lang)


def fit(train: list[Pair], lang: str) -> TfidfExtractor:
    """Document frequencies over the training posts, with progress on stderr (jieba over the
    68k Chinese posts takes a while)."""
    start = time.time()

    def documents() -> Iterator[list[str]]:
        for i, post in enumerate(train, 1):
            if i % 20000 == 0:
                print(f"ext_tfidf: {i} train posts ({time.time() - start:.0f}s)", file=sys.stderr)
            yield post_words(post.text, lang)

    extractor = TfidfExtractor(documents())
    print(f"ext_tfidf: document frequencies of {extractor.n} posts in "
          f"{time.time() - start:.0f}s", file=sys.stderr)
    return extractor


def training_pairs(lang: str, data: dict | None = None) -> list[Pair]:
    """The posts the baselines learn from: the shared train split, or, with `data`
    (`train_files`, `dev_ood_file` as in `train hashtag`), exactly a model's training set."""
    return load_data(lang, {}, data or {}, quick=False)[0]


def evaluate_baseline(data_path: str, lang: str, train: list[Pair]) -> dict:
    """Score Ext.TFIDF on a test file, document frequencies from `train`."""
    extractor = fit(train, lang)
    posts = list(read_jsonl(data_path))
    hashtags = [extract_hashtag(extractor, p["text"], lang) for p in posts]
    predictions = [[tag] if tag else [] for tag in hashtags]  # a post without words: no tag
    metrics = score(predictions, predictions, [p["hashtags"] for p in posts], lang)
    return {**metrics, "model": "ext_tfidf"}


def most_frequent(train: list[Pair], lang: str, n: int = 10) -> list[list[str]]:
    """The n most frequent training hashtags (counted in their matching form), as words."""
    counts: Counter[str] = Counter()
    words: dict[str, list[str]] = {}
    for post in train:
        for tag in post.hashtags:
            split = split_hashtag(tag, lang)
            if key := hashtag_key(split, lang):
                counts[key] += 1
                words.setdefault(key, split)
    return [words[key] for key, _ in counts.most_common(n)]


def evaluate_prior(data_path: str, lang: str, train: list[Pair]) -> dict:
    """Score the prior: every post gets the most frequent training hashtag as its sequence
    (ROUGE) and the 10 most frequent as its ranked list (F1@k)."""
    top = most_frequent(train, lang)
    references = [p["hashtags"] for p in read_jsonl(data_path)]
    metrics = score([top[:1]] * len(references), [top] * len(references), references, lang)
    return {**metrics, "model": "most_frequent", "hashtags": [join_words(w, lang) for w in top]}


def evaluate_oracle(data_path: str, lang: str) -> dict:
    """Score the post oracle: per post, the candidate of `post_candidates` (a content word,
    or two adjacent ones joined) with the highest ROUGE-1 F against the reference; no
    candidate scores 0. Mean ROUGE F (0..1, as `score`) of those choices and the share of
    posts where some candidate overlaps the reference at all."""
    scorer = make_scorer(lang)
    totals = dict.fromkeys(ROUGE_TYPES, 0.0)
    posts = overlap = 0
    for post in read_jsonl(data_path):
        posts += 1
        reference = sequence_text([split_hashtag(tag, lang) for tag in post["hashtags"]])
        scores = [scorer.score(reference, sequence_text([c]))
                  for c in post_candidates(post["text"], lang)]
        if not scores:
            continue
        best = max(scores, key=lambda s: s["rouge1"].fmeasure)
        overlap += best["rouge1"].fmeasure > 0
        for name in ROUGE_TYPES:
            totals[name] += best[name].fmeasure
    return {**{name: round(t / max(posts, 1), 4) for name, t in totals.items()},
            "posts": posts, "posts_with_overlap": round(overlap / max(posts, 1), 4),
            "model": "post_oracle"}
