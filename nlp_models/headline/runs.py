"""Whole runs only: a Chinese headline's numbers and Latin words are ones the article has.

A character decoder copies digits and Latin letters one at a time and strings them together:
"1002025000万元" from an article with 100, 2025 and 5000, "2018MAMusiards" from one with
2018MAMA and Music Awards. Each character is a likely copy, the run is not. This rule,
applied inside the beam search of the Chinese full generator, lets a hypothesis write a
digit or Latin letter only if its run of such characters so far, with that one, begins a
run of the article, and end a run (by any other character, or the end of the headline) only
when the run is one of the article's. A run is a maximal string of 0-9, A-Z and a-z, ASCII
or full-width (as ASCII), case kept: "3.5" is the runs 3 and 5, "iPhone 16" the runs iPhone
and 16. Text without such characters is untouched, and a run can always be completed (it is
a prefix of an article run), so the rule never leaves a hypothesis without a next token. At
the length limit (the last step of the search) such a character must finish a run, where
some token can.

It has the interface of `wholewords.WholeWords` (`article`, `block`), which the beam search
calls for either language.
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from dataclasses import dataclass, field

import torch

from nlp_models.headline.vocab import Vocab

_RUN = re.compile(r"[0-9A-Za-z０-９Ａ-Ｚａ-ｚ]+")
_FULL_WIDTH = str.maketrans(
    "０１２３４５６７８９ＡＢＣＤＥＦＧＨＩＪＫＬＭＮＯＰＱＲＳＴＵＶＷＸＹＺａｂｃｄｅｆｇｈｉｊｋｌｍｎｏｐｑｒｓｔｕｖｗｘｙｚ",
    "0123456789ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz")


def alnum_runs(text: str) -> list[str]:
    """The runs of digits and Latin letters of a text, full-width ones as ASCII."""
    return [r.translate(_FULL_WIDTH) for r in _RUN.findall(text)]


@dataclass(frozen=True)
class ArticleRuns:
    """One article's runs, their prefixes, the tokens that write one run character
    (vocabulary and copied unknown ids -> the character, ASCII), and per run-so-far the
    token lists `WholeRuns.block` needs (filled as the search meets each run)."""

    runs: frozenset[str]
    prefixes: frozenset[str]
    chars: dict[int, str]
    _lists: dict[str, RunLists] = field(default_factory=dict, compare=False, repr=False)

    def lists(self, run: str) -> RunLists:
        if run not in self._lists:
            self._lists[run] = RunLists(
                blocked=[t for t, c in self.chars.items() if run + c not in self.prefixes],
                going_on=[t for t, c in self.chars.items() if run + c in self.prefixes],
                unfinished=[t for t, c in self.chars.items() if run + c not in self.runs])
        return self._lists[run]


@dataclass(frozen=True)
class RunLists:
    """After a run so far: the tokens that would start or extend a run the article lacks
    (`blocked`), those that extend it into an article run's prefix (`going_on`), and those
    that would not finish an article run (`unfinished`, for the last step)."""

    blocked: list[int]
    going_on: list[int]
    unfinished: list[int]


class WholeRuns:
    def __init__(self, vocab: Vocab):
        self.size = len(vocab)
        # vocabulary id -> its character (ASCII), for the tokens that are one digit or letter
        self.chars = {t: d.translate(_FULL_WIDTH) for t in range(self.size)
                      if len(d := vocab.surface(t)) == 1 and _RUN.fullmatch(d)}

    def article(self, text: str, oovs: Sequence[str]) -> ArticleRuns:
        runs = frozenset(alnum_runs(text))
        prefixes = frozenset(r[:i] for r in runs for i in range(1, len(r) + 1))
        oov_chars = {self.size + i: o.translate(_FULL_WIDTH) for i, o in enumerate(oovs)
                     if len(o) == 1 and _RUN.fullmatch(o)}
        return ArticleRuns(runs, prefixes, {**self.chars, **oov_chars})

    def block(self, logp: torch.Tensor, texts: Sequence[list[int]],
              arts: Sequence[ArticleRuns], cut: bool = False) -> torch.Tensor:
        """logp (rows, V+ext) with -inf for the next tokens that would make or leave a run
        the article lacks; ``texts``: each row's tokens so far; ``cut``: the search stops
        after this token, so a run character must finish an article run (unless no token
        could)."""
        out = logp.clone()
        for r, (tokens, art) in enumerate(zip(texts, arts, strict=True)):
            run = ""
            for t in reversed(tokens):
                if t not in art.chars:
                    break
                run = art.chars[t] + run
            lists = art.lists(run)
            out[r, lists.blocked] = float("-inf")
            if run and run not in art.runs:  # the run must go on: only its characters may follow
                keep = out[r, lists.going_on].clone()
                out[r] = float("-inf")
                out[r, lists.going_on] = keep
            if cut:
                last = out[r].clone()
                last[lists.unfinished] = float("-inf")
                if bool(torch.isfinite(last).any()):
                    out[r] = last
        return out
