"""A second Chinese test set of unseen sources: portal news of 2016 (Toutiao, QQ, 163).

    git clone https://github.com/lzjqsdd/NewsSpider PORTAL
    git -C PORTAL checkout 58c576eddaca753f76395db28a05154779db62c3
    python -m training data headline-portal --portal PORTAL --out data/headline

writes `DIR/zh/unseen_portal.jsonl` in the format of the dev sets (`id, article, headline,
phrase, phrase_in_article, source, register, date`, plus `site`). The repository is a
student project's news crawler; its `testdata/data/orinews/*.txt` hold 1,464 crawled items
(one JSON object per line: url, title, content, time; March-May 2016), mostly reposts of
many outlets on news aggregators. No licence is stated (the text is the outlets'): used
only to evaluate, never to train; not committed. With Sina (sina.py) it is the second
source no headline model trained on; Sina is the other, so items that mention Sina go.

Rules, each counted (last stdout line is JSON):
* `duplicate_url`: a URL seen before;
* `mentions_sina`: the body names Sina (新浪, sina), the other test source;
* then those of Sina's set (`extra.unseen_pair_zh`): `short_body` (under 200 characters),
  `original_title` (the body's start names the print edition's title, "原标题：…"), the
  headline rules of `extra._filter`, `duplicate` and `overlaps_existing` (as any pair of the
  shared train/dev/test splits) and `no_phrase`.
Every item that passes is kept, in file and line order.
"""

from __future__ import annotations

import json
import re
import sys
from pathlib import Path

from training.headline.extra import (
    Counts,
    _row,
    existing_keys,
    normalise_text,
    unseen_pair_zh,
    write_jsonl,
)

FOLDER = "testdata/data/orinews"
SOURCE = "lzjqsdd/NewsSpider@58c576e (Toutiao, QQ and 163 news, 2016)"


def site(url: str) -> str:
    """The URL's host without a leading `www.`, e.g. "toutiao.com", "news.qq.com"."""
    host = re.sub(r"^https?://([^/]+).*$", r"\1", url)
    return host.removeprefix("www.")


def items(portal: Path) -> list[dict]:
    """Every crawled item of the checkout, in file order (0.txt, 1.txt, ...) and line order."""
    paths = sorted((portal / FOLDER).glob("*.txt"), key=lambda p: int(p.stem))
    if not paths:
        raise SystemExit(f"{portal / FOLDER} has no *.txt: check out lzjqsdd/NewsSpider at "
                         "58c576eddaca753f76395db28a05154779db62c3")
    return [json.loads(line) for path in paths
            for line in path.read_text(encoding="utf-8").splitlines() if line.strip()]


def convert(raw: list[dict], existing: Path, counts: Counts) -> list[dict]:
    heads, arts = existing_keys(existing)
    seen: set[tuple[str, str]] = set()
    urls: set[str] = set()
    rows = []
    for item in raw:
        name = site(item.get("url", ""))
        counts.add(name, "read")
        if item.get("url") in urls:
            counts.add(name, "dropped_duplicate_url")
            continue
        urls.add(item.get("url"))
        headline = " ".join(item.get("title", "").split())
        article = normalise_text(item.get("content", "").replace("\u3000", " "), "zh")
        if "新浪" in article or "sina" in article.lower():
            counts.add(name, "dropped_mentions_sina")
            continue
        if not (pair := unseen_pair_zh(headline, article, seen, heads, arts, counts, name)):
            continue
        phrase, verbatim = pair
        counts.add(name, "kept")
        rows.append(_row(f"zh-portal-{len(rows):04d}", SOURCE, "news", "2016", headline,
                         article, phrase, verbatim, site=name))
    return rows


def build(portal: Path, data: Path, out: Path) -> dict:
    counts = Counts()
    print(f"zh: reading {portal / FOLDER}", file=sys.stderr, flush=True)
    rows = convert(items(portal), data / "headline" / "zh", counts)
    write_jsonl(out / "zh" / "unseen_portal.jsonl", rows)
    result = {"unseen_portal": len(rows), "sources": counts.as_dict()}
    print(json.dumps(result, ensure_ascii=False))
    return result
