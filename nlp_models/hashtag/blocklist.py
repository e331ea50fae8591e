"""Hashtags the generator must never suggest: slurs and abuse it learned from its data.

The English training data includes hate-speech corpora (SemEval HatEval, Davidson et al.),
so the generator reproduces their hashtags (`#womensuck`, slurs) on ordinary posts. Output is
checked against a plain-text list shipped next to the weights; a matching hashtag is dropped.

Matching is on whole words, not substrings, so "Scunthorpe" or "#cockpit" are not caught by a
short entry: an English hashtag is split into words the way targets are (`womensuck` -> `women
suck`), and an entry (one word or a phrase) matches a contiguous run of those words. Entries in
Chinese script match as substrings, since Chinese hashtags have no word boundaries.
"""

from __future__ import annotations

import re
from pathlib import Path

from nlp_models.hashtag.text import split_hashtag
from nlp_models.language import is_cjk

_NOT_ALNUM = re.compile(r"[\W_]+")  # what split_hashtag drops between words


def _has_cjk(text: str) -> bool:
    return any(is_cjk(c) for c in text)


class Blocklist:
    def __init__(self, entries: list[str]):
        # An entry is kept without its spaces: hashtags split unpredictably ("libtards" ->
        # "lib tards"), so any run of a hashtag's words, joined, is compared with it.
        self.joined = {"".join(e.lower().split()) for e in entries if e.strip() and not _has_cjk(e)}
        self.substrings = [e.strip() for e in entries if _has_cjk(e)]
        # Any entry inside a hashtag's letters and digits: a run of its words, joined, is
        # such a substring, so where none is found the word split (wordsegment, the slow
        # part of serving: ~0.5 ms a hashtag) is skipped.
        self.any_entry = (re.compile("|".join(map(re.escape, sorted(self.joined))))
                          if self.joined else None)

    @classmethod
    def load(cls, path: str | Path) -> Blocklist:
        """One entry per line; blank lines and lines starting with '#' are ignored."""
        lines = Path(path).read_text(encoding="utf-8").splitlines()
        return cls([line for line in lines if line.strip() and not line.lstrip().startswith("#")])

    def blocks(self, hashtag: str) -> bool:
        if any(s in hashtag for s in self.substrings):
            return True
        if self.any_entry is None or not self.any_entry.search(_NOT_ALNUM.sub("", hashtag.lower())):
            return False
        words = split_hashtag(hashtag, "en")
        return any("".join(words[i:j]) in self.joined
                   for i in range(len(words)) for j in range(i + 1, len(words) + 1))
