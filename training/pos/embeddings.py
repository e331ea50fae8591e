"""Tweet word embeddings for the POS tagger: word2vec on unlabeled tweets.

    python -m training embeddings pos [--out runs/embeddings/tweets_w2v200.npz] [--dim 200]

Text: the ~312k raw English tweets of `extra/tweets_en/` (Sentiment140 sample, SNAP 2009
sample, Davidson et al., the two emotion sets, US-airline; see its README and MANIFEST),
plus the text of the other tweet sets' *training* splits (`hashtag/en/train.jsonl` and the
POS training corpora: Ritter train, NPSChat train, OCT27 train + dev). No test or dev text
the tagger is scored on. Tokens come from the project's Twitter tokenizer and the tagger's
own `normalize_word`, so embedding keys are the tagger's word keys. Skip-gram word2vec
(gensim, a training-only dependency). The output (`.npz`: `words`, `vectors` fp16) is read
by `python -m training train pos` when the config names it (`[model] pretrained`).
"""

from __future__ import annotations

import csv
import gzip
import io
import json
import time
from collections.abc import Iterator
from pathlib import Path

import numpy as np

from nlp_models.pos.features import normalize_word
from nlp_models.pos.tokenizer import tokenize
from training.paths import data_dir
from training.pos.data import read_conll

# file (under extra/tweets_en/) -> how to get the tweet text out of it
_CSV_COLUMN = {
    "airline/Tweets.csv.gz": "text",
    "davidson_hate/data__labeled_data.csv.gz": "tweet",
    "emotion_tweets/text_emotion.csv.gz": "content",
}
_LINES = [
    "sentiment140_100k/data__tweets_100k__negative.txt.gz",
    "sentiment140_100k/data__tweets_100k__positive.txt.gz",
]
POS_TRAIN = ["ritter/train", "npschat/train", "ark_oct27/train", "ark_oct27/dev"]


def _open(path: Path) -> io.TextIOWrapper:
    return io.TextIOWrapper(gzip.open(path), encoding="utf-8", errors="replace")


def raw_tweets(root: Path) -> Iterator[str]:
    """Tweet texts of extra/tweets_en/ (as obtained, gzip)."""
    base = root / "extra" / "tweets_en"
    for rel, column in _CSV_COLUMN.items():
        with _open(base / rel) as f:
            for row in csv.DictReader(f):
                if row.get(column):
                    yield row[column]
    for rel in _LINES:
        with _open(base / rel) as f:
            yield from (line.strip() for line in f if line.strip())
    with _open(base / "emotion_tweets" / "tweets_clean.txt.gz") as f:  # id:\tTEXT\t:: label
        for line in f:
            parts = line.split("\t")
            if len(parts) >= 2:
                yield parts[1]
    for path in sorted((base / "snap_tweets2009_sample").glob("*.txt.gz")):
        with _open(path) as f:  # T/U/W blocks; W is the tweet
            for line in f:
                if line.startswith("W\t") and line[2:].strip() != "No Post Title":
                    yield line[2:].strip()


def sentences(root: Path) -> Iterator[list[str]]:
    """Normalized word keys per tweet / sentence."""
    for text in raw_tweets(root):
        yield [normalize_word(s.text) for s in tokenize(text)]
    hashtag = root / "hashtag" / "en" / "train.jsonl"
    if hashtag.exists():
        with open(hashtag, encoding="utf-8") as f:
            for line in f:
                yield [normalize_word(s.text) for s in tokenize(json.loads(line)["text"])]
    for rel in POS_TRAIN:
        for s in read_conll(root / "pos" / f"{rel}.conll", "any"):
            yield [normalize_word(t) for t in s.tokens]


def train_embeddings(out: str, dim: int = 200, epochs: int = 5, min_count: int = 3,
                     seed: int = 1) -> dict:
    from gensim.models import Word2Vec  # training-only dependency (pyproject: dev extras)

    t0 = time.time()
    corpus = [s for s in sentences(data_dir()) if s]
    tokens = sum(len(s) for s in corpus)
    print(f"{len(corpus)} sentences, {tokens} tokens ({time.time() - t0:.0f}s)", flush=True)
    model = Word2Vec(corpus, vector_size=dim, window=5, min_count=min_count, sg=1,
                     negative=10, epochs=epochs, workers=1, seed=seed)
    words = list(model.wv.index_to_key)
    vectors = np.stack([model.wv[w] for w in words]).astype(np.float16)
    Path(out).parent.mkdir(parents=True, exist_ok=True)
    np.savez_compressed(out, words=np.array(words), vectors=vectors)
    return {"out": out, "sentences": len(corpus), "tokens": tokens, "words": len(words),
            "dim": dim, "seconds": round(time.time() - t0, 1)}


def load_embeddings(path: str | Path) -> tuple[list[str], np.ndarray]:
    with np.load(path) as d:
        return [str(w) for w in d["words"]], d["vectors"].astype(np.float32)
