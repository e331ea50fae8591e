"""Build ``tweets.jsonl``, the demo/test feed, from the ARK-Twitter POS data.

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


def main() -> None:
    root = data_dir()
    posts = oct27_posts(root) + daily547_posts(root)
    with OUT.open("w", encoding="utf-8") as fh:
        for p in posts:
            fh.write(json.dumps(p, ensure_ascii=False) + "\n")
    print(f"wrote {len(posts)} posts to {OUT}")


if __name__ == "__main__":
    main()
