"""Does a headline state only what its article says? Numbers (with their units) and names.

A headline is *unsupported* when it names something the article does not:

* **numbers with their unit** (both languages): every number of the headline (digit runs
  with a decimal point or thousands commas, "1,000" = "1000"; "10-year" and "4th" give 10
  and 4; English number words one-twelve and first-twelfth in the article count for their
  digits: "fourth quarter" supports "4th qtr") must occur
  in the article; a number the headline gives a unit (%, percent, pct; bn, billion; m, mln,
  million; tn, trillion; k, thousand; 万, 亿, 万亿) must occur there with the same unit.
  "German unemployment rose 7,000%" over an article that says 7,000 more people are out
  of work is unsupported: the number is there, the percentage is not.
* **names**: English, dotted abbreviations ("U.S.", supported by the same letters with or
  without dots) and capitalised words other than the first word and stop words ("Trump",
  "Helsinki"), as whole words, case aside; in a Title-Case headline (every word of 4+
  letters capitalised) only words with a capital after the first letter or in all capitals
  ("McCain", "NASA"). Chinese, jieba's person/place/organisation words (`nr`, `ns`, `nt`)
  of 2+ characters, verbatim.

Used at serving (a candidate that fails is not shown: HeadlinePredictor) and by the
evaluation (`unsupported`, `unsupported_number`, `unsupported_name`: training/headline/
quality.py). Rules only, deterministic.
"""

from __future__ import annotations

import re
import unicodedata

_EN_TOKEN = re.compile(r"(?:[A-Za-z]\.){2,}|[A-Za-z0-9]+(?:[,.'\u2019&-][A-Za-z0-9]+)*")
_STOP = frozenset(
    "a an the of in on at to for and or but nor by with from as is are was were be been "
    "it its he she they we you i his her their our my your this that these those after "
    "before over under into onto up down out off new says say said will would can could "
    "not no yes how why what when where who which amid vs".split())
_ZH_NAME_TAGS = ("nr", "ns", "nt")
_NUMBER = re.compile(r"\d+(?:[.,]\d+)*")
_UNITS = {"%": "%", "percent": "%", "pct": "%", "per cent": "%", "bn": "bn", "billion": "bn",
          "m": "m", "mn": "m", "mln": "m", "million": "m", "tn": "tn", "trillion": "tn",
          "k": "k", "thousand": "k", "万": "万", "亿": "亿", "万亿": "万亿"}
_QUANTITY = re.compile(
    r"(\d+(?:[.,]\d+)*)\s*(%|per cent\b|percent\b|pct\b|billion\b|bn\b|million\b|mln\b|mn\b"
    r"|m\b|trillion\b|tn\b|thousand\b|k\b|万亿|万|亿)?", re.IGNORECASE)
_WORD_NUMBERS = {w: str(i) for i, w in enumerate(
    "zero one two three four five six seven eight nine ten eleven twelve".split())} | {
    w: str(i) for i, w in enumerate("first second third fourth fifth sixth seventh eighth "
                                    "ninth tenth eleventh twelfth".split(), 1)}


def fold(text: str) -> str:
    """NFKC: full-width digits and signs as ASCII (２０％ = 20%)."""
    return unicodedata.normalize("NFKC", text)


def numbers(text: str) -> list[str]:
    return [n.replace(",", "") for n in _NUMBER.findall(text)]


def quantities(text: str) -> list[tuple[str, str]]:
    """(number, unit) pairs of a text, the unit canonical ("" when none follows)."""
    return [(m.group(1).replace(",", ""), _UNITS[m.group(2).lower()] if m.group(2) else "")
            for m in _QUANTITY.finditer(fold(text))]


def unsupported_numbers(headline: str, article: str) -> list[str]:
    """The headline's numbers (with their unit, "7000%") that the article lacks."""
    said = quantities(article)
    bare = {n for n, _ in said} | {
        d for w, d in _WORD_NUMBERS.items()
        if re.search(rf"\b{w}\b", article, re.IGNORECASE)}
    out = []
    for n, unit in quantities(headline):
        if n not in bare or (unit and (n, unit) not in said):
            out.append(n + unit)
    return out


def _title_case(tokens: list[str]) -> bool:
    long = [t for t in tokens if len(t) >= 4 and t[0].isalpha()]
    return bool(long) and all(t[0].isupper() for t in long)


def _strong_name(token: str) -> bool:
    """All capitals (2+ letters) or a capital after the first letter: McCain, NASA, iPhone."""
    letters = [c for c in token if c.isalpha()]
    return (len(letters) >= 2 and all(c.isupper() for c in letters)) or any(
        c.isupper() for c in token[1:])


def names_en(headline: str) -> list[str]:
    """Dotted abbreviations and capitalised words of an English headline, in order."""
    found = _EN_TOKEN.findall(headline)
    tokens = [t for t in found if not any(c.isdigit() for c in t)]
    title = _title_case(tokens)
    out = []
    first = found[:1]
    for t in tokens:
        if re.fullmatch(r"(?:[A-Za-z]\.){2,}", t):
            out.append(t)
        elif t[0].isupper() and t.lower() not in _STOP:
            if title:
                if _strong_name(t):
                    out.append(t)
            elif [t] != first or _strong_name(t):
                out.append(t)
    return out


def _named_in_en(name: str, article: str) -> bool:
    if re.fullmatch(r"(?:[A-Za-z]\.){2,}", name):
        bare = name.replace(".", "")
        return (re.search(r"(?<![\w.])" + re.escape(name), article, re.IGNORECASE) is not None
                or re.search(r"(?<!\w)" + re.escape(bare) + r"(?!\w)", article) is not None)
    return re.search(r"(?<!\w)" + re.escape(name) + r"(?!\w)", article,
                     re.IGNORECASE) is not None


def names_zh(headline: str) -> list[str]:
    import jieba.posseg  # imported on first use: loading its dictionary takes a second

    return [p.word for p in jieba.posseg.cut(fold(headline))
            if p.flag in _ZH_NAME_TAGS and len(p.word) >= 2 and not p.word.isdigit()]


def unsupported_names(headline: str, article: str, lang: str) -> list[str]:
    """The headline's names and places that the article does not contain."""
    if lang == "zh":
        folded = fold(article)
        return [n for n in names_zh(headline) if n not in folded]
    return [n for n in names_en(headline) if not _named_in_en(n, article)]


def unsupported(headline: str, article: str, lang: str) -> list[str]:
    """Numbers, then names, of the headline that the article lacks (empty: faithful)."""
    return unsupported_numbers(headline, article) + unsupported_names(headline, article, lang)
