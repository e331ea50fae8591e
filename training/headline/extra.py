"""Convert the extra headline corpora (`<data>/extra/headline_{en,zh}/`) into training and
out-of-domain dev files in the format of `<data>/headline/<lang>/*.jsonl`.

    python -m training data headline --out DIR [--data DATA_DIR]

writes `DIR/{en,zh}/{train_extra,dev_ood}.jsonl`, one JSON object per line with the fields
of the existing splits (`id, article, headline, phrase, phrase_in_article, source`) plus
`register` (`news` or `press_release`) and `date`. Deterministic (fixed seed, sorted input).

Rules, in this order, each counted per source (last stdout line is JSON):

* whitespace normalised (runs of spaces/tabs -> one space inside each paragraph, blank
  paragraphs removed; Chinese: the broadcaster's indentation removed);
* `kicker_removed` (en): a section label in front of the headline ("OPINION: ", "EXCLUSIVE
  - ", "Fact check: ": `KICKER`) is cut off; the label is not part of the headline (1,403
  AllSides headlines began with "OPINION:", and a model trained on them opened its
  headlines for health news with it);
* `senate_dateline`: Senate "headlines" that are a dateline and the release's first
  sentence ("Washington, D.C. -- Today ..."), not a title: dropped;
* ALL-CAPS Senate titles are *truecased* (each word takes the casing it has most often
  inside the article, else lower case; first letter capitalised; `headline_orig` keeps the
  title) and tagged `register = press_release` like every Senate and DOJ item. Truecased,
  because the models are cased (BPE) and an editor's headline is not in capitals: training on
  capitals would teach a separate, useless spelling of every word. The tag stays so that a
  run can weight or drop the register;
* `empty` / `short`: headline with fewer than 3 words (en) or 4 characters (zh);
* `long`: headline longer than 20 words (en) / 40 characters (zh) *and* longer than the
  article's first sentence (a headline that says more than the lead is a summary or a
  sentence pasted as a title);
* `title_cap` (zh): at most 3 items per exact title (the first three by date) — recurring
  programme titles (国务院常务会议, 通报最新疫情) would otherwise dominate;
* `duplicate`: same normalised headline + first 200 characters of the article as an earlier
  kept item; `overlaps_existing`: same normalised headline, or same first 200 article
  characters, as any pair of the existing train/dev/test splits (so no dev/test text leaks);
* `no_phrase`: no given phrase could be chosen (see `choose_phrase_*`).

Out-of-domain dev sets (`dev_ood`, at most 1,500 pairs, never in `train_extra`):
English: FakeHealth health news (a source and topic absent from training; all of it is held
out, 1,500 drawn with seed 13). Chinese: CCTV is one broadcaster, so a held-out *period*:
every item dated 2026 is excluded from training, 1,500 of them drawn; dev items whose
exact title occurs in training are dropped (`title_in_train`).
"""

from __future__ import annotations

import gzip
import json
import random
import re
import sys
from collections import Counter, defaultdict
from collections.abc import Iterable
from pathlib import Path

from training.headline.data import split_lead

SEED = 13
DEV_OOD_SIZE = 1500
ZH_TITLE_CAP = 3
ZH_DEV_YEAR = "2026"
EN_FILES = {
    "allsides": "allsides_article_bias.jsonl.gz",
    "senate": "us_senate_press_releases_2005_2007.jsonl.gz",
    "doj": "us_doj_press_releases.jsonl.gz",
    "fakehealth": "fakehealth_health_news.jsonl.gz",
}
EN_REGISTER = {"allsides": "news", "senate": "press_release", "doj": "press_release",
               "fakehealth": "news"}
EN_DEV_SOURCES = {"fakehealth"}
ZH_FILE = "cctv_xwlb_2012_2026.zh.jsonl.gz"
RESERVED = re.compile(r"\bbbc\b|bbc\.|sogou|搜狗", re.IGNORECASE)

_SPACES = re.compile(r"[ \t\u00a0\u2000-\u200b\u3000]+")
_DATELINE = re.compile(r"^\s*washington,?\s*d\.?\s*c\.?\s*[-\u2013\u2014:]", re.IGNORECASE)
_WORD = re.compile(r"[A-Za-z][A-Za-z'\u2019&-]*")
KICKER = re.compile(
    r"^(?:opinion|exclusive|breaking(?: news)?|analysis|fact[ -]check|the memo|watch|video|"
    r"editorial|commentary|op-ed|live|update|perspective|column|review)\s*[:|\u2013\u2014-]\s+",
    re.IGNORECASE)
_STOP = frozenset("a an the of in on at to for and or but by with from as is are was be his "
                  "her its their it that this".split())


def normalise_text(text: str, lang: str) -> str:
    lines = (_SPACES.sub(" ", line).strip() for line in text.splitlines())
    return "\n".join(line for line in lines if line)


def normalise_headline(text: str) -> str:
    return " ".join(text.split())


def strip_kicker(headline: str) -> tuple[str, bool]:
    """The headline without a leading section label (`KICKER`), and whether it had one."""
    cut = KICKER.sub("", headline, count=1)
    return cut, cut != headline


def is_new(headline: str, article: str, seen: set, heads: set, arts: set, counts,
           name: str) -> bool:
    """Neither a repeat within the extra data nor a pair overlapping the existing splits
    (same normalised headline or article start); counts the reason when it is not."""
    key = dedup_key(headline, article)
    if key in seen:
        counts.add(name, "dropped_duplicate")
        return False
    seen.add(key)
    if key[0] in heads or key[1] in arts:
        counts.add(name, "dropped_overlaps_existing")
        return False
    return True


UNSEEN_MIN_BODY = 200  # characters of body a Chinese test item of an unseen source needs


def unseen_pair_zh(headline: str, article: str, seen: set, heads: set, arts: set, counts,
                   name: str) -> tuple[str, bool] | None:
    """A news item of a source no model trained on (sina.py, portal.py) as a Chinese test
    pair: its phrase and whether that is verbatim in the article, or None with the reason
    counted: `short_body` (under UNSEEN_MIN_BODY characters), `original_title` (the body's
    start names the print edition's title, "原标题：…", which the headline often repeats: the
    answer inside the question), the headline rules of `_filter`, a repeat (`is_new`),
    `no_phrase`."""
    if len("".join(article.split())) < UNSEEN_MIN_BODY:
        counts.add(name, "dropped_short_body")
        return None
    if "原标题" in article[:200]:
        counts.add(name, "dropped_original_title")
        return None
    if reason := _filter(headline, article, "zh"):
        counts.add(name, f"dropped_{reason}")
        return None
    if not is_new(headline, article, seen, heads, arts, counts, name):
        return None
    phrase, verbatim = choose_phrase_zh(headline, article)
    if not phrase:
        counts.add(name, "dropped_no_phrase")
        return None
    return phrase, verbatim


def dedup_key(headline: str, article: str) -> tuple[str, str]:
    return ("".join(headline.lower().split()), "".join(article.split())[:200])


def size(text: str, lang: str) -> int:
    return len("".join(text.split())) if lang == "zh" else len(text.split())


def truecase(headline: str, article: str) -> str:
    """An ALL-CAPS title in the casing its words have in the article (most frequent form not
    at a sentence start), else lower case; first letter upper case."""
    forms: dict[str, Counter] = defaultdict(Counter)
    for m in _WORD.finditer(article):
        before = article[: m.start()].rstrip()
        if before and before[-1] not in ".!?\n\"“":
            forms[m.group().lower()][m.group()] += 1

    def case(m: re.Match) -> str:
        w = m.group()
        seen = forms.get(w.lower())
        return seen.most_common(1)[0][0] if seen else w.lower()

    out = _WORD.sub(case, headline)
    return out[:1].upper() + out[1:]


def is_all_caps(text: str) -> bool:
    letters = [c for c in text if c.isalpha()]
    return bool(letters) and all(c.isupper() for c in letters)


def _whole_word(text: str, phrase: str, flags: int = 0) -> bool:
    return re.search(r"(?<!\w)" + re.escape(phrase) + r"(?!\w)", text, flags) is not None


def choose_phrase_en(headline: str, article: str) -> tuple[str, bool]:
    """Runs of 1-4 headline words (no stop word at either end, not digits only); capitalised
    runs first, then longer, then earlier; the first found verbatim (whole words) in the
    article, else the first found case-insensitively, else ("", False)."""
    words = headline.split()
    cands = []
    for i in range(len(words)):
        for n in range(1, 5):
            run = [w.strip(",:;\"'“”‘’()?!") for w in words[i:i + n]]
            if len(run) < n or not all(run):
                continue
            inner = words[i + 1:i + n - 1]
            if any(w != o for w, o in zip(run[1:-1], inner, strict=True)):
                continue
            if run[0].lower() in _STOP or run[-1].lower() in _STOP:
                continue
            phrase = " ".join(run)
            if phrase.replace(" ", "").replace(",", "").replace(".", "").isdigit():
                continue
            if phrase not in headline:
                continue
            cap = run[0][:1].isupper() and run[-1][:1].isupper()
            cands.append((not cap, -n, i, phrase))
    cands.sort()
    for *_, phrase in cands:
        if _whole_word(article, phrase):
            return phrase, True
    for *_, phrase in cands:
        if _whole_word(article, phrase, re.IGNORECASE):
            return phrase, False
    return "", False


_CJK_ALNUM = re.compile(r"^[\u4e00-\u9fffA-Za-z0-9]+$")


def choose_phrase_zh(headline: str, article: str) -> tuple[str, bool]:
    """jieba words of the headline; spans of 1-4 whole words, 2-6 CJK/alphanumeric
    characters; longest first, then earliest; the first found in the article. Fallback: the
    longest common substring of 2-6 such characters."""
    import jieba

    words = jieba.lcut(headline)
    cands = []
    pos = 0
    starts = []
    for w in words:
        starts.append(pos)
        pos += len(w)
    for i in range(len(words)):
        for n in range(1, 5):
            span = "".join(words[i:i + n])
            if len(words[i:i + n]) == n and 2 <= len(span) <= 6 and _CJK_ALNUM.match(span):
                cands.append((-len(span), starts[i], span))
    for *_, span in sorted(cands):
        if span in article:
            return span, True
    for n in range(6, 1, -1):
        for i in range(len(headline) - n + 1):
            span = headline[i:i + n]
            if _CJK_ALNUM.match(span) and span in article:
                return span, True
    return "", False


def read_gz(path: Path) -> Iterable[dict]:
    with gzip.open(path, "rt", encoding="utf-8") as f:
        for line in f:
            if line.strip():
                yield json.loads(line)


def existing_keys(root: Path) -> tuple[set[str], set[str]]:
    """Normalised headlines and article prefixes of every existing train/dev/test pair."""
    heads, arts = set(), set()
    for split in ("train", "dev", "test"):
        path = root / f"{split}.jsonl"
        if path.exists():
            with open(path, encoding="utf-8") as f:
                for line in f:
                    if line.strip():
                        r = json.loads(line)
                        h, a = dedup_key(r["headline"], r["article"])
                        heads.add(h)
                        arts.add(a)
    return heads, arts


class Counts:
    def __init__(self) -> None:
        self.by_source: dict[str, Counter] = defaultdict(Counter)

    def add(self, source: str, what: str) -> None:
        self.by_source[source][what] += 1

    def as_dict(self) -> dict:
        return {s: dict(sorted(c.items())) for s, c in sorted(self.by_source.items())}


def _filter(headline: str, article: str, lang: str) -> str | None:
    """The reason to drop a pair, or None."""
    n = size(headline, lang)
    if n == 0:
        return "empty"
    if n < (4 if lang == "zh" else 3):
        return "short"
    lead = split_lead(article, lang)[0]
    if n > (40 if lang == "zh" else 20) and n > size(lead, lang):
        return "long"
    return None


def _row(id_: str, source: str, register: str, date: str, headline: str, article: str,
         phrase: str, verbatim: bool, **extra: object) -> dict:
    return {"id": id_, "article": article, "headline": headline, "phrase": phrase,
            "phrase_in_article": verbatim, "source": source, "register": register,
            "date": date, **extra}


def clean_en(name: str, r: dict, counts: Counts,
             counted_as: str | None = None) -> tuple[str, str, str | None] | None:
    """One raw English pair of source `name` made a training pair by the rules above:
    (headline, article, the ALL-CAPS original of a truecased headline or None), or None with
    the reason counted (under `counted_as`, default `name`). No duplicate check: that is the
    caller's."""
    counted = counted_as or name
    article = normalise_text(r.get("article") or "", "en")
    headline, kicker = strip_kicker(normalise_headline(r.get("headline") or ""))
    if kicker:
        counts.add(counted, "kicker_removed")
    if RESERVED.search(r.get("source", "")) or RESERVED.search(r.get("id", "")):
        counts.add(counted, "dropped_reserved_source")
        return None
    if name == "senate" and _DATELINE.match(headline):
        counts.add(counted, "dropped_senate_dateline")
        return None
    if reason := _filter(headline, article, "en"):
        counts.add(counted, f"dropped_{reason}")
        return None
    orig = None
    if name == "senate" and is_all_caps(headline):
        orig, headline = headline, truecase(headline, article)
        counts.add(counted, "truecased")
    return headline, article, orig


def convert_en(extra: Path, existing: Path, counts: Counts, log=print) -> tuple[list, list]:
    heads, arts = existing_keys(existing)
    seen: set[tuple[str, str]] = set()
    train, dev = [], []
    for name, file in EN_FILES.items():
        for i, r in enumerate(read_gz(extra / "headline_en" / file)):
            counts.add(name, "read")
            if i and i % 20000 == 0:
                log(f"en/{name}: {i} read", file=sys.stderr, flush=True)
            if (cleaned := clean_en(name, r, counts)) is None:
                continue
            headline, article, orig = cleaned
            if not is_new(headline, article, seen, heads, arts, counts, name):
                continue
            phrase, verbatim = choose_phrase_en(headline, article)
            if not phrase:
                counts.add(name, "dropped_no_phrase")
                continue
            row = _row(r["id"], name, EN_REGISTER[name], r.get("date", ""), headline, article,
                       phrase, verbatim, **({"headline_orig": orig} if orig else {}))
            (dev if name in EN_DEV_SOURCES else train).append(row)
    dev = _sample(dev, counts, "fakehealth")
    for r in train:
        counts.add(r["source"], "kept_train_extra")
    return train, dev


def _sample(dev: list[dict], counts: Counts, source: str) -> list[dict]:
    rng = random.Random(SEED)
    chosen = sorted(rng.sample(range(len(dev)), min(DEV_OOD_SIZE, len(dev))))
    for _ in range(len(dev) - len(chosen)):
        counts.add(source, "held_out_not_sampled")
    out = [dev[i] for i in chosen]
    for _ in out:
        counts.add(source, "kept_dev_ood")
    return out


def convert_zh(extra: Path, existing: Path, counts: Counts, log=print) -> tuple[list, list]:
    heads, arts = existing_keys(existing)
    rows = list(read_gz(extra / "headline_zh" / ZH_FILE))
    rows.sort(key=lambda r: (r.get("date", ""), r.get("url", "")))
    seen: set[tuple[str, str]] = set()
    per_title: Counter = Counter()
    name = "cctv"
    train, dev = [], []
    for i, r in enumerate(rows):
        counts.add(name, "read")
        if i and i % 20000 == 0:
            log(f"zh/{name}: {i} read", file=sys.stderr, flush=True)
        article = normalise_text(r.get("article") or "", "zh")
        headline = normalise_headline(r.get("title") or "")
        reason = _filter(headline, article, "zh")
        if reason:
            counts.add(name, f"dropped_{reason}")
            continue
        per_title[headline] += 1
        if per_title[headline] > ZH_TITLE_CAP:
            counts.add(name, "dropped_title_cap")
            continue
        if not is_new(headline, article, seen, heads, arts, counts, name):
            continue
        phrase, verbatim = choose_phrase_zh(headline, article)
        if not phrase:
            counts.add(name, "dropped_no_phrase")
            continue
        url = r.get("url", "")
        id_ = "cctv-xwlb-" + (url.rsplit("/", 1)[-1].split(".")[0] if url else f"{i}")
        row = _row(id_, "cctv-xwlb", "news", r.get("date", ""), headline, article, phrase,
                   verbatim)
        (dev if row["date"].startswith(ZH_DEV_YEAR) else train).append(row)
    train_titles = {r["headline"] for r in train}
    kept_dev = []
    for r in dev:
        if r["headline"] in train_titles:
            counts.add(name, "dropped_dev_title_in_train")
        else:
            kept_dev.append(r)
    dev = _sample(kept_dev, counts, name)
    for _ in train:
        counts.add(name, "kept_train_extra")
    return train, dev


def write_jsonl(path: Path, rows: list[dict]) -> None:
    path.parent.mkdir(parents=True, exist_ok=True)
    with open(path, "w", encoding="utf-8") as f:
        for r in rows:
            f.write(json.dumps(r, ensure_ascii=False) + "\n")


def build(data: Path, out: Path, langs: Iterable[str] = ("en", "zh")) -> dict:
    counts = Counts()
    result: dict = {}
    for lang in langs:
        convert = convert_en if lang == "en" else convert_zh
        print(f"{lang}: converting", file=sys.stderr, flush=True)
        train, dev = convert(data / "extra", data / "headline" / lang, counts)
        write_jsonl(out / lang / "train_extra.jsonl", train)
        write_jsonl(out / lang / "dev_ood.jsonl", dev)
        print(f"{lang}: {len(train)} train_extra, {len(dev)} dev_ood -> {out / lang}",
              flush=True)
        result[lang] = {"train_extra": len(train), "dev_ood": len(dev)}
    result["sources"] = counts.as_dict()
    return result
