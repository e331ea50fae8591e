"""A Chinese test set from a source no headline model trained on: Sina news, 2018.

    git clone https://github.com/Patrick233/Cluster-Chinese-news-Article SINA
    git -C SINA checkout d1badb63249cccb481287bd4abd6d25c7d5f04a2
    python -m training data headline-sina --sina SINA --out data/headline

writes `DIR/zh/unseen_sina.jsonl` in the format of the dev sets (`id, article, headline,
phrase, phrase_in_article, source, register, date`, plus `channel`); later commits of the
repository deleted the articles. The repository is a student project's
crawl of news (October-November 2018, mostly sina.cn channels; its README states MIT for the
code, the text is the outlets'): one file per article, the headline as the file name, the
body as the content. Used only to evaluate, never to train; not committed.

Rules, each counted (last stdout line is JSON):
* only the news channels: `Entertainment`, `SportNews`, `TechNews`, `testSport`,
  `testTech` (the `testEdu`, `testFashion`, `testHealth` channels are advice columns and
  listicles, not news);
* the body's leading repeat of the title (`SportNews`, `TechNews`) is removed, full-width
  indentation and blank lines too (`extra.normalise_text`);
* `short_body`: fewer than 200 characters of body;
* `original_title`: the body's start names the print edition's title ("原标题：…"), which
  the headline often repeats (the answer inside the question);
* the headline rules of `extra._filter` (`short`, `long`), `duplicate` (same normalised
  headline or article start as an earlier item) and `overlaps_existing` (as any pair of the
  shared train/dev/test splits) and `no_phrase` (`extra.choose_phrase_zh`);
* a seeded sample (`extra.SEED`) of `SIZE` items.
"""

from __future__ import annotations

import json
import random
import sys
from pathlib import Path

from training.headline.extra import (
    SEED,
    Counts,
    _row,
    existing_keys,
    normalise_text,
    unseen_pair_zh,
    write_jsonl,
)

CHANNELS = ("Entertainment", "SportNews", "TechNews", "testSport", "testTech")
SOURCE = "Patrick233/Cluster-Chinese-news-Article@d1badb6 (Sina and other outlets, 2018)"
SIZE = 600


def article_text(raw: str, headline: str) -> str:
    """The body without indentation, blank lines and a first line that repeats the title."""
    lines = normalise_text(raw.replace("\u3000", " "), "zh").splitlines()
    if lines and "".join(lines[0].split()) == "".join(headline.split()):
        lines = lines[1:]
    return "\n".join(lines)


def convert(sina: Path, existing: Path, counts: Counts) -> list[dict]:
    """Every news item of the checkout that passes the rules, in sorted path order."""
    heads, arts = existing_keys(existing)
    seen: set[tuple[str, str]] = set()
    rows = []
    for channel in CHANNELS:
        for path in sorted((sina / channel).glob("*.txt")):
            counts.add(channel, "read")
            headline = " ".join(path.stem.split())
            article = article_text(path.read_text(encoding="utf-8", errors="replace"), headline)
            if not (pair := unseen_pair_zh(headline, article, seen, heads, arts, counts,
                                           channel)):
                continue
            phrase, verbatim = pair
            counts.add(channel, "kept")
            rows.append(_row("", SOURCE, "news", "2018", headline, article, phrase, verbatim,
                             channel=channel))
    return rows


def sample_indices(n: int) -> list[int]:
    """Which of the `n` items that pass the rules are the test set (seeded, sorted)."""
    return sorted(random.Random(SEED).sample(range(n), min(SIZE, n)))


def build(sina: Path, data: Path, out: Path) -> dict:
    if not all((sina / c).is_dir() for c in CHANNELS):
        raise SystemExit(f"{sina} lacks the channel folders {CHANNELS}: check out commit "
                         "d1badb63249cccb481287bd4abd6d25c7d5f04a2 (later ones removed them)")
    counts = Counts()
    print(f"zh: reading {sina}", file=sys.stderr, flush=True)
    rows = convert(sina, data / "headline" / "zh", counts)
    sample = sample_indices(len(rows))
    chosen = [{**rows[i], "id": f"zh-sina-{n:04d}"} for n, i in enumerate(sample)]
    write_jsonl(out / "zh" / "unseen_sina.jsonl", chosen)
    result = {"unseen_sina": len(chosen), "passed_rules": len(rows),
              "sources": counts.as_dict()}
    print(json.dumps(result, ensure_ascii=False))
    return result
