"""Newsrooms held out from every model: each one's archive and its newest articles, in time
order, for `python -m training adapt` and for judging adaptation.

    python -m training data headline-newsrooms --out data/newsrooms [--archive 2000] [--test 500]

writes `OUT/<newsroom>/{archive,test}.jsonl` (the shared headline format plus `date` and
`source`) and `OUT/newsrooms.json` (counts per rule). Per newsroom, its pairs are cleaned
by the extra data's rules (`extra.clean_en`), de-duplicated, sorted by (date, id); `test`
is the newest `--test` pairs and `archive` the `--archive` pairs just before them, so a
model adapted on the archive is judged on what the newsroom published afterwards.

English newsrooms (none is in any served model's training data; the served generator
trained on the AllSides news register only):

* `doj`: the US Department of Justice's Office of Public Affairs, 2009-2018;
* `senate-snowe`, `senate-reid`: two senators' press offices, 2004-2007 (one press office
  writes in one house style; all senators together would not);
* `fakehealth`: health news of many outlets, 2009-2018. Weaker: the served generator's
  checkpoints were *selected* on 300 FakeHealth pairs (never trained on them).

Chinese newsroom (with `--sina SINA`, the checkout `python -m training data headline-sina`
reads): `sina`, Sina news of October-November 2018. Its items carry no date, so not time
order: `test` is the 600 items of `unseen_sina.jsonl` (the Chinese unseen-source test set
of the model docs) and `archive` `--archive` of the others, drawn with the same seed.
"""

from __future__ import annotations

import json
import random
import sys
from pathlib import Path

from training.headline.extra import (
    EN_FILES,
    SEED,
    Counts,
    choose_phrase_en,
    clean_en,
    dedup_key,
    read_gz,
    write_jsonl,
)

ARCHIVE = 2000
TEST = 500
# newsroom -> (extra file key, the raw `source` it keeps or None for all)
EN_NEWSROOMS = {
    "doj": ("doj", None),
    "senate-snowe": ("senate", "US Senate press release (Snowe)"),
    "senate-reid": ("senate", "US Senate press release (Reid)"),
    "fakehealth": ("fakehealth", None),
}


def newsroom_rows(extra: Path, newsroom: str, counts: Counts) -> list[dict]:
    """The newsroom's cleaned, de-duplicated pairs in time order."""
    key, source = EN_NEWSROOMS[newsroom]
    seen: set[tuple[str, str]] = set()
    rows = []
    for r in read_gz(extra / "headline_en" / EN_FILES[key]):
        if source is not None and r.get("source") != source:
            continue
        counts.add(newsroom, "read")
        if not r.get("date"):
            counts.add(newsroom, "dropped_undated")  # no place in the time order
            continue
        if (cleaned := clean_en(key, r, counts, newsroom)) is None:
            continue
        headline, article, _ = cleaned
        if (k := dedup_key(headline, article)) in seen:
            counts.add(newsroom, "dropped_duplicate")
            continue
        seen.add(k)
        phrase, verbatim = choose_phrase_en(headline, article)
        rows.append({"id": r["id"], "article": article, "headline": headline, "phrase": phrase,
                     "phrase_in_article": verbatim, "source": newsroom,
                     "date": r.get("date", "")})
    rows.sort(key=lambda r: (r["date"], r["id"]))
    return rows


def split(rows: list[dict], archive: int, test: int) -> tuple[list[dict], list[dict]]:
    """(archive, test): the newest `test` rows, and the `archive` rows before them."""
    if len(rows) < test * 2:
        raise SystemExit(f"{len(rows)} pairs: too few for a test of {test} and an archive")
    cut = len(rows) - test
    return rows[max(0, cut - archive):cut], rows[cut:]


def sina_split(sina: Path, data: Path, archive: int,
               counts: Counts) -> tuple[list[dict], list[dict]]:
    """(archive, test) of the Sina newsroom: test = sina.py's sample, archive drawn from
    the rest."""
    from training.headline import sina as sina_source

    rows = sina_source.convert(sina, data / "headline" / "zh", counts)
    sample = set(sina_source.sample_indices(len(rows)))
    test = [{**rows[i], "id": f"zh-sina-{n:04d}", "source": "sina"}
            for n, i in enumerate(sorted(sample))]
    rest = [i for i in range(len(rows)) if i not in sample]
    drawn = sorted(random.Random(SEED).sample(rest, min(archive, len(rest))))
    older = [{**rows[i], "id": f"zh-sina-archive-{i:05d}", "source": "sina"} for i in drawn]
    return older, test


def build(data: Path, out: Path, archive: int = ARCHIVE, test: int = TEST,
          sina: Path | None = None) -> dict:
    counts = Counts()
    result: dict = {}
    if sina is not None:
        older, newest = sina_split(sina, data, archive, counts)
        write_jsonl(out / "sina" / "archive.jsonl", older)
        write_jsonl(out / "sina" / "test.jsonl", newest)
        result["sina"] = {"archive": len(older), "test": len(newest)}
    for newsroom in EN_NEWSROOMS:
        print(f"{newsroom}: reading", file=sys.stderr, flush=True)
        older, newest = split(newsroom_rows(data / "extra", newsroom, counts), archive, test)
        write_jsonl(out / newsroom / "archive.jsonl", older)
        write_jsonl(out / newsroom / "test.jsonl", newest)
        result[newsroom] = {"archive": len(older), "test": len(newest),
                            "archive_dates": [older[0]["date"], older[-1]["date"]],
                            "test_dates": [newest[0]["date"], newest[-1]["date"]]}
        print(f"{newsroom}: {json.dumps(result[newsroom])}", file=sys.stderr, flush=True)
    result["rules"] = counts.as_dict()
    (out / "newsrooms.json").write_text(json.dumps(result, indent=1) + "\n")
    return result
