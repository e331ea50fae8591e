"""The lead's clauses as English headlines, when the generator is unsure of its own.

On news from a source the English generator never read (FakeHealth health news) its beam
headline is often garbled ("New Brunswick Society, the United States in thyroid nodules")
while a clause of the article's first sentence says the news in real words ("Research at
Group Health points to bupropion (Wellbutrin) as first choice for overweight and obese
patients with depression"). The generator judges both, each by its mean log-probability
per token as the article's headline (HeadlinePredictor.judge). A clause takes first place
when its judge score, plus `length_bonus` times its share of BONUS_WORDS words, comes within
`margin` of the generated headline's; on the news it was trained on the generator is sure of
its own headline and keeps it (docs/models/headline.md, "The lead's clauses").

Candidates: runs of 1-MAX_CLAUSES consecutive clauses (a clause ends after , ; : or before a
spaced dash) of the first sentence, the dateline cut, of MIN_WORDS-MAX_WORDS words, their
closing mark dropped, that repeat no word (what the `degenerate` measure of
training/headline/quality.py flags: a word of 3+ characters twice, or any word twice in a
row; a sentence that says "the" twice is prose, not a headline).
"""

from __future__ import annotations

import re
from dataclasses import dataclass

from nlp_models.headline.sentences import sentences

MIN_WORDS, MAX_WORDS = 4, 30
MAX_CLAUSES = 3
BONUS_WORDS = 15  # the length bonus grows up to this many words
CLAUSE_END = re.compile(r"(?<=[,;:])\s+|\s+(?=--|—|–)")
# what separates a dateline from the news: a spaced dash, a double or triple hyphen
# ("ORLANDO--A new study", "CHICAGO --- A"), ─ as some wires write it, or a colon after a
# bracketed date ("VANCOUVER, BC (March 26, 2018): A")
SEPARATOR = re.compile(r"\s+(?:--|-|—|–)\s+|\s*-{2,3}\s*(?=[A-Z0-9(\"])|\s*─\s*|(?<=\d\)):\s+")
DATELINE_WORDS = 12
# lines a scraped page opens with before the news: photo captions and credits (CAPTION, "Enlarge
# this image toggle caption Maggie Starbard/NPR Maggie Starbard/NPR", "Toby Maudsley/Getty
# Images"), bylines ("By MARIA CHENG, AP Medical Writer", "Liz Szabo, USA TODAY",
# "HealthDay Reporter"), a release's date ("For Immediate Release: February 13, 2018"),
# page labels ("Back to previous page", "Font Size A A A", "Español"); and any line of at
# most FURNITURE_WORDS words of Latin letters without a closing mark ("Stuart Bradford",
# "nutrition")
FURNITURE = re.compile(
    r"(?:Enlarge\b|toggle caption\b|(?:Press Release )?For Immediate Release\b"
    r"|Back to previous page|Font Size\b|Credit:|Contact:|Español$|Follow \w+$"
    r"|By (?:[A-Z][\w.'-]*,? ?){1,6}(?:AP Medical Writer)?$)")
# a news photo's caption, however long ("FILE PHOTO: The Merck logo is seen ...", "A view of
# the Merck & Co. campus ... 2009. REUTERS/Mike Segar")
CAPTION = re.compile(r"FILE PHOTO\b|.*\bREUTERS/[^.!?]{0,60}$")
# how a credit or byline of at most CREDIT_WORDS words ends
CREDIT = re.compile(r"(?:Getty Images\S*|New York Times|for NPR|USA TODAY|\bAP|Associated Press"
                    r"|Reporter|Producer|Corbis|iStockphoto\S*)$")
CREDIT_WORDS = 10
FURNITURE_WORDS = 3
CLOSED = re.compile(r"[.!?:;\"')]$")
FURNITURE_LINES = 4
# a sentence that ends in one of these ("St. Louis", "Mr. Smith", "U.S. Steel", "on Feb. 14")
# goes on
ABBREVIATION = re.compile(r"(?:\b(?:St|Mr|Mrs|Ms|Dr|Gen|Sens?|Reps?|Gov|Lt|Col|Sgt|Capt|Inc|Corp|Co"
                          r"|Ltd|Jr|Sr|No|vs|Prof|Mt|Ft|Bros|Jan|Feb|Mar|Apr|Jun|Jul|Aug|Sept?|Oct"
                          r"|Nov|Dec)|\b[A-Z](?:\.[A-Z])*)\.$")
# lower-case words a place name may hold ("Rio de Janeiro", "Isle of Man")
PLACE_PARTICLES = frozenset({"of", "de", "la", "du", "and", "upon"})


def without_dateline(article: str) -> str:
    """The article without what opens it before the news: page furniture lines
    (`without_furniture`), then the dateline ("SILVER SPRING, Md., May 18, 2016
    /PRNewswire-USNewswire/ -- ", "Newswise — LOS ANGELES (Dec. 5, 2018) - ", "(Chicago) -
    "): text on the first line before an early dash made only of capitalised words, numbers
    and /wire/ tags."""
    article = without_furniture(article)
    for _ in range(3):  # "Newswise — DALLAS - April 18, 2016 - " has more than one part
        m = SEPARATOR.search(article[:200])
        if m is None or "\n" in article[: m.start()] or not _is_dateline(article[: m.start()]):
            break
        article = article[m.end() :]
    return article


def without_furniture(article: str) -> str:
    """The article without the page furniture lines (at most FURNITURE_LINES) that open it;
    an article that is nothing else is kept whole."""
    lines = article.lstrip().split("\n")
    dropped = 0
    while dropped < min(FURNITURE_LINES, len(lines) - 1) and (
            not lines[dropped].strip() or _is_furniture(lines[dropped].strip())):
        dropped += 1
    return "\n".join(lines[dropped:]).lstrip() if dropped else article


def _is_furniture(line: str) -> bool:
    words = len(line.split())
    return (FURNITURE.match(line) is not None or CAPTION.match(line) is not None
            or (words <= CREDIT_WORDS and CREDIT.search(line) is not None)
            or (words <= FURNITURE_WORDS and line.isascii() and not CLOSED.search(line)))


def _is_dateline(head: str) -> bool:
    words = [w.strip(",.;()") for w in head.replace("(", " ").replace(")", " ").split()]
    words = [w for w in words if w]
    return 0 < len(words) <= DATELINE_WORDS and all(
        w[0].isupper() or w[0].isdigit() or w.startswith("/") or w in PLACE_PARTICLES
        for w in words)


def first_sentence(article: str) -> str:
    """The article's first sentence after its dateline."""
    found = whole_sentences(without_dateline(article))
    return found[0] if found else ""


def whole_sentences(text: str) -> list[str]:
    """English sentences; a break after an abbreviation ("Busch Stadium contained a few more
    St. Louis ...", "Sen. Olympia J. Snowe") is no sentence end."""
    out: list[str] = []
    for part in sentences(text, "en"):
        if out and ABBREVIATION.search(out[-1]):
            out[-1] = f"{out[-1]} {part}"
        else:
            out.append(part)
    return out


def lead_clauses(article: str) -> list[str]:
    """The candidate clause runs of the article's first sentence, in reading order."""
    clauses = [c for c in CLAUSE_END.split(first_sentence(article)) if c.strip()]
    out: list[str] = []
    for a in range(len(clauses)):
        for b in range(a + 1, min(a + MAX_CLAUSES, len(clauses)) + 1):
            text = " ".join(clauses[a:b]).strip().rstrip(",;:.").strip()
            if (MIN_WORDS <= len(text.split()) <= MAX_WORDS and not repeats_a_word(text)
                    and text not in out):
                out.append(text)
    return out


def repeats_a_word(text: str) -> bool:
    """A word of 3+ characters twice (rouge-score's tokens: lower-case letter and digit
    runs), or any word twice in a row (whitespace tokens' cores, `token_core`): the
    `degenerate` measure's `repeated`. "5.5 million" holds no word twice in a row."""
    tokens = re.findall(r"[a-z0-9]+", text.lower())
    long = [t for t in tokens if len(t) >= 3]
    cores = [c.lower() for c in map(token_core, text.split()) if c]
    return len(set(long)) < len(long) or any(
        a == b for a, b in zip(cores, cores[1:], strict=False))


ALNUM = re.compile(r"[A-Za-z0-9]")


def token_core(token: str) -> str:
    """A whitespace token without its edge punctuation, with a typographic apostrophe as
    the ASCII one. (Two searches, not a regex anchored at the end, which backtracks
    quadratically over a long run of punctuation or emoji: a copied 100,000-emoji token.)"""
    token = token.replace("\u2019", "'")
    first = ALNUM.search(token)
    if first is None:
        return ""
    last = ALNUM.search(token[::-1])
    return token[first.start():len(token) - last.start()]


# what the lead offers: its clause runs, or trim.py's trims; to a constrained generator
# ("phrase"), the first sentence holding the phrase, trimmed with the phrase kept
# ("compressed": the learned compressor's deletions of the first sentence, compressor.py)
SPANS = ("clauses", "trimmed", "phrase", "compressed")
TRIM_SPREAD = 4  # trims of target - 4, target and target + 4 words are offered


@dataclass(frozen=True)
class LeadRule:
    margin: float  # how far below the generated headline's judge score a clause may be
    length_bonus: float  # the judge prefers short spans; this evens it out
    spans: str = "clauses"
    target: int = 12  # "trimmed": the house's headline length in words

    def candidates(self, article: str, phrase: str = "", compressor=None) -> list[str]:
        """The lead's spans this rule chooses among, in reading order (`phrase`: the
        constrained headline's, for "phrase" spans; `compressor`: the checkpoint's
        `Compressor`, for "compressed" spans, the house length first)."""
        if self.spans == "clauses":
            return lead_clauses(article)
        targets = [max(t, MIN_WORDS) for t in (self.target - TRIM_SPREAD, self.target,
                                                self.target + TRIM_SPREAD)]
        if self.spans == "compressed":  # the house length first: what the fallback shows
            targets = [targets[1], targets[0], targets[2]]
        if self.spans == "compressed":
            if compressor is None:
                raise ValueError("compressed lead spans need the checkpoint's compressor")
            # faithful.py imports this module
            from nlp_models.headline.faithful import unsupported

            # a deletion can join two names the article keeps apart ("Snowe Collins"): such
            # a compression is no candidate
            texts = [t for t in compressor.compressions(first_sentence(article), targets,
                                                        runs=True).values()
                     if not unsupported(t, article, "en")]
        else:
            # trim.py imports this module
            from nlp_models.headline.trim import sentence_with_phrase, trimmed_lead

            texts = [trimmed_lead(article, target) if self.spans == "trimmed"
                     else sentence_with_phrase(article, phrase, target) or ""
                     for target in targets]
        out: list[str] = []
        for text in texts:
            if (len(text.split()) >= MIN_WORDS and not repeats_a_word(text)
                    and text not in out):
                out.append(text)
        return out

    def choose(self, generated: float, clauses: list[str], judged: list[float]) -> int | None:
        """The span to put first (its index), or None to keep the generated headline;
        `generated` and `judged` are the judge's scores of the generated headline and of
        each span."""
        if not clauses:
            return None
        bonus = [self.length_bonus * min(len(c.split()), BONUS_WORDS) / BONUS_WORDS
                 for c in clauses]
        best = max(range(len(clauses)), key=lambda i: judged[i] + bonus[i])
        return best if judged[best] > generated - self.margin else None

    def to_state(self) -> dict:
        return {"margin": self.margin, "length_bonus": self.length_bonus,
                "spans": self.spans, "target": self.target}

    @classmethod
    def from_state(cls, state: dict) -> LeadRule:
        spans = state.get("spans", "clauses")
        if spans not in SPANS:
            raise ValueError(f"lead rule spans {spans!r} not in {SPANS}")
        return cls(float(state["margin"]), float(state["length_bonus"]), spans,
                   int(state.get("target", 12)))
