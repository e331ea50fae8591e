"""Titles before a name as headlines write them (AP style): "U.S. Senator Olympia J. Snowe"
reads "Sen. Olympia J. Snowe" to the English full generator.

Press offices change how they open a release; their editors' headlines keep the short title.
Adapted on releases opening "Sen. Olympia J. Snowe ...", the generator learned to copy the
opening word, and over newer ones opening "U.S. Senator Olympia J. Snowe ..." wrote
"U.S. Snowe, ..." in 234 of 500 headlines (Sen. Snowe's office, docs/models/headline.md).
News text already writes the short forms, so the generator reads a release as it reads the
news. A title is shortened only before a capitalised word (a name): "the Senator said"
stays.
"""

from __future__ import annotations

import re

_BEFORE_NAME = r" (?=[A-Z])"
_US = r"\b(?:U\.S\. )?"
_TITLES = [
    (re.compile(_US + r"Senators" + _BEFORE_NAME), "Sens. "),
    (re.compile(_US + r"Senator" + _BEFORE_NAME), "Sen. "),
    (re.compile(_US + r"Representatives" + _BEFORE_NAME), "Reps. "),
    (re.compile(_US + r"(?:Representative|Congressman|Congresswoman)" + _BEFORE_NAME), "Rep. "),
    (re.compile(r"\bGovernor" + _BEFORE_NAME), "Gov. "),
]


def headline_titles(text: str) -> str:
    """``text`` with the titles before names shortened (module doc)."""
    for pattern, short in _TITLES:
        text = pattern.sub(short, text)
    return text


def titled_holding(article: str, phrase: str) -> str:
    """The article with its titles shortened, as a constrained headline's lead spans and
    fallback read it ("U.S. Senator Olympia J. Snowe" -> "Sen. Olympia J. Snowe": the
    editors' form), unless that loses a word of the phrase ("U.S. Senator" asked for)."""
    titled = headline_titles(article)
    kept = titled.lower()
    return titled if all(word.lower() in kept for word in phrase.split()) else article
