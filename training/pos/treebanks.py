"""Gold Penn Treebank tags from public Universal Dependencies treebanks (issue 21).

The paper trains on all of WSJ (1.17M gold tokens); we have 10 % of it plus CoNLL-2000,
whose tags are automatic. Two UD English treebanks carry hand-checked PTB tags in their XPOS
column, and both are mostly informal web or spoken English, closer to tweets than WSJ:

- UD_English-EWT (English Web Treebank: weblogs, newsgroups, e-mail, reviews, Yahoo
  answers; CC BY-SA 4.0), all of it (train, dev and test: none of it is one of our test sets);
- UD_English-GUM, only the genres its LICENSE.txt names as CC BY or public domain (bio,
  conversation, interview, news, speech, textbook, vlog, voyage); wikiHow and fiction are
  CC BY-NC-SA and the other genres fall under the corpus's overall NC licence, so they stay out.

GitHub's release files hold the train split in one file too large for our repository
mirror, so the converter reads the per-document sources under `not-to-release/sources/`
(the same documents the released splits are cut from). UD splits clitics into syntactic
words ("do n't", "gon na"), as PTB and Ritter's tweets do; the multiword-token lines are
skipped. UD's extra tags are mapped onto ours and a sentence with any other tag is dropped
(counted in the summary).

    python -m training data pos --out data/pos --ewt DIR --gum DIR

DIR is a checkout (or `git archive`) of the treebank's repository; the summary printed and
written to DIR_OUT/SOURCES.json records the commit given with --ewt-commit/--gum-commit.
"""

from __future__ import annotations

import json
import re
from collections import Counter
from collections.abc import Iterator
from pathlib import Path

from nlp_models.pos.tokenizer import is_emoticon

# Our PTB head's tags (Penn Treebank + Twitter's and NPSChat's extras) that UD also uses.
PTB_TAGS = frozenset(
    "CC CD DT EX FW IN JJ JJR JJS LS MD NN NNS NNP NNPS PDT POS PRP PRP$ RB RBR RBS RP SYM "
    "TO UH VB VBD VBG VBN VBP VBZ WDT WP WP$ WRB GW URL $ # `` '' , . : ( )".split()
)
# UD English additions -> our tags. NFP (emoticons, decorations) is decided per token below.
_UD_TO_OURS = {"-LRB-": "(", "-RRB-": ")", "HYPH": ":", "ADD": "URL"}

GUM_OPEN_GENRES = ("bio", "conversation", "interview", "news", "speech", "textbook", "vlog",
                   "voyage")

_CONLLU_WORD = re.compile(r"^\d+\t")  # plain word lines; "3-4" (multiword) and "3.1" skipped


def map_tag(token: str, xpos: str) -> str | None:
    """Our PTB-head tag for a UD XPOS, or None when we have no equivalent."""
    if xpos == "NFP":  # emoticons are UH in Ritter's tweets and NPSChat; "***", "~~" are ':'
        return "UH" if is_emoticon(token) else ":"
    tag = _UD_TO_OURS.get(xpos, xpos)
    return tag if tag in PTB_TAGS else None


def read_conllu(path: Path) -> Iterator[list[tuple[str, str]]]:
    """(form, XPOS) per syntactic word, one list per sentence."""
    words: list[tuple[str, str]] = []
    for line in path.read_text(encoding="utf-8").splitlines():
        if not line.strip():
            if words:
                yield words
            words = []
        elif _CONLLU_WORD.match(line):
            cols = line.split("\t")
            words.append((cols[1], cols[4]))
    if words:
        yield words


def convert(files: list[Path], out: Path) -> dict:
    """Write TOKEN<TAB>TAG sentences of all `files` to `out`; return counts."""
    sentences = tokens = 0
    dropped: Counter[str] = Counter()
    out.parent.mkdir(parents=True, exist_ok=True)
    with out.open("w", encoding="utf-8") as f:
        for path in files:
            for words in read_conllu(path):
                tags = [map_tag(form, xpos) for form, xpos in words]
                if None in tags:
                    dropped.update(x for (_, x), t in zip(words, tags, strict=True) if t is None)
                    continue
                f.writelines(f"{form}\t{tag}\n" for (form, _), tag in zip(words, tags,
                                                                            strict=True))
                f.write("\n")
                sentences += 1
                tokens += len(words)
    return {"file": str(out), "documents": len(files), "sentences": sentences, "tokens": tokens,
            "sentences_dropped_for_tags": dict(dropped)}


def sources(checkout: Path) -> Path:
    path = checkout / "not-to-release" / "sources"
    if not path.is_dir():
        raise SystemExit(f"{path} not found: give the treebank repository's checkout")
    return path


def build(out: Path, ewt: Path | None, gum: Path | None, commits: dict[str, str]) -> dict:
    summary = {}
    if ewt:
        summary["ud_ewt"] = convert(sorted(sources(ewt).rglob("*.conllu")),
                                    out / "ud_ewt" / "all.conll")
        summary["ud_ewt"] |= {"source": "github.com/UniversalDependencies/UD_English-EWT",
                              "commit": commits.get("ewt"), "licence": "CC BY-SA 4.0"}
    if gum:
        files = sorted(p for p in sources(gum).glob("GUM_*.conllu")
                       if p.name.split("_")[1] in GUM_OPEN_GENRES)
        summary["ud_gum"] = convert(files, out / "ud_gum" / "open.conll")
        summary["ud_gum"] |= {"source": "github.com/UniversalDependencies/UD_English-GUM",
                              "commit": commits.get("gum"),
                              "licence": "CC BY 4.0 / public domain (genres "
                                         + ", ".join(GUM_OPEN_GENRES) + ")"}
    (out / "SOURCES.json").write_text(json.dumps(summary, indent=1) + "\n")
    return summary
