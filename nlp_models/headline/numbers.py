"""Whole numbers only: a Chinese headline's digits are numbers the article contains.

A character decoder that copies digits one at a time strings them together ("1002025000万元"
from an article with 100, 2025 and 5000): each digit is a likely copy, the number is not.
This rule, applied inside the beam search of the Chinese full generator, lets a hypothesis
write a digit only if its run of digits so far, with that digit, begins a digit run of the
article, and end a run (by any other character, or the end of the headline) only when the
run is one of the article's. Digits are 0-9, ASCII or full-width; "3.5" is the runs 3 and
5. Text without digits is untouched, and a run can always be completed (it is a prefix of
an article run), so the rule never leaves a hypothesis without a next token. At the length
limit (the last step of the search) a digit must finish a run, where some token can.

It has the interface of `wholewords.WholeWords` (`article`, `block`), which the beam search
calls for either language.
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from dataclasses import dataclass

import torch

from nlp_models.headline.vocab import Vocab

_RUN = re.compile(r"[0-9０-９]+")
_FULL_WIDTH = str.maketrans("０１２３４５６７８９", "0123456789")


def digit_runs(text: str) -> list[str]:
    """The runs of digits of a text, full-width digits as ASCII."""
    return [r.translate(_FULL_WIDTH) for r in _RUN.findall(text)]


@dataclass(frozen=True)
class ArticleNumbers:
    """One article's digit runs, their prefixes, and the tokens that write one digit
    (vocabulary and copied unknown ids -> digit, ASCII)."""

    runs: frozenset[str]
    prefixes: frozenset[str]
    digits: dict[int, str]


class WholeNumbers:
    def __init__(self, vocab: Vocab):
        self.size = len(vocab)
        # vocabulary id -> its digit (ASCII), for the tokens that are one digit
        self.digits = {t: d.translate(_FULL_WIDTH) for t in range(self.size)
                       if len(d := vocab.surface(t)) == 1 and _RUN.fullmatch(d)}

    def article(self, text: str, oovs: Sequence[str]) -> ArticleNumbers:
        runs = frozenset(digit_runs(text))
        prefixes = frozenset(r[:i] for r in runs for i in range(1, len(r) + 1))
        oov_digits = {self.size + i: o.translate(_FULL_WIDTH) for i, o in enumerate(oovs)
                      if len(o) == 1 and _RUN.fullmatch(o)}
        return ArticleNumbers(runs, prefixes, {**self.digits, **oov_digits})

    def block(self, logp: torch.Tensor, texts: Sequence[list[int]],
              arts: Sequence[ArticleNumbers], cut: bool = False) -> torch.Tensor:
        """logp (rows, V+ext) with -inf for the next tokens that would make or leave a digit
        run the article lacks; ``texts``: each row's tokens so far; ``cut``: the search stops
        after this token, so a digit must finish an article run (unless no token could)."""
        out = logp.clone()
        for r, (tokens, art) in enumerate(zip(texts, arts, strict=True)):
            digits = art.digits
            run = ""
            for t in reversed(tokens):
                if t not in digits:
                    break
                run = digits[t] + run
            blocked = [t for t, d in digits.items() if run + d not in art.prefixes]
            out[r, blocked] = float("-inf")
            if run and run not in art.runs:  # the run must go on: only digits may follow
                allowed = [t for t, d in digits.items() if run + d in art.prefixes]
                keep = out[r, allowed].clone()
                out[r] = float("-inf")
                out[r, allowed] = keep
            if cut:
                unfinished = [t for t, d in digits.items() if run + d not in art.runs]
                last = out[r].clone()
                last[unfinished] = float("-inf")
                if bool(torch.isfinite(last).any()):
                    out[r] = last
        return out
