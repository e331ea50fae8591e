"""The article's lead trimmed to a headline: Hedge Trimmer's idea (Dorr, Zajic and Schwartz,
2003) with rules instead of a parser.

A newsroom's headline is usually its lead sentence, compressed: "A Harvey, Illinois, man was
sentenced to 63 months in prison today for his role in a stolen identity refund scheme"
becomes "Harvey, Illinois, man sentenced to 63 months in prison for role in stolen identity
refund scheme". The steps, in Hedge Trimmer's order, each on the first sentence after the
dateline or byline:

1. drop what is never a headline's: parenthetical asides "(R-Maine)", a preamble before the
   subject ("Working to resolve a land conflict affecting rural Nevadans, Sens. Harry Reid and
   John Ensign introduced ..." -> "Sens. Harry Reid and John Ensign introduced ...": a first
   clause opening with a preposition, an -ing word or "a/an <noun>", when what follows starts
   with a capitalised subject and has a verb), appositives between commas that start with an
   age, a determiner or who/which ("Paul Carter, 47, of ..."), time expressions ("today", "on
   Friday, Feb. 2,", "this morning", "last week"; "Today, " and "On Nov. 15, 2017, " where
   they open the sentence); "<who> announced that it/he/she/they" becomes "<who>";
2. drop determiners (a, an, the; not one between two capitalised words: "President Bush the
   Children's Health Insurance Program") and the auxiliaries of a passive or perfect verb
   ("was sentenced" -> "sentenced", "has announced" -> "announced"; not after who, which or
   that: "veterans who are disabled" keeps its "are");
3. while the result is longer than `target` words or says a word twice (what the
   `degenerate` measure flags), cut its last clause: at the last comma, semicolon or dash,
   else before the last subordinating word (that, which, who, because, after, when, while,
   as, for, in, on, at, with, by, from, to) beyond the first `MIN_WORDS` words; never at
   the comma between a place and its state ("Los Angeles, California-area managers");
   and, when the first word that reads as the main verb is within `target`, never before it
   and the AFTER_VERB words after it: "Mohamed Rafik Naji of Brooklyn, New York, pleaded
   guilty to ..." is not cut at "York," (a headline without its verb: "Mohamed Rafik Naji
   of Brooklyn, New York"), nor "Sen. Harry Reid released the following statement on the
   eve of ..." at "on" (a verb without its news: "Sen. Harry Reid released following
   statement"). A subject that says a word twice, or one its verb's words say, is cut to
   one part first ("Virginia-based home furnishings company, Bassett Mirror Company,
   agreed" -> "Bassett Mirror Company agreed"), and a repeat no clause cut ends is cut at
   an "and" after the verb.

Everything left is the article's own words in its own order, so a trimmed lead states no
number or name the article lacks; where dropping an appositive joins two names the article
keeps apart, the appositives stay.
"""

from __future__ import annotations

import re

from nlp_models.headline.faithful import ASIDE, article_names, broken_runs
from nlp_models.headline.lead import (
    first_sentence,
    repeats_a_word,
    whole_sentences,
    without_dateline,
)
from nlp_models.headline.sentences import sentences
from nlp_models.headline.wholewords import MIN_HEADLINE_WORDS

MIN_WORDS = 5  # a trim never cuts the result below this many words
# the words after the main verb a cut keeps: its object and where it leads ("released
# statement" says nothing, "released statement on eve of D-Day" does)
AFTER_VERB = 3
TARGET_WORDS = 12

_STATES = (r"(?:Alabama|Alaska|Arizona|Arkansas|California|Colorado|Connecticut|Delaware"
           r"|Florida|Georgia|Hawaii|Idaho|Illinois|Indiana|Iowa|Kansas|Kentucky|Louisiana"
           r"|Maine|Maryland|Massachusetts|Michigan|Minnesota|Mississippi|Missouri|Montana"
           r"|Nebraska|Nevada|New Hampshire|New Jersey|New Mexico|New York|North Carolina"
           r"|North Dakota|Ohio|Oklahoma|Oregon|Pennsylvania|Rhode Island|South Carolina"
           r"|South Dakota|Tennessee|Texas|Utah|Vermont|Virginia|Washington|West Virginia"
           r"|Wisconsin|Wyoming|D\.C\.|Puerto Rico)\b")
_STATE_AFTER_COMMA = re.compile(rf"\s*{_STATES}")  # "Mattituck, New York": one place
_APPOSITIVE = re.compile(
    r",\s+(?:\d{1,3}|(?:a|an|the|who|which|whose|now|formerly|also)\b"
    rf"(?:[^,;]|,(?=\s+{_STATES})){{0,80}}?),(?=\s)(?!\s+{_STATES})",
    re.IGNORECASE)
_DAYS = r"(?:Monday|Tuesday|Wednesday|Thursday|Friday|Saturday|Sunday)"
_MONTHS = (r"(?:Jan|Feb|Mar|Apr|May|Jun|Jul|Aug|Sep|Sept|Oct|Nov|Dec)[a-z]*\.?")
_TIME = re.compile(
    rf",?\s+(?:on\s+)?{_DAYS}(?:,?\s+{_MONTHS}\s+\d{{1,2}}(?:,\s*\d{{4}})?)?,?(?=[\s.,;]|$)"
    rf"|,?\s+(?:on\s+)?{_MONTHS}\s+\d{{1,2}}(?:,\s*\d{{4}})?,?(?=[\s.,;]|$)"
    r"|\s+(?:today|yesterday|tonight|this (?:morning|afternoon|evening|week|month|year)"
    r"|last (?:night|week|month|year)|earlier this (?:week|month|year))\b(?!['’]s)",
    re.IGNORECASE)
# a time expression that opens the sentence: "Today, ...", "On Nov. 15, 2017, ...",
# "Earlier this week, ..."
_LEADING_TIME = re.compile(
    rf"^(?:(?:earlier|later)\s+)?(?:today|yesterday|tonight|this (?:morning|afternoon|evening"
    rf"|week|month|year)|last (?:night|week|month|year)|on\s+{_DAYS}(?:,?\s+{_MONTHS}\s+"
    rf"\d{{1,2}}(?:,\s*\d{{4}})?)?|on\s+{_MONTHS}\s+\d{{1,2}}(?:st|nd|rd|th)?(?:,\s*\d{{4}})?"
    rf"|in\s+{_MONTHS}(?:\s+\d{{4}})?)\s*,?\s+",
    re.IGNORECASE)
_DETERMINER = re.compile(r"\b(?:a|an|the)\s+", re.IGNORECASE)
_AUXILIARY = re.compile(
    r"(?<!\bwho )(?<!\bwhich )(?<!\bthat )"  # "veterans who are disabled" keeps its verb
    r"\b(?:is|are|was|were|has|have|had)(?:\s+been)?\s+(?=\w+(?:ed|en|wn|ung|ught|id)\b)",
    re.IGNORECASE)
_CLAUSE_MARK = re.compile(r"\s*(?:[,;:]|\s--|\s[—–])\s*")
_CLAUSE_START = re.compile(r"[,;:]\s+|\s(?:--|[—–])\s*")  # not the comma of "$11,692,149"
_SUBORDINATE = frozenset("that which who because after when while as for in on at with by "
                         "from to".split())
# words that open a preamble: "In a letter to ..., Sen. Snowe urged"
_PREAMBLE_OPENERS = frozenset("after amid as at before by despite during following for in on "
                              "since through to under upon while with without".split())
_MODALS = frozenset("can could may might must shall should will would".split())
# Finite verbs a lead uses that do not end in -ed ("Sales rose", "Smith won", "X is ...").
_FINITE = frozenset("is are was were has have had said won lost made took gave paid sent "
                    "sought brought struck ran began told found held led left met set spent "
                    "went came became chose drew grew hit cut put kept sold bought built wrote "
                    "got saw shot stole fled fought spoke broke rose fell pled".split())


def _tidy(text: str) -> str:
    """One space between words, none before a mark; no mark and no "and" or "or" at the end
    (a cut after the phrase may leave one: "... connections to lobbyist Jack Abramoff and")."""
    text = re.sub(r"\s+([,;:.])", r"\1", " ".join(text.split())).strip(" ,;:-—–.")
    return re.sub(r"[\s,]+(?:and|or)$", "", text)


def compress(sentence: str, appositives: bool = True, keep: str = "") -> str:
    """Steps 1 and 2: asides, a preamble (unless it holds `keep`), time expressions,
    determiners and auxiliaries dropped."""
    text = _LEADING_TIME.sub("", ASIDE.sub("", sentence).strip())
    text = _without_preamble(text, keep)
    text = _without_self_report(text)
    if appositives:
        text = _APPOSITIVE.sub("", text)
    text = _TIME.sub("", text)
    text = _AUXILIARY.sub("", text)
    text = _tidy(_without_determiners(text))
    text = _named_once(text, keep)
    return text[:1].upper() + text[1:]


def _named_once(text: str, keep: str = "") -> str:
    """`text` with two bodies or two people of one title named once (a title said twice is a
    repeat, which `degenerate` counts and the lead rule never offers), unless that loses
    `keep`."""
    for rule in (_bodies_named_once, _without_shared_titles):
        if keep in (shorter := rule(text)):
            text = shorter
    return text


_SHARED_HEAD = re.compile(
    r"\b(Department|Office|Bureau|Division|Committee) of ((?:[A-Z][\w&'.-]*\s)+)and \1 of ")


def _bodies_named_once(text: str) -> str:
    """"Department of Justice and Department of Homeland Security" -> "Departments of Justice
    and Homeland Security"."""
    return _SHARED_HEAD.sub(r"\1s of \2and ", text)


_TITLES = frozenset(
    "Sen. Sens. Senator Rep. Reps. Representative Senate House Democratic Republican Majority "
    "Minority Leader Assistant Speaker Chairman Chairwoman Ranking Member Gov. Governor Mayor "
    "Secretary Attorney General Deputy Acting U.S. Whip President Vice".split())


_PLURAL_TITLES = {"Sen.": "Sens.", "Rep.": "Reps."}  # others read as names the article lacks


def _without_shared_titles(text: str) -> str:
    """Two people joined by "and" whose titles share words, the shared title said once:
    "Sen. Harry Reid and Sen. John Sununu" -> "Sens. Harry Reid and John Sununu" (a title said
    twice is a repeat); without a plural for it, the names alone: "Senate Democratic Leader
    Harry Reid and House Democratic Leader Nancy Pelosi urged" -> "Harry Reid and Nancy
    Pelosi urged" ("Democratic Leaders Harry Reid" would name a run the article lacks)."""
    words = text.split()
    for i, word in enumerate(words):
        if word != "and" or i == 0:
            continue
        left_name = _name_back(words, i)
        left_titles = _titles_back(words, i - len(left_name))
        right_titles = _titles_forward(words, i + 1)
        right_name = _name_forward(words, i + 1 + len(right_titles))
        if (len(left_name) >= 2 and len(right_name) >= 2 and left_titles and right_titles
                and set(left_titles) & set(right_titles)):
            start = i - len(left_name) - len(left_titles)
            end = i + 1 + len(right_titles) + len(right_name)
            shared = [t for t in left_titles if t in right_titles]
            title = ([*shared[:-1], _PLURAL_TITLES[shared[-1]]]
                     if shared[-1] in _PLURAL_TITLES else [])
            return " ".join([*words[:start], *title, *left_name, "and", *right_name,
                             *words[end:]])
    return text


def _titles_back(words: list[str], end: int) -> list[str]:
    """The title words ("Senate Democratic Leader") that end before word `end`."""
    start = end
    while start > 0 and words[start - 1] in _TITLES:
        start -= 1
    return words[start:end]


def _titles_forward(words: list[str], start: int) -> list[str]:
    """The title words from word `start` on."""
    end = start
    while end < len(words) and words[end] in _TITLES:
        end += 1
    return words[start:end]


def _name_back(words: list[str], end: int) -> list[str]:
    """The name that ends before word `end`; none after a comma (the end of a list:
    "Sen. A, and Sen. B" keeps its titles for the subject rule's first-of-a-list)."""
    start = end
    while (start > 0 and words[start - 1][:1].isupper() and words[start - 1] not in _TITLES
           and not words[start - 1].endswith(",")):
        start -= 1
    return words[start:end]


def _name_forward(words: list[str], start: int) -> list[str]:
    """The capitalised words of a name from word `start` on, up to a comma."""
    end = start
    while end < len(words) and words[end][:1].isupper() and words[end] not in _TITLES:
        end += 1
        if words[end - 1].endswith(","):
            break
    return words[start:end]


def _without_preamble(text: str, keep: str = "") -> str:
    """`text` from its subject when a preamble of 3+ words opens it: a first clause that
    starts with a preposition, an -ing word or "a/an <lower-case word>", has no verb of its
    own (else it is the main clause: "A former contractor pleaded guilty ..., the
    Department announced") and is followed by a capitalised subject with a verb ("A
    longtime advocate of ..., Sen. Snowe hailed"). After "a/an ..." the subject is a name,
    not "a <noun>" (that is an appositive: "A former executive of Embraer S.A., a
    Brazilian-based manufacturer, pleaded"); a preamble never ends in a place ("A former
    Hadley, Massachusetts, Police Officer"). `text` itself otherwise, or when the preamble
    holds `keep`."""
    words = text.split(maxsplit=2)
    if len(words) < 3:
        return text
    opener = words[0].lower()
    if not (opener in _PREAMBLE_OPENERS or (len(opener) > 5 and opener.endswith("ing"))
            or (opener in ("a", "an") and words[1][:1].islower())):
        return text
    comma = next((m for m in re.finditer(r",\s+", text)
                  if not (text[:m.start()].split()[-1][:1].isupper()
                          and _STATE_AFTER_COMMA.match(text, m.end() - 1))), None)
    if comma is None:
        return text
    preamble, rest = text[:comma.start()], text[comma.end():]
    article = _DETERMINER.match(rest)
    if article and opener not in ("a", "an"):  # "With X, the Senate passed"
        rest = rest[article.end():]
    verb = _main_verb(rest.split())
    if (len(preamble.split()) < 3 or (keep and keep in preamble) or not rest[:1].isupper()
            or verb is None or verb >= TARGET_WORDS or _has_verb(preamble)
            or re.search(rf",\s+{_STATES}$", preamble)):
        return text
    return rest


# "<who> announced that it ...": who said it is who did it
_SELF_REPORT = re.compile(
    r"^(?P<who>[A-Z][^,;()]{0,60}?)\s+(?:today\s+)?(?:announced|said|reported)\s+"
    r"(?:today\s+)?that\s+(?:it|they|he|she)\s+(?P<rest>\S.*)$")


def _without_self_report(text: str) -> str:
    """ "The Justice Department announced that it reached an agreement with ..." -> "The
    Justice Department reached an agreement with ...": the announcement is the news when
    the announcer is its subject. (Dropping "<who> announced that" before another subject
    helped DOJ's archive but cost Snowe's, whose editors keep "Sens. Snowe, Collins
    announce ...".)"""
    m = _SELF_REPORT.match(text)
    return f"{m.group('who')} {m.group('rest')}" if m else text


def _has_verb(clause: str) -> bool:
    """Whether a clause reads as having its own verb: a finite one or a modal ("A urine test
    can help doctors ..., U.S. researchers reported")."""
    words = clause.split()
    return _main_verb(words) is not None or any(w.lower() in _MODALS for w in words)


def _without_determiners(text: str) -> str:
    """Every a/an/the dropped but one between two capitalised words, which would join two
    names ("President Bush the Children's Health Insurance Program" -> "Bush Children's")."""

    def drop(m: re.Match) -> str:
        before = text[:m.start()].split()
        between_names = (bool(before) and before[-1][:1].isupper() and before[-1][-1].isalnum()
                         and text[m.end():m.end() + 1].isupper())
        return m.group() if between_names else ""

    return _DETERMINER.sub(drop, text)


def _from_clause_with(text: str, phrase: str) -> str:
    """`text` from the start of the clause that holds `phrase` (after the last clause mark
    before it), its first letter capitalised; `text` itself when the phrase is not in it."""
    at = text.find(phrase)
    if at < 0:
        return text
    starts = [m.end() for m in _CLAUSE_START.finditer(text, 0, at)]
    rest = text[starts[-1]:] if starts else text
    return rest[:1].upper() + rest[1:]


def shorten(text: str, target: int = TARGET_WORDS, keep: str = "") -> str:
    """Step 3: cut trailing clauses until at most `target` words and no word of 3+ letters
    said twice ("sentenced to six months imprisonment and six months home confinement"), or
    no cut is left. A repeat may be cut within the AFTER_VERB words ("made the following
    statement following the announcement"), length not; no cut falls before the end of
    `keep` ("Department of Justice entered into settlement agreement with House Committee on
    Oversight and Government Reform and will begin to produce ..." ends after the phrase
    "House Committee on Oversight", not at "with"). A subject that says a word twice is cut
    to one part first; one that says a word of the trim's rest, after the cuts."""
    short = _shortened(_subject_without_repeat(text, within=True).split(), target, keep)
    if repeats_a_word(short) and (alone := _subject_without_repeat(short)) != short:
        short = _shortened(alone.split(), target, keep)
    return short


def _shortened(words: list[str], target: int, keep: str = "") -> str:
    verb = _main_verb(words)  # cuts only shorten the end: the first verb stays where it is
    verb_kept = verb is not None and verb < target
    through = _words_through(words, keep)
    floor = max(MIN_WORDS, verb + 1 + AFTER_VERB) if verb_kept else MIN_WORDS
    repeat_floor = max(MIN_WORDS, verb + 1) if verb_kept else MIN_WORDS
    floor, repeat_floor = max(floor, through), max(repeat_floor, through)
    while True:
        cut = _last_cut(words, floor) if len(words) > target else None
        if cut is None and repeats_a_word(" ".join(words)):
            cut = _repeat_cut(words, repeat_floor, verb)
        if cut is None:
            break
        words = words[:cut]
    return _tidy(" ".join(words))


def _words_through(words: list[str], keep: str) -> int:
    """How many of `words` run through the end of `keep` (0 when they do not hold it)."""
    text = " ".join(words)
    at = text.find(keep) if keep else -1
    return len(text[: at + len(keep)].split()) if at >= 0 else 0


# a reduced relative clause or a place that ends a subject: "A federal grand jury sitting in
# Flint, Michigan, has returned ...", "A federal court in Tampa, Florida, has barred ..."
_SUBJECT_PARTICIPLE = re.compile(
    r"\s+(?:(?:sitting|based|located|headquartered)\s+in\s+\S|in\s+[A-Z]).*$")
_SUBJECT_COMMA = re.compile(rf",\s+(?!{_STATES})")


def _subject_without_repeat(text: str, within: bool = False) -> str:
    """`text` with its subject (the words before the main verb) cut to one part when the
    subject says a word twice, or (unless `within`) one that the rest says: without a
    closing "sitting in <place>" ("Federal grand jury sitting in Flint, Michigan, returned
    indictment charging Michigan business owner" -> "Federal grand jury returned ..."),
    else one comma-separated part that says neither: its first ("Rabobank National
    Association, Roseville, California subsidiary of Netherlands-based Coperatieve Rabobank
    U.A., appeared" -> "Rabobank National Association appeared"; of a list of people, the
    first: "Sens. Harry Reid, Carl Levin, Ted Kennedy ... joined" -> "Sens. Harry Reid
    joined"), or, when the first only describes or places what follows, the most name-like
    (the largest share of capitalised words): "Virginia-based home furnishings company,
    Bassett Mirror Company, agreed" -> "Bassett Mirror Company agreed"; "Former Bullitt
    County, Kentucky, Sheriffs Deputy Matthew Corder, of Louisville, Kentucky, sentenced" ->
    "Sheriffs Deputy Matthew Corder sentenced" (not "Indictment of Usama Darwich Hamade, 53,
    Samir Ahmed Berro, 64, announced" -> "Samir Ahmed Berro announced"). A part is a
    subject: capitalised, no preposition first, no verb of its own, not a place. `text`
    itself otherwise."""
    words = text.split()
    verb = _main_verb(words)
    if verb is None:
        return text
    subject, rest = " ".join(words[:verb]).rstrip(","), " ".join(words[verb:])
    if not (_says_twice(subject, "") if within else _says_twice(subject, rest)) or (
            not _noun_phrase(subject)):
        return text
    first, *later = (p.strip().rstrip(",") for p in _SUBJECT_COMMA.split(subject))
    parts = [_SUBJECT_PARTICIPLE.sub("", subject)]
    parts += sorted([first, *later], key=lambda p: -sum(w[:1].isupper() for w in p.split())
                    / len(p.split())) if _describes(first) else [first]
    for part in parts:
        if (len(part.split()) >= 2 and part[:1].isupper() and part != subject
                and part.split()[0].lower() not in _PREAMBLE_OPENERS and not _has_verb(part)
                and not re.search(rf"{_STATES}$", part)
                and not _says_twice(part, "" if within else rest)):
            return f"{part} {rest}"
    return text


def _describes(part: str) -> bool:
    """Whether a subject's first part only describes or places the name after it: lower case
    after its first word ("Virginia-based home furnishings company") or a place ("Former
    Bullitt County, Kentucky")."""
    return (all(w[:1].islower() for w in part.split()[1:])
            or bool(re.search(rf"{_STATES}$", part)))


def _noun_phrase(subject: str) -> bool:
    """Whether the words before the main verb read as its subject, not as a clause of their
    own whose verb the rule missed ("A urine test can help doctors ..., U.S. researchers
    reported", "Now that we're deep into cold and flu season, ...", "Taking folic acid
    ..."): no verb or modal, no subordinating word, no preposition or -ing word first."""
    first = subject.split()[0].lower()
    return not (_has_verb(subject) or first in _PREAMBLE_OPENERS
                or (len(first) > 5 and first.endswith("ing"))
                or re.search(r"\b(?:that|who|which|whose|if|because|when|while|now)\b",
                             subject, re.IGNORECASE))


_FUNCTION_WORDS = frozenset("and the for with from its his her their".split())


def _says_twice(subject: str, rest: str) -> bool:
    """Whether `subject` says a word of 3+ letters twice, or one that `rest` says too; not
    "and" and such ("Sens. Snowe and Collins, and Rep. Michaud" names three people)."""
    def content(text: str) -> list[str]:
        return [w for w in re.findall(r"[a-z0-9]{3,}", text.lower()) if w not in _FUNCTION_WORDS]

    said = content(subject)
    return len(set(said)) < len(said) or bool(set(said) & set(content(rest)))


def _repeat_cut(words: list[str], floor: int, verb: int | None) -> int | None:
    """The last cut (clause mark or subordinating word, from word `floor` on) before which
    no word is said twice, else the last "and" or "or" after the main verb, not between two
    names, before which none is ("sentenced to six months imprisonment and six months home
    confinement"); None when the repeat is in what every cut keeps ("Department of Justice
    and Department of Homeland Security released ...")."""
    rest = words
    while (cut := _last_cut(rest, floor)) is not None:
        if not repeats_a_word(" ".join(rest[:cut])):
            return cut
        rest = rest[:cut]
    if verb is None:  # `words`' main verb (its index), as `_shortened` found it
        return None
    return next((i for i in range(len(words) - 2, max(floor, verb + 1) - 1, -1)
                 if words[i].lower() in ("and", "or") and not _between_names(words, i)
                 and not repeats_a_word(" ".join(words[:i]))), None)


def _between_names(words: list[str], i: int) -> bool:
    """Whether word `i` joins two capitalised words: one name ("Department of Housing and
    Urban Development", "Sens. Snowe and Susan Collins"), not two clauses."""
    return words[i - 1][:1].isupper() and words[i + 1][:1].isupper()


def _last_cut(words: list[str], floor: int) -> int | None:
    """Where the last clause starts: after the last word ending in a clause mark, else at
    the last subordinating word; never before word `floor` (MIN_WORDS, or past the main
    verb and AFTER_VERB words when the verb is within the target: a later one would keep a
    long subject)."""
    for i in range(len(words) - 1, floor - 1, -1):
        if words[i] in ("--", "—", "–") or (words[i - 1][-1:] in ",;:"
                                            and not _before_state(words, i)):
            return i
    for i in range(len(words) - 1, floor - 1, -1):
        if words[i].lower() in _SUBORDINATE:
            return i
    return None


def _before_state(words: list[str], i: int) -> bool:
    """Whether word `i` starts a state after a capitalised place ("Los Angeles, California-
    area"): the comma before it joins one place, it ends no clause."""
    return words[i - 1][:1].isupper() and bool(
        _STATE_AFTER_COMMA.match(" ".join(words[i:i + 2])))


def _main_verb(words: list[str]) -> int | None:
    """The first word after the first that reads as a finite verb: lower case, and past
    tense by its -ed or one of _FINITE, not right after a/an/the ("a continued effort").
    A rule, not a parser: a participle inside the subject ("a hospital based in Erie") is
    taken for the verb, which only keeps more."""
    for i, word in enumerate(words[1:], 1):
        bare = word.strip(",;:.\"'")
        if (bare[:1].islower() and ((len(bare) > 3 and bare.endswith("ed")) or bare in _FINITE)
                and words[i - 1].lower() not in ("a", "an", "the")):
            return i
    return None


def trimmed_lead(article: str, target: int = TARGET_WORDS) -> str:
    """The article's lead trimmed to at most about `target` words ("" for no lead)."""
    lead = first_sentence(article.strip())
    return _trimmed(lead, article, target) if lead else ""


def _trimmed(sentence: str, article: str, target: int, phrase: str = "") -> str:
    """`sentence` compressed and shortened to about `target` words, `phrase` kept (from the
    clause that holds it, else the longest form that keeps it). Where dropping an appositive
    loses the phrase or leaves two names side by side that the article never writes so
    ("Rabobank National Association, a Roseville, California subsidiary" -> "Association
    California subsidiary": faithful.py's runs), the appositives stay."""
    names = article_names(article)  # read once: both attempts check against it
    for appositives in (True, False):
        compressed = _with_final_period(compress(sentence, appositives, keep=phrase), phrase)
        short = _with_final_period(shorten(compressed, target), phrase)
        if phrase not in short:  # the phrase is in a later clause: start the trim there
            clause = _from_clause_with(compressed, phrase)
            short = shorten(clause, target)
            if phrase not in short:  # a cut before its end lost it: end the trim after it,
                kept = shorten(clause, target, phrase)  # unless that says a word twice
                short = short if repeats_a_word(kept) else kept
        text = (short if phrase in short else compressed if phrase in compressed
                else sentence)
        if phrase in compressed and not broken_runs(text, names):
            break  # else the appositives stay: the phrase or two names' gap was in one
    return text


def _with_final_period(text: str, phrase: str) -> str:
    """`text` with the final period of a phrase that ends it ("... Industries Inc."): the
    trim drops a sentence's last period, the phrase keeps it."""
    if phrase.endswith(".") and text.endswith(phrase[:-1]):
        return text + "."
    return text


ZH_MAX_CHARS = 30  # a Chinese fallback headline: the lead's clauses up to this many characters
_ZH_CLAUSE = re.compile(r"(?<=[，；：、])")


def _zh_lead(text: str) -> str:
    """The first clauses of a Chinese sentence, up to ZH_MAX_CHARS characters."""
    out = ""
    for clause in _ZH_CLAUSE.split(text.strip()):
        if out and len(out) + len(clause) > ZH_MAX_CHARS:
            break
        out += clause
    return out[:ZH_MAX_CHARS].rstrip("，；：、。")


def fallback_headline(article: str, lang: str) -> str:
    """The headline served when every generated one states something the article lacks:
    the article's own lead, trimmed (English) or its first clauses (Chinese)."""
    if lang == "en":
        return trimmed_lead(article)
    found = sentences(article, lang)
    return _zh_lead(found[0]) if found else ""


def sentence_with_phrase(article: str, phrase: str, target: int = TARGET_WORDS) -> str | None:
    """English: a sentence holding the phrase (as `_sentences_holding` finds them), trimmed
    to about `target` words while the phrase stays in it: the first trim that repeats no
    word, else the first, of those that open with no quote and are at most MAX_PHRASE_TRIM
    words long and more than the phrase; None when there is none (a longer trim is a
    sentence, not a headline)."""
    first_short = None
    for sentence in _sentences_holding(article, phrase):
        trim = _trimmed(sentence, article, target, phrase)
        n = len(trim.split())
        if n > MAX_PHRASE_TRIM or n < MIN_HEADLINE_WORDS or trim == phrase or trim[:1] in _QUOTES:
            continue  # a trim down to the phrase ("South Carolina") says nothing
        if not repeats_a_word(trim):
            return trim  # the later sentences need no trimming
        first_short = first_short or trim
    return first_short


MAX_PHRASE_TRIM = 20  # a trim that must keep its phrase may run long; past this, no headline
MAX_PHRASE_SENTENCES = 3  # the sentences holding the phrase a trim is tried on
PHRASE_GAP = 2  # words a sentence may hold between a phrase's words ("Sen. Harry Reid")
_QUOTES = "\"'“‘"
_NAME_PART = re.compile(r"[A-Z][\w.'’-]*")  # a name's middle: "Harry", "M.", "O'Neill"


def _sentences_holding(article: str, phrase: str) -> list[str]:
    """Up to MAX_PHRASE_SENTENCES sentences of the article that hold `phrase`, in reading
    order, each written with the phrase as given: the phrase is held in other capitals too
    ("Former chief financial officer" for "Former Chief Financial Officer", "export" for
    "Export") and with up to PHRASE_GAP name words between its words ("Sen. Harry Reid"
    for "Sen. Reid"; not "Sen. Snowe and Reid"). Sentences as `whole_sentences` reads
    them, without a dateline."""
    out: list[str] = []
    for sentence in whole_sentences(article):
        found = _held(without_dateline(sentence), phrase)  # "14, 2009 -- A ..." after "Dec."
        if found is not None:
            out.append(found)
            if len(out) == MAX_PHRASE_SENTENCES:
                break
    return out


def _held(sentence: str, phrase: str) -> str | None:
    """`sentence` written with `phrase` where it holds it (see _sentences_holding), or None.
    Besides the name's middle, a sentence holds the phrase with a state between its words
    ("Former Hadley, Massachusetts, Police Officer" holds "Hadley Police") and, for a
    phrase of two capitalised words, in the order "<second> of [the] <first>" ("Department
    of Justice" holds "Justice Department"): an editor writes either."""
    if phrase in sentence:
        return sentence
    for form in _other_forms(sentence, phrase):
        if (at := form.lower().find(phrase.lower())) >= 0:
            return form[:at] + phrase + form[at + len(phrase):]
    wanted = phrase.split()
    words = sentence.split()
    for start in range(len(words)):
        at, matched = start, 0
        while at < len(words) and matched < len(wanted) and at - start < len(wanted) + PHRASE_GAP:
            last = matched == len(wanted) - 1
            word = words[at].lower().rstrip(",;:.") if last else words[at].lower()
            if word == (wanted[matched].lower().rstrip(".") if last else wanted[matched].lower()):
                matched += 1
            elif matched == 0 or not _NAME_PART.fullmatch(words[at]):
                break  # only a name's middle may lie between: "Sen. Snowe and Reid" is two
            at += 1
        if matched == len(wanted):
            sentence_word, phrase_word = words[at - 1], wanted[-1]
            tail = sentence_word[len(phrase_word.rstrip(".")):].lstrip(".")  # its mark
            return " ".join([*words[:start], phrase + tail, *words[at:]])
    return None


_STATE_INSIDE = re.compile(rf"(?<=[a-z]),\s+{_STATES},?\s+(?=[A-Z])")


def _other_forms(sentence: str, phrase: str) -> list[str]:
    """`sentence` without a state between two capitalised words ("Hadley, Massachusetts,
    Police") and with a two-word phrase in the other order editors write ("U.S. Department
    of Justice" -> "Justice Department", for the phrase "Justice Department")."""
    forms = [_STATE_INSIDE.sub(" ", sentence)]
    words = phrase.split()
    if len(words) == 2 and all(w[:1].isupper() for w in words):
        first, second = words
        forms.append(re.sub(rf"(?:\bU\.S\. )?\b{re.escape(second)} of (?:the )?"
                            rf"{re.escape(first)}\b", phrase, sentence))
    return [f for f in forms if f != sentence]


def fallback_with_phrase(article: str, phrase: str, lang: str) -> str:
    """The constrained fallback: a sentence holding the phrase, trimmed while the phrase
    stays in it (sentence_with_phrase); without one, the fallback headline, the phrase
    before it unless it holds it ("Sen.: ..." reads worse than a trimmed sentence, but
    better than 40 words)."""
    if lang == "en":
        found = sentence_with_phrase(article, phrase)
        if found is not None:
            return found
    else:
        for sentence in sentences(article, lang):
            if phrase in sentence:
                start = max(0, sentence.index(phrase) - ZH_MAX_CHARS // 2)
                return sentence[start:start + ZH_MAX_CHARS].rstrip("，；：、。")
    joiner = "：" if lang == "zh" else ": "
    rest = fallback_headline(article, lang)
    held = _held(rest, phrase) if lang == "en" else None
    if held is not None and held[:1] not in _QUOTES:
        return held  # the trimmed lead holds it: "Sen.: Sen. Olympia J. Snowe ..." says it twice
    return f"{phrase}{joiner}{rest}" if rest else phrase
