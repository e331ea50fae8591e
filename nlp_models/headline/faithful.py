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
  ("McCain", "NASA"); stop words aside ("Sentenced to Four Years with ..." is Title Case),
  and two such words at least.
  A **run** of two such names with only a space between must also stand side by side in
  the article, a middle initial or a bracketed aside between: "U.S. Snowe" over "U.S.
  Senator Olympia J. Snowe" names nobody ("Olympia Snowe" is fine, and "Agriculture's Rural
  Community" over "Department of Agriculture's (USDA) Rural Community": the trim drops
  asides). In a Title-Case headline a run also counts the
  words the article itself capitalises inside a sentence (its proper nouns): "Mary Ground
  Coalition" over "Senators Olympia J. Snowe and Mary Landrieu ... the Common Ground
  Coalition" is unsupported, "Bipartisan Policy Center" is not. Chinese, jieba's
  person/place/organisation words (`nr`, `ns`, `nt`) of 2+ characters, verbatim.
* **legal outcomes** (English): a plea, "guilty", a sentence, a conviction, an indictment,
  an acquittal or an arrest the headline states must be mentioned by the article (any form:
  "pleads" is supported by "pleaded"). A newsroom-adapted generator learns its house's
  template ("X Pleads Guilty to Prison for Fraud") and writes it over a memo; names and
  numbers do not see it. The check does not see a wrong subject ("United States Pleads
  Guilty" over an article whose defendant pleaded).

Used at serving (a candidate that fails is not shown: HeadlinePredictor) and by the
evaluation (`unsupported`, `unsupported_number`, `unsupported_name`: training/headline/
quality.py). Rules only, deterministic.
"""

from __future__ import annotations

import functools
import re
import unicodedata
from dataclasses import dataclass
from itertools import pairwise

from nlp_models.headline.lead import ABBREVIATION
from nlp_models.headline.titles import headline_titles

_EN_TOKEN = re.compile(r"(?:[A-Za-z]\.){2,}|[A-Za-z0-9]+(?:[,.'\u2019&-][A-Za-z0-9]+)*")
_STOP = frozenset(
    "a an the of in on at to for and or but nor by with from as is are was were be been "
    "it its he she they we you i his her their our my your this that these those after "
    "before over under into onto up down out off new says say said will would can could "
    "not no yes how why what when where who which amid vs".split())
_ZH_NAME_TAGS = ("nr", "ns", "nt")
_NUMBER = re.compile(r"\d+(?:[.,]\d+)*")
_ABBREVIATION = re.compile(r"(?:[A-Za-z]\.){2,}")
ASIDE = re.compile(r"\s*\([^()]{0,80}\)")  # "(R-Maine)", "(USDA)": never a headline's
_POSSESSIVE = re.compile(r"['\u2019]s?$")
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


_OUTCOMES = {  # a legal outcome, in every form a headline or an article writes it
    "plea": re.compile(r"\bple(?:a|as|ad|ads|aded|ading|d)\b", re.IGNORECASE),
    "guilty": re.compile(r"\bguilty\b", re.IGNORECASE),
    "sentence": re.compile(r"\bsentenc(?:e|es|ed|ing)\b", re.IGNORECASE),
    "conviction": re.compile(r"\bconvict(?:s|ed|ion|ions)?\b", re.IGNORECASE),
    "indictment": re.compile(r"\bindict(?:s|ed|ment|ments)?\b", re.IGNORECASE),
    "acquittal": re.compile(r"\bacquit(?:s|ted|tal)?\b", re.IGNORECASE),
    "arrest": re.compile(r"\barrest(?:s|ed|ing)?\b", re.IGNORECASE),
}


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
    """Every word of 4+ letters but stop words capitalised, and at least two such words
    (one capitalised word, "U.S. Snowe", does not make a headline Title Case)."""
    long = [t for t in tokens
            if len(t) >= 4 and t[0].isalpha() and "." not in t and t.lower() not in _STOP]
    return len(long) >= 2 and all(t[0].isupper() for t in long)


def _strong_name(token: str) -> bool:
    """All capitals (2+ letters) or a capital after the first letter: McCain, NASA, iPhone."""
    letters = [c for c in token if c.isalpha()]
    return (len(letters) >= 2 and all(c.isupper() for c in letters)) or any(
        c.isupper() for c in token[1:])


def _name_flags(tokens: list[str], capitalised: frozenset[str] = frozenset()) -> list[bool]:
    """Which of an English headline's tokens are names (module doc); in Title Case also the
    words in ``capitalised`` (`ArticleNames.capitalised`: only the run check passes them)."""
    title = _title_case([t for t in tokens if not any(c.isdigit() for c in t)])
    flags = []
    for i, t in enumerate(tokens):
        if any(c.isdigit() for c in t):
            flags.append(False)
        elif _ABBREVIATION.fullmatch(t):
            flags.append(True)
        elif not t[0].isupper() or t.lower() in _STOP:
            flags.append(False)
        elif title:
            flags.append(_strong_name(t) or _name_key(t) in capitalised)
        else:
            flags.append(_strong_name(t) if i == 0 else True)
    return flags


def names_en(headline: str) -> list[str]:
    """Dotted abbreviations and capitalised words of an English headline, in order."""
    tokens = _EN_TOKEN.findall(headline)
    return [t for t, name in zip(tokens, _name_flags(tokens), strict=True) if name]


def _name_key(token: str) -> str:
    """"U.S." and "US", "Snowe's" and "snowe" alike."""
    return _POSSESSIVE.sub("", token.replace(".", "").lower())


@dataclass(frozen=True)
class ArticleNames:
    """What the run check reads from an article: every two neighbouring tokens, also across
    a bracketed aside ("Agriculture's (USDA) Rural" gives ("agriculture", "rural")), and the
    two around a single letter ("Olympia J. Snowe" also gives ("olympia", "snowe")); and the
    words it capitalises inside a sentence. All as `_name_key`s."""

    pairs: frozenset[tuple[str, str]] = frozenset()
    capitalised: frozenset[str] = frozenset()

    def __or__(self, other: ArticleNames) -> ArticleNames:
        return ArticleNames(self.pairs | other.pairs, self.capitalised | other.capitalised)


def _starts_sentence(article: str, start: int) -> bool:
    """Does the token at ``start`` open a sentence or paragraph? After ".", only when the
    word before is no title, abbreviation or initial ("Sens.", "Inc.", "J.", "U.S.": the
    lead's sentence rule, lead.ABBREVIATION)."""
    before = article[max(0, start - 24):start].rstrip(" \t")
    if not before or before[-1] in "\n!?:\"\u201c([":
        return True
    return before[-1] == "." and ABBREVIATION.search(before) is None


def article_names(article: str) -> ArticleNames:
    """The article's `ArticleNames` (as written: callers add the titled reading)."""
    found = list(_EN_TOKEN.finditer(article))
    keys = [_name_key(m.group()) for m in found]
    pairs = set(pairwise(keys))
    pairs.update((a, c) for a, b, c in zip(keys, keys[1:], keys[2:], strict=False)
                 if len(b) == 1)
    if ASIDE.search(article):
        pairs.update(pairwise(_name_key(m.group())
                              for m in _EN_TOKEN.finditer(ASIDE.sub("", article))))
    capitalised = {k for m, k in zip(found, keys, strict=True)
                   if m.group()[0].isupper() and k not in _STOP
                   and not _starts_sentence(article, m.start())}
    return ArticleNames(frozenset(pairs), frozenset(capitalised))


def name_runs(headline: str, capitalised: frozenset[str] = frozenset()) -> list[tuple[str, str]]:
    """(first, second) of every two names of an English headline with only a space between,
    as `_name_key`s: "U.S. Snowe" gives ("us", "snowe"); "Sen. Snowe, Collins" none."""
    found = list(_EN_TOKEN.finditer(headline))
    flags = _name_flags([m.group() for m in found], capitalised)
    return [(_name_key(a.group()), _name_key(b.group()))
            for (a, b), (fa, fb) in zip(pairwise(found), pairwise(flags), strict=True)
            if fa and fb and headline[a.end():b.start()].isspace()]


def broken_runs(headline: str, names: ArticleNames) -> list[str]:
    """The headline's runs of two names the article never writes side by side: "U.S. Snowe"."""
    return [f"{a} {b}" for a, b in name_runs(headline, names.capitalised)
            if (a, b) not in names.pairs]


def _named_in_en(name: str, article: str) -> bool:
    if _ABBREVIATION.fullmatch(name):
        bare = name.replace(".", "")
        return (re.search(r"(?<![\w.])" + re.escape(name), article, re.IGNORECASE) is not None
                or re.search(r"(?<!\w)" + re.escape(bare) + r"(?!\w)", article) is not None)
    return re.search(r"(?<!\w)" + re.escape(name) + r"(?!\w)", article,
                     re.IGNORECASE) is not None


def _plural_of_named(name: str, article: str) -> bool:
    """"Departments" for the article's "Department of Justice and Department of ...", "Sens."
    for its "Sen. Snowe and Sen. Coleman": the trim names two bodies or people of one kind
    once (trim.py). Not an acronym's: "IRSs" is a glued "IRS's", not two of them."""
    word = name.removesuffix(".")
    one = word[:-1]
    return (len(word) > 3 and word.endswith("s") and not one.isupper()
            and _named_in_en(one, article))


def names_zh(headline: str) -> list[str]:
    import jieba.posseg  # imported on first use: loading its dictionary takes a second

    return [p.word for p in jieba.posseg.cut(fold(headline))
            if p.flag in _ZH_NAME_TAGS and len(p.word) >= 2 and not p.word.isdigit()]


def unsupported_names(headline: str, article: str, lang: str) -> list[str]:
    """The headline's names and places that the article does not contain (en: also its runs
    of two names the article never writes side by side)."""
    if lang == "zh":
        folded = fold(article)
        return [n for n in names_zh(headline) if n not in folded]
    readings, names = _en_readings(article)
    missing = [n for n in names_en(headline)
               if not any(_named_in_en(n, a) or _plural_of_named(n, a) for a in readings)]
    return missing + broken_runs(headline, names)


@functools.lru_cache(maxsize=8)  # an article's candidates come one after another
def _en_readings(article: str) -> tuple[tuple[str, str], ArticleNames]:
    """The article as written and with short titles ("Sen. Reid" is "Senator Reid"), and
    both readings' `article_names`; cached: every candidate of an article asks again."""
    titled = headline_titles(article)
    return (article, titled), article_names(article) | article_names(titled)


def unsupported_claims(headline: str, article: str, lang: str) -> list[str]:
    """The legal outcomes the headline states and the article never mentions (English)."""
    if lang != "en":
        return []
    return [name for name, form in _OUTCOMES.items()
            if form.search(headline) and not form.search(article)]


def unsupported(headline: str, article: str, lang: str) -> list[str]:
    """Numbers, names, then legal outcomes of the headline that the article lacks (empty:
    faithful)."""
    return (unsupported_numbers(headline, article) + unsupported_names(headline, article, lang)
            + unsupported_claims(headline, article, lang))
