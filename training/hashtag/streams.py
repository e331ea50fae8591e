"""Time-ordered hashtag streams for ``python -m bench hashtag-stream`` (issue 46).

    python -m training data hashtag-stream --out data/hashtag_stream

Each file is in the shared hashtag format plus ``created_at`` (ISO 8601, UTC), one post
per line in time order (ties keep the source's order), posts without author hashtags
included, because a live stream has them too (they are produced, but not scored):

- ``en_airline_2015.jsonl``: the English **dev** stream (weights are chosen on it):
  US-airline tweets of Feb 2015 (``extra/tweets_en/airline``), a source no model saw;
- ``en_snap_2009.jsonl``: the English **test** stream: the SNAP tweets2009 sample,
  Mar-Jun 2009, the source of ``unseen.jsonl`` (never tuned on);
- ``zh_dev_stream.jsonl`` / ``zh_test_stream.jsonl``: the Chinese **dev** / **test**
  streams: the shared ``hashtag/zh/dev.jsonl`` / ``test.jsonl`` sorted by ``time``.

Time order is made total: posts that share a timestamp (the Chinese files give many
posts only a date) are spread one millisecond apart in file order, so that "earlier" means
earlier in the stream for the hashtag memory too (it recalls only posts strictly before a
post's ``created_at``).

English text follows the training data's edge rule (``extra.english_edges``: edge
hashtags become the targets, mentions ``@user``, links ``<url>``). The last stdout line is
JSON: per file, posts and posts with hashtags.
"""

from __future__ import annotations

import csv
import gzip
import json
from collections import Counter
from collections.abc import Iterator, Sequence
from datetime import UTC, datetime, timedelta
from pathlib import Path

from training.hashtag.extra import english_edges, gz_lines

Post = dict  # id, text, hashtags, created_at


def airline(folder: Path) -> Iterator[Post]:
    with gzip.open(folder / "Tweets.csv.gz", "rt", encoding="utf-8", errors="replace",
                   newline="") as f:
        for n, row in enumerate(csv.DictReader(f)):
            created = datetime.strptime(row["tweet_created"], "%d-%m-%Y %H.%M")
            text, tags = english_edges(row["text"])
            yield _post(f"airline-{n:05d}", text, tags, created)


def snap(folder: Path) -> Iterator[Post]:
    """SNAP's T (time) / U (user) / W (tweet) blocks."""
    for path in sorted(folder.glob("*.txt.gz")):
        created = None
        for n, line in enumerate(gz_lines(path), 1):
            if line.startswith("T\t"):
                created = datetime.strptime(line[2:].strip(), "%Y-%m-%d %H:%M:%S")
            elif line.startswith("W\t") and created is not None:
                text, tags = english_edges(line[2:])
                yield _post(f"snap-{path.name.split('.')[0]}-{n}", text, tags, created)


def shared_split(path: Path) -> Iterator[Post]:
    for line in path.read_text(encoding="utf-8").splitlines():
        row = json.loads(line)
        if row.get("time"):
            created = datetime.fromisoformat(row["time"])  # a date, or a date and time
            yield _post(row["id"], row["text"], row["hashtags"], created)


def _post(post_id: str, text: str, tags: list[str], created: datetime) -> Post:
    return {"id": post_id, "text": text, "hashtags": tags,
            "created_at": created.replace(tzinfo=UTC).isoformat().replace("+00:00", "Z")}


def distinct_times(posts: list[Post]) -> list[Post]:
    """Posts in time order with strictly increasing ``created_at``: ties get +1 ms each."""
    last: datetime | None = None
    for post in posts:
        created = datetime.fromisoformat(post["created_at"].replace("Z", "+00:00"))
        if last is not None and created <= last:
            created = last + timedelta(milliseconds=1)
        post["created_at"] = created.isoformat(timespec="milliseconds").replace("+00:00", "Z")
        last = created
    return posts


def build(data_dir: Path, out: Path) -> dict:
    """Write the four streams into ``out``; returns their counts."""
    extra = data_dir / "extra" / "tweets_en"
    sources = {
        "en_airline_2015.jsonl": airline(extra / "airline"),
        "en_snap_2009.jsonl": snap(extra / "snap_tweets2009_sample"),
        "zh_dev_stream.jsonl": shared_split(data_dir / "hashtag" / "zh" / "dev.jsonl"),
        "zh_test_stream.jsonl": shared_split(data_dir / "hashtag" / "zh" / "test.jsonl"),
    }
    out.mkdir(parents=True, exist_ok=True)
    counts = {}
    for name, posts in sources.items():
        ordered = distinct_times(sorted((p for p in posts if p["text"].strip()),
                                        key=lambda p: p["created_at"]))  # stable sort
        with (out / name).open("w", encoding="utf-8") as f:
            for p in ordered:
                f.write(json.dumps(p, ensure_ascii=False) + "\n")
        counts[name] = {"posts": len(ordered),
                        "with_hashtags": sum(1 for p in ordered if p["hashtags"])}
    return counts


def read_stream(path: str | Path, limit: int | None) -> list[dict]:
    posts = []
    with open(path, encoding="utf-8") as f:
        for line in f:
            posts.append(json.loads(line))
            if limit and len(posts) >= limit:
                break
    return posts


def with_hashtags(text: str, tags: Sequence[str], lang: str) -> str:
    """The post as its author wrote it: hashtags re-attached at the end."""
    if not tags:
        return text
    written = "".join(f"#{t}#" for t in tags) if lang == "zh" else " ".join(f"#{t}" for t in tags)
    return f"{text} {written}"


def score(predictions: list[list[str]], posts: list[dict], lang: str) -> dict:
    """ROUGE on the first hashtag, F1@k on the ranked list, how varied the first hashtags
    are (``distinct_best``, ``top_share``), and what a reader is shown around the first
    (``shown``)."""
    from nlp_models.hashtag.text import split_hashtag
    from training.hashtag.metrics import score as hashtag_score

    ranked = [[split_hashtag(t, lang) for t in tags] for tags in predictions]
    metrics = hashtag_score([r[:1] for r in ranked], ranked, [p["hashtags"] for p in posts],
                            lang)
    firsts = Counter(tags[0].lower() for tags in predictions if tags)
    top = firsts.most_common(1)[0][1] if firsts else 0
    return {**metrics, "distinct_best": len(firsts),
            "top_share": round(top / max(len(predictions), 1), 4),
            **shown(ranked, posts, lang)}


def shown(ranked: list[list[list[str]]], posts: list[dict], lang: str) -> dict:
    """Of every hashtag shown (split into words), the share that is one of its author's
    (``precision_shown``), how many a post is shown on average (``shown_per_post``) and the
    share of posts shown none (``silent_share``); counted by ``metrics.shown_hits``."""
    from training.hashtag.metrics import shown_hits

    right, total, posts_shown = shown_hits(ranked, [p["hashtags"] for p in posts], lang)
    n = max(len(posts), 1)
    return {"precision_shown": round(right / total, 4) if total else 0.0,
            "shown_per_post": round(total / n, 2),
            "silent_share": round((len(posts) - posts_shown) / n, 4)}
