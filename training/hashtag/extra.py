"""Extra hashtag pairs from the raw files of `extra/hashtag_{en,zh}/`, and the held-out-source
dev sets (`dev_ood`).

    python -m training data hashtag --out DIR [--lang en zh]

writes `DIR/<lang>/extra.jsonl` (new training pairs), `DIR/<lang>/dev_ood.jsonl` (whole
sources of the shared training split held out as a second dev set) and, for English,
`DIR/en/unseen.jsonl`: pairs from raw 2009 tweets of `extra/tweets_en/` (SNAP tweets2009,
Sentiment140), sources and a year that no training or dev pair comes from. It is a test set
of posts "from feeds the model never saw": never train, select or tune on it (and leave its
two sources out of any pre-training on `tweets_en`). The construction rules are those of
`hashtag/README.md`, applied as far as each source's form allows:

- `av_twitter_hate` (raw tweets, hashtags in the text): the full English edge rule.
- `snap_tweets2009`, `sentiment140` (raw tweets): the full English edge rule, as AV.
- `howyoutagtweets` (lower-cased, lemmatised text; its authors removed every hashtag from the
  text and listed them separately): where a hashtag stood cannot be known, so every listed
  hashtag is a target; the text rules that still apply (words, language, at most 15
  hashtags, a hashtag needs a letter) are applied.
- `takg_weibo` (word-segmented text without punctuation; `#topic#` spans removed from the
  text, `;`-separated targets): the same, every listed topic is a target; the word
  segmentation is undone between CJK characters.

Deduplication: every pair of the shared test/dev/train splits is registered first, then the
extra sources in a fixed order; a pair whose normalized text equals, or shares its first 50
(en) / 30 (zh) normalized characters with, a registered pair is dropped (reason
`duplicate_of_<split>`, or `duplicate_of_extra` for an earlier extra pair).
The last stdout line is JSON: per source, read / kept / dropped by reason.
"""

from __future__ import annotations

import csv
import gzip
import html
import json
import random
import re
import sys
from collections import Counter
from collections.abc import Iterable, Iterator
from dataclasses import dataclass, field
from pathlib import Path

from nlp_models.hashtag.text import FUNCTION_WORDS

PREFIX = {"en": 50, "zh": 30}
MAX_TAGS = {"en": 15, "zh": 10}
MIN_WORDS = 5
MAX_TOPIC_CHARS = 30

# Sources of the shared training split held out whole as the second dev set, per language,
# and the size cap of that set (a seeded sample when the source is larger).
DEV_OOD_SOURCE = {
    "en": "t-davidson/hate-speech-and-offensive-language",
    "zh": "ww-rm/weibo-rmdt",
}
DEV_OOD_MAX = 2000
SEED = 13

AV = "souravramos/twitterSentimentAnalysis"
HOWYOU = "polyusmart/Personalized-Hashtag-Preferences"
TAKG = "yuewang-cuhk/TAKG"
SNAP = "sanjaypradeep/PredictHashtag"  # SNAP tweets2009 sample, June 2009
S140 = "geraldzakwan/iykra-sentiment-analysis"  # Sentiment140 random 100k sample, 2009

# Common English function words (closed classes). Lemmatised text has `be` for is/are/was.
_URL = re.compile(r"(?:https?://|www\.)\S+", re.IGNORECASE)
_MENTION = re.compile(r"@\w+")
_MENTIONS = re.compile(r"@user(?:\s+@user){2,}")
_NON_ASCII = re.compile(r"[^\x00-\x7f]+")
_HASHTAG = re.compile(r"#(\w*[^\W\d_]\w*)[^\w\s#]*")  # `#` + word chars with a letter
_TAG_WORD = re.compile(r"\w*[^\W\d_]\w*")
_MID_HASH = re.compile(r"#(?=\w)")
_EMOTICON = re.compile(r"\[[^\[\]\s]{1,8}\]")
_RT = re.compile(r"\bRT\b")
_CJK_SPACE = re.compile(r"(?<=[^\x00-\x7f]) +(?=[^\x00-\x7f])")
_ZH_WORD = re.compile(r"[\u3400-\u9fff\w]")


@dataclass
class Stats:
    read: int = 0
    kept: int = 0
    dropped: Counter = field(default_factory=Counter)

    def as_dict(self) -> dict:
        return {"read": self.read, "kept": self.kept, "dropped": dict(sorted(self.dropped.items()))}


# ---------------------------------------------------------------- normalisation, dedup


def normalize(text: str) -> str:
    """The deduplication form: lower case; `<url>`, `@user`, `RT`, Weibo `[emoticon]` codes,
    punctuation and spaces removed."""
    text = _EMOTICON.sub("", text.replace("<url>", " ").replace("@user", " "))
    text = _RT.sub(" ", text).lower()
    return "".join(c for c in text if c.isalnum())


class Deduplicator:
    """Remembers normalized texts and their first `prefix` characters, each with a label
    saying where the first pair came from (`test`, `dev`, `train`, `extra`)."""

    def __init__(self, prefix: int) -> None:
        self.prefix = prefix
        self.full: dict[str, str] = {}
        self.heads: dict[str, str] = {}

    def match(self, text: str) -> str | None:
        """The label of an earlier pair `text` duplicates, or None."""
        norm = normalize(text)
        if norm in self.full:
            return self.full[norm]
        return self.heads.get(norm[: self.prefix]) if len(norm) >= self.prefix else None

    def add(self, text: str, label: str = "extra") -> bool:
        """Register `text`; False (and nothing registered) if it duplicates an earlier one."""
        if self.match(text) is not None:
            return False
        norm = normalize(text)
        self.full[norm] = label
        if len(norm) >= self.prefix:
            self.heads[norm[: self.prefix]] = label
        return True


# ---------------------------------------------------------------- English


def english_words(text: str) -> int:
    return sum(1 for t in text.split()
               if t not in ("<url>", "@user") and any(c.isalnum() for c in t))


def is_english(text: str) -> bool:
    """The README's fallback rule alone (langid is not installed): >= 3 function words."""
    return sum(1 for t in text.lower().split() if t.strip(".,!?;:'\"()") in FUNCTION_WORDS) >= 3


def _decoration(token: str) -> bool:
    return not any(c.isalnum() for c in token) and token not in ("<url>", "@user")


def _hashtag(token: str) -> str | None:
    m = _HASHTAG.fullmatch(token)
    return m.group(1) if m else None


def _drop_rt(tokens: list[str], start: int) -> list[str]:
    if tokens[start : start + 1] == ["RT"] and len(tokens) > start + 1 \
            and tokens[start + 1].startswith("@user"):
        return tokens[:start] + tokens[start + 2 :]
    return tokens


def english_edges(raw: str, ascii_only: bool = False) -> tuple[str, list[str]]:
    """A raw tweet -> (text, edge hashtags): leading and trailing hashtag blocks are the
    targets and leave the text; a trailing block may be followed by `<url>` (kept), `@user`
    and emoji/punctuation tokens (dropped, as are punctuation tokens just before it), and a
    mention inside it ends it;
    mid-text hashtags stay as words without `#`; runs of 3+ mentions become `@user @user`."""
    text = html.unescape(raw)
    if ascii_only:  # the AV copy's emoji are mojibake (`ð±`): each run becomes a space
        text = _NON_ASCII.sub(" ", text)
    text = _MENTIONS.sub("@user @user", _MENTION.sub("@user", _URL.sub(" <url> ", text)))
    tokens = _drop_rt(text.split(), 0)
    lead: list[str] = []
    i = 0
    while i < len(tokens) and (tag := _hashtag(tokens[i])):
        lead.append(tag)
        i += 1
    tokens = _drop_rt(tokens, i)
    body = tokens[i:]
    k = len(body)  # the trailing block starts at k
    j = len(body) - 1
    while j >= 0 and (_hashtag(body[j]) or body[j] == "<url>" or _decoration(body[j])
                      or (body[j] == "@user" and k == len(body))):  # a mention ends the block
        if _hashtag(body[j]):
            k = j
        j -= 1
    trail = [t for t in (_hashtag(b) for b in body[k:]) if t]
    kept = body[:k]
    if trail:
        while kept and _decoration(kept[-1]):
            kept.pop()
    kept += [b for b in body[k:] if b == "<url>"]
    text = " ".join(_MID_HASH.sub("", t) for t in kept)
    return text, unique(lead + trail)


def unique(tags: Iterable[str]) -> list[str]:
    """Case-insensitive de-duplication in order of appearance."""
    seen: set[str] = set()
    out = []
    for tag in tags:
        if tag and tag.lower() not in seen:
            seen.add(tag.lower())
            out.append(tag)
    return out


def english_reason(text: str, tags: list[str]) -> str | None:
    """Why an English pair is dropped, or None."""
    if not tags:
        return "no_hashtag"
    if len(tags) > MAX_TAGS["en"]:
        return "too_many_hashtags"
    if english_words(text) < MIN_WORDS:
        return "short_text"
    if not is_english(text):
        return "not_english"
    return None


# ---------------------------------------------------------------- Chinese


def unsegment(text: str) -> str:
    """Undo word segmentation between CJK characters (`马航 飞机` -> `马航飞机`)."""
    return _CJK_SPACE.sub("", text.strip())


def chinese_words(text: str) -> int:
    import jieba

    jieba.setLogLevel(60)
    text = _EMOTICON.sub(" ", text.replace("<url>", " ").replace("@user", " "))
    return sum(1 for w in jieba.lcut(text) if _ZH_WORD.search(w))


def chinese_topics(raw: str) -> tuple[list[str], int]:
    """`;`-separated topics -> (usable topics, number dropped for length or mention/URL)."""
    topics, bad = [], 0
    for t in raw.split(";"):
        t = unsegment(t).replace("[超话]", "").strip()
        if not t:
            continue
        if len(t) > MAX_TOPIC_CHARS or "@" in t or _URL.search(t) or "t.cn" in t:
            bad += 1
        else:
            topics.append(t)
    return unique(topics), bad


def chinese_reason(text: str, tags: list[str]) -> str | None:
    if not tags:
        return "no_hashtag"
    if len(tags) > MAX_TAGS["zh"]:
        return "too_many_hashtags"
    if any(bot in s for bot in ("每日一善", "阳光信用") for s in [text, *tags]):
        return "credit_bot"
    if chinese_words(text) < MIN_WORDS:
        return "short_text"
    return None


# ---------------------------------------------------------------- sources


@dataclass
class Raw:
    """One candidate pair before filtering."""

    text: str
    hashtags: list[str]
    source: str
    orig_path: str
    orig_id: str
    reason: str | None = None  # set when the source's own form already rules it out


def gz_lines(path: Path) -> list[str]:
    with gzip.open(path, "rt", encoding="utf-8", errors="replace") as f:
        text = f.read().rstrip("\n")
    return text.split("\n") if text else []  # not splitlines(): U+2028 etc. are text


def av_pairs(rows: Iterable[tuple[str, str, str | None]]) -> Iterator[Raw]:
    """(file, id, tweet) rows of the AV practice set."""
    for path, tid, tweet in rows:
        if tweet is None:
            yield Raw("", [], AV, path, tid, reason="malformed_row")
            continue
        text, tags = english_edges(tweet, ascii_only=True)
        yield Raw(text, tags, AV, path, tid)


def read_av(folder: Path) -> Iterator[tuple[str, str, str | None]]:
    for name in ("train_E6oV3lV.csv", "test_tweets_anuFYb8.csv"):
        with gzip.open(folder / f"{name}.gz", "rt", encoding="utf-8", errors="replace",
                       newline="") as f:
            for row in csv.DictReader(f):
                yield name, row["id"], row.get("tweet")


def howyou_pairs(rows: Iterable[tuple[str, int, str]]) -> Iterator[Raw]:
    """(file, line number, `text<TAB>user<TAB>tag...`) rows: every listed tag is a target."""
    for path, n, line in rows:
        cols = line.split("\t")
        text = " ".join(cols[0].split())
        listed = [t.strip().lstrip("#") for t in cols[2:]]
        tags = unique(t for t in listed if _TAG_WORD.fullmatch(t))
        yield Raw(text, tags, HOWYOU, path, f"{path}:{n}")


def read_howyou(folder: Path) -> Iterator[tuple[str, int, str]]:
    for split in ("train", "valid", "test"):
        for n, line in enumerate(gz_lines(folder / f"Data__{split}.csv.gz"), 1):
            yield f"Data/{split}.csv", n, line


def takg_pairs(rows: Iterable[tuple[str, int, str, str]]) -> Iterator[Raw]:
    """(file, line number, segmented text, `;` topics) rows: every listed topic is a target."""
    for path, n, src, trg in rows:
        tags, bad = chinese_topics(trg)
        raw = Raw(unsegment(src), tags, TAKG, path, f"{path}:{n}")
        if bad and not tags:
            raw.reason = "bad_topic"
        yield raw


def read_takg(folder: Path, stats: Stats) -> Iterator[tuple[str, int, str, str]]:
    for split in ("valid", "test"):
        src = gz_lines(folder / f"data__Weibo__{split}_src.txt.gz")
        trg = gz_lines(folder / f"data__Weibo__{split}_trg.txt.gz")
        assert len(src) == len(trg), f"{split}: {len(src)} sources, {len(trg)} targets"
        for n, (s, t) in enumerate(zip(src, trg, strict=True), 1):
            yield f"data/Weibo/{split}_src.txt", n, s, t
    # The train split has targets only: nothing to pair them with.
    train_trg = folder / "data__Weibo__train_trg.txt.gz"
    if train_trg.exists():
        missing = len(gz_lines(train_trg))
        stats.read += missing
        stats.dropped["no_source_text"] += missing


def tweet_pairs(rows: Iterable[tuple[str, int, str]], source: str) -> Iterator[Raw]:
    """(file, line number, raw tweet) rows: the full English edge rule."""
    for path, n, tweet in rows:
        text, tags = english_edges(tweet)
        yield Raw(text, tags, source, path, f"{path}:{n}")


def read_snap(folder: Path) -> Iterator[tuple[str, int, str]]:
    """The `W` (tweet) lines of SNAP's T/U/W blocks."""
    for path in sorted(folder.glob("*.txt.gz")):
        for n, line in enumerate(gz_lines(path), 1):
            if line.startswith("W\t"):
                yield path.name.removesuffix(".gz"), n, line[2:]


def read_lines(folder: Path) -> Iterator[tuple[str, int, str]]:
    """One tweet per line (Sentiment140's sample)."""
    for path in sorted(folder.glob("*.txt.gz")):
        for n, line in enumerate(gz_lines(path), 1):
            yield path.name.removesuffix(".gz"), n, line


EXTRA_SOURCES = {"en": ("av_twitter_hate", "howyoutagtweets"), "zh": ("takg_weibo",)}
UNSEEN_SOURCES = {"en": ("snap_tweets2009_sample", "sentiment140_100k")}  # in extra/tweets_en/


def source_pairs(name: str, folder: Path, stats: Stats) -> Iterator[Raw]:
    if name == "av_twitter_hate":
        return av_pairs(read_av(folder))
    if name == "howyoutagtweets":
        return howyou_pairs(read_howyou(folder))
    if name == "snap_tweets2009_sample":
        return tweet_pairs(read_snap(folder), SNAP)
    if name == "sentiment140_100k":
        return tweet_pairs(read_lines(folder), S140)
    return takg_pairs(list(read_takg(folder, stats)))


# ---------------------------------------------------------------- building


def filter_pairs(raws: Iterable[Raw], lang: str, dedup: Deduplicator, stats: Stats) -> list[dict]:
    """Apply the filters and the deduplication; count what is dropped and why."""
    reason_of = english_reason if lang == "en" else chinese_reason
    kept = []
    for raw in raws:
        stats.read += 1
        reason = raw.reason or reason_of(raw.text, raw.hashtags)
        if reason is None and (hit := dedup.match(raw.text)) is not None:
            reason = f"duplicate_of_{hit}"  # an earlier extra pair, or a shared split's
        if reason is None:
            dedup.add(raw.text, "extra")
        if reason:
            stats.dropped[reason] += 1
            continue
        stats.kept += 1
        kept.append({"text": raw.text, "hashtags": raw.hashtags, "source": raw.source,
                     "orig_path": raw.orig_path, "orig_id": raw.orig_id})
    return kept


def read_jsonl(path: Path) -> list[dict]:
    with open(path, encoding="utf-8") as f:
        return [json.loads(line) for line in f if line.strip()]


def dev_ood(train: list[dict], lang: str, source: str | None = None,
            limit: int = DEV_OOD_MAX) -> list[dict]:
    """The held-out source's pairs of the training split (a seeded sample of `limit` if
    larger); training must exclude every pair of that source."""
    source = source or DEV_OOD_SOURCE[lang]
    held = [d for d in train if d.get("source") == source]
    if len(held) > limit:  # in sampled order, so any first N pairs are a random sample too
        held = random.Random(SEED).sample(held, limit)
    return held


def with_ids(rows: list[dict], lang: str, split: str) -> list[dict]:
    out = []
    for i, row in enumerate(rows):
        row = {k: v for k, v in row.items() if k != "id"}
        if "id" in rows[i]:
            row["from_id"] = rows[i]["id"]
        out.append({"id": f"{lang}-{split}-{i:06d}", **row})
    return out


def write_jsonl(path: Path, rows: list[dict]) -> None:
    path.parent.mkdir(parents=True, exist_ok=True)
    with open(path, "w", encoding="utf-8") as f:
        for row in rows:
            f.write(json.dumps(row, ensure_ascii=False) + "\n")


def log(msg: str) -> None:
    print(msg, flush=True)


def build(shared: Path, out: Path, langs: Iterable[str] = ("en", "zh")) -> dict:
    """Convert the extra sources and write the dev_ood sets; return the counts."""
    report: dict = {}
    for lang in langs:
        dedup = Deduplicator(PREFIX[lang])
        splits = {s: read_jsonl(shared / "hashtag" / lang / f"{s}.jsonl")
                  for s in ("test", "dev", "train")}  # a copy of a test pair counts as test's
        for split, rows in splits.items():
            for d in rows:
                dedup.add(d["text"], split)
        log(f"{lang}: {sum(map(len, splits.values()))} pairs of the shared splits registered "
            f"({len(dedup.full)} distinct normalized texts)")
        extra_dir = shared / "extra" / f"hashtag_{lang}"
        kept: list[dict] = []
        report[lang] = {}
        for name in EXTRA_SOURCES[lang]:
            stats = Stats()
            new = filter_pairs(source_pairs(name, extra_dir / name, stats), lang, dedup, stats)
            kept += new
            report[lang][name] = stats.as_dict()
            log(f"{lang}/{name}: {json.dumps(stats.as_dict())}")
        write_jsonl(out / lang / "extra.jsonl", with_ids(kept, lang, "extra"))
        unseen: list[dict] = []
        for name in UNSEEN_SOURCES.get(lang, ()):
            stats = Stats()
            folder = shared / "extra" / f"tweets_{lang}" / name
            unseen += filter_pairs(source_pairs(name, folder, stats), lang, dedup, stats)
            report[lang][name] = stats.as_dict()
            log(f"{lang}/{name} (unseen test): {json.dumps(stats.as_dict())}")
        if unseen:
            write_jsonl(out / lang / "unseen.jsonl", with_ids(unseen, lang, "unseen"))
            report[lang]["unseen_written"] = len(unseen)
        held = dev_ood(splits["train"], lang)
        n_source = sum(1 for d in splits["train"] if d.get("source") == DEV_OOD_SOURCE[lang])
        write_jsonl(out / lang / "dev_ood.jsonl", with_ids(held, lang, "dev_ood"))
        report[lang]["extra_written"] = len(kept)
        report[lang]["dev_ood"] = {"source": DEV_OOD_SOURCE[lang], "train_pairs_of_source":
                                   n_source, "written": len(held),
                                   "train_pairs_left": len(splits["train"]) - n_source}
        log(f"{lang}: wrote {len(kept)} extra pairs and {len(held)} dev_ood pairs "
            f"({DEV_OOD_SOURCE[lang]}) to {out / lang}")
    return report


def main(out: str, langs: Iterable[str], shared: Path | None = None) -> None:
    from training.paths import data_dir

    report = build(shared or data_dir(), Path(out), langs)
    sys.stdout.flush()
    print(json.dumps(report, ensure_ascii=False))
