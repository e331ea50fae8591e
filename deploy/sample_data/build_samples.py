"""Build the demo/test feeds: ``tweets.jsonl`` from the ARK-Twitter POS data,
``weibo.jsonl`` (Chinese posts) from the Weibo rumour set in the hashtag test split, and
``articles.jsonl`` (English and Chinese news) from the headline test splits.

    python deploy/sample_data/build_samples.py   # or: python -m deploy.sample_data.build_samples

Reads ``$NLP_DATA_DIR/pos/ark_oct27/{train,dev,test}.conll`` and
``ark_daily547/test.conll`` (default data dir: ``../shared/data`` next to the repo) and
writes one post per tweet. The original tweet text is not in the release, only its
tokens, so the text is the tokens joined by single spaces (ATTRIBUTION.md says so).
Timestamps are synthetic but follow the corpus: OCT27 tweets spread over 2010-10-27
(UTC), DAILY547 one per day from 2011-01-01. The gold ARK tags are not copied into the
posts; the pipeline's tagger produces its own.
"""

from __future__ import annotations

import json
import os
from collections.abc import Iterator
from datetime import UTC, datetime, timedelta
from pathlib import Path

REPO_ROOT = Path(__file__).resolve().parents[2]
OUT = Path(__file__).with_name("tweets.jsonl")
WEIBO_OUT = Path(__file__).with_name("weibo.jsonl")
WEIBO_SOURCE = "ww-rm/weibo-rmdt"  # GPL-3.0 repository; see ATTRIBUTION.md
WEIBO_POSTS = 200
ARTICLES_OUT = Path(__file__).with_name("articles.jsonl")
#: (language, source in the headline data, how many): research-use corpora, ATTRIBUTION.md
ARTICLE_SOURCES = (("en", "reuters21578", 20), ("en", "agnews", 10),
                   ("zh", "lcsts-part3", 10), ("zh", "ccf-bdci2019-inews", 5))

OCT27_SPLITS = ("train", "dev", "test")
OCT27_DAY = datetime(2010, 10, 27, tzinfo=UTC)
DAILY547_START = datetime(2011, 1, 1, 12, tzinfo=UTC)


def data_dir() -> Path:
    raw = os.environ.get("NLP_DATA_DIR", "").strip()
    path = Path(raw) if raw else REPO_ROOT.parent / "shared" / "data"
    return path if path.is_absolute() else REPO_ROOT / path


def read_conll(path: Path) -> Iterator[list[str]]:
    """Token lists, one per blank-line-separated sentence (TOKEN<TAB>TAG lines)."""
    tokens: list[str] = []
    for line in path.read_text(encoding="utf-8").splitlines():
        if not line.strip():
            if tokens:
                yield tokens
                tokens = []
            continue
        tokens.append(line.split("\t")[0])
    if tokens:
        yield tokens


def distinct_hashtags(tokens: list[str]) -> list[str]:
    """Hashtags without "#", first spelling kept, repeats (any case) dropped."""
    seen: dict[str, str] = {}
    for t in tokens:
        if t.startswith("#") and len(t) > 1:
            seen.setdefault(t[1:].lower(), t[1:])
    return list(seen.values())


def post(post_id: str, tokens: list[str], created: datetime, source: str) -> dict[str, object]:
    return {
        "id": post_id,
        "platform": "twitter",
        "lang": "en",
        "text": " ".join(tokens),
        "author": "",
        "created_at": created.isoformat().replace("+00:00", "Z"),
        "attributes": {"source": source, "license": "CC BY 3.0"},
        "user_hashtags": distinct_hashtags(tokens),
    }


def oct27_posts(root: Path) -> list[dict[str, object]]:
    tweets = [
        (split, i, toks)
        for split in OCT27_SPLITS
        for i, toks in enumerate(read_conll(root / "pos" / "ark_oct27" / f"{split}.conll"), 1)
    ]
    step = 86_400 / len(tweets)
    return [
        post(
            f"ark-oct27-{split}-{i:04d}",
            toks,
            OCT27_DAY + timedelta(seconds=int(n * step)),
            f"ark-twitter-oct27/{split}",
        )
        for n, (split, i, toks) in enumerate(tweets)
    ]


def daily547_posts(root: Path) -> list[dict[str, object]]:
    path = root / "pos" / "ark_daily547" / "test.conll"
    return [
        post(
            f"ark-daily547-test-{i:04d}",
            toks,
            DAILY547_START + timedelta(days=i - 1),
            "ark-twitter-daily547/test",
        )
        for i, toks in enumerate(read_conll(path), 1)
    ]


def weibo_posts(root: Path) -> list[dict[str, object]]:
    """The first WEIBO_POSTS rumour-set posts of the Chinese hashtag test split. Their
    topics (#...#) become ``user_hashtags``: the author wrote them, the generator did not."""
    rows = [json.loads(line) for line in
            (root / "hashtag" / "zh" / "test.jsonl").read_text(encoding="utf-8").splitlines()]
    rows = [r for r in rows if r["source"] == WEIBO_SOURCE][:WEIBO_POSTS]
    return [
        {
            "id": f"weibo-rmdt-{r['orig_id']}",
            "platform": "weibo",
            "lang": "zh",
            "text": r["text"],
            "author": "",
            "created_at": datetime.strptime(r["time"], "%Y-%m-%d %H:%M:%S")
            .replace(tzinfo=UTC).isoformat().replace("+00:00", "Z"),
            "attributes": {"source": WEIBO_SOURCE, "license": "GPL-3.0 (source repository)"},
            "user_hashtags": r["hashtags"],
        }
        for r in rows
    ]


def articles(root: Path) -> list[dict[str, object]]:
    """The first articles of each source in the headline test splits. The reference
    headline becomes ``title`` and the data's given phrase the one required phrase."""
    out: list[dict[str, object]] = []
    for lang, source, n in ARTICLE_SOURCES:
        path = root / "headline" / lang / "test.jsonl"
        rows = [json.loads(line) for line in path.read_text(encoding="utf-8").splitlines()]
        out += [
            {"id": r["id"], "source": source, "lang": lang, "title": r["headline"],
             "body": r["article"], "required_phrases": [r["phrase"]]}
            for r in [r for r in rows if r["source"] == source][:n]
        ]
    return out


def write(path: Path, records: list[dict[str, object]]) -> None:
    with path.open("w", encoding="utf-8") as fh:
        for p in records:
            fh.write(json.dumps(p, ensure_ascii=False) + "\n")
    print(f"wrote {len(records)} records to {path}")


def main() -> None:
    root = data_dir()
    write(OUT, oct27_posts(root) + daily547_posts(root))
    write(WEIBO_OUT, weibo_posts(root))
    write(ARTICLES_OUT, articles(root))


if __name__ == "__main__":
    main()
