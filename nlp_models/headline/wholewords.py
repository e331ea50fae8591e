"""Whole words only: an English headline may contain only words the model has read.

A subword decoder can glue pieces into words that exist nowhere ("AOLels": the copied
"AOL" plus a generated "els"). This rule, applied inside the beam search of the full
generator, lets a hypothesis grow only while every finished word is a known word and the
unfinished last word is the beginning of one (and a hypothesis cut at the length limit ends
on a finished word). Known words are the lower-cased rouge-score tokens (runs of a-z and
0-9, the unit of `quality.degenerate`) of the training articles and headlines, stored with
the checkpoint (the shipped lists keep those seen ten times or more: rarer ones are often
pieces of broken words), plus the words of the article being read;
numbers pass ("1987", "4th", "1990s"; "10-year" is "10" and "year"); a clitic ('s, 'd, 't,
...) must end a word, not stand after a space (`STRAY_CLITIC`). With `whole_headline` a
headline also ends only after its third word, never repeats a word of three or more
letters and never writes a whitespace token twice in a row, edge punctuation aside ("a a a",
"PS. PS.": run-ons of press-release headlines): `quality.degenerate`'s other two conditions
(Seq2BF: on both sides; its headline ends when the second of its sides ends).

Glued tokens (full and constrained headlines): known words can still be glued into a token
that exists nowhere ("suggests's", "research-beam", "SEC.S.", "Center'surgery", "DIone":
each piece a known word). So a whitespace token (edge punctuation aside) that joins several
words, or runs capitals into lower case, must be a token of the article, or be shaped like
an abbreviation ("U.S.") or a number compound ("10-year", "3rd-qtr"); an unfinished one must
be able to become one of these (Seq2BF's backward side grows a token leftwards, so there an
article token must end with it). The edge punctuation of a finished token must be what
edges a word in a headline (opening quotes and brackets before it, closing ones and
sentence punctuation after it, `plain_edges`), or the whole token must be one of the
article's ("EVZIO®"): otherwise pieces of punctuation glue around a known word ("–.S.",
";.af", "U.&.“.”." came out of Seq2BF with every word of them known). An unfinished token
is held to the edge that is done (its start; for Seq2BF's backward side its end) and may
grow at most MAX_EDGE punctuation characters that can still close it or join a next word,
or must be the start (end) of an article token: checking finished tokens only, the beam
grew the rejected ones into "–.Q.S.S.S.S.S…" instead.

Only the `TOP_K` best next tokens of each hypothesis are checked (beam search keeps at
most `beam` of them per hypothesis); when none of them passes, the next ones up to `WIDE_K`
are. A hypothesis none of whose `WIDE_K` best tokens passes (e.g. one whose open last word
can only finish as a repeat) keeps all its tokens at a cost of `DEAD_END_COST` nats: any
hypothesis that keeps the rule outranks it, yet an article whose every hypothesis is stuck
still gets a headline. (Left at no cost, such dead ends produced most of the remaining
non-words and repeats once a length penalty made the beam prefer long headlines.)

Faithfulness (full generator): with `unsupported_penalty` > 0, a token that finishes a
name-like word the article does not contain costs that much log-probability. Name-like: a
word with a digit, a capitalised word after the first, a single capital letter ("U" of
"U.S.") or an all-capitals word ("NASD"); "contains" compares lower-cased words. The
Reuters prior "U.S." then needs the article to mention the U.S. to open a headline cheaply.
So does a finished run of two names the article never writes side by side (faithful.py's
rule): adapted to releases opening "Sen. Olympia J. Snowe", the generator wrote "U.S. Snowe,"
over newer ones opening "U.S. Senator Olympia J. Snowe".
"""

from __future__ import annotations

import bisect
import functools
import re
from collections.abc import Iterable, Sequence
from dataclasses import dataclass

import torch

from nlp_models.headline.faithful import ArticleNames, article_names, broken_runs
from nlp_models.headline.lead import ALNUM, token_core
from nlp_models.headline.vocab import EOS, SEP, Vocab

WORD = re.compile(r"[a-z0-9]+")
CASED_WORD = re.compile(r"[A-Za-z0-9]+")  # WORD's segmentation, case kept
OPEN_WORD = re.compile(r"[A-Za-z0-9.'\u2019&-]+$")  # a last word that may still grow
NUMBER = re.compile(r"\d+(?:st|nd|rd|th|s)?")  # 1987, 4th, 1990s; not "corporate50"
NUMBER_START = re.compile(r"\d+(?:s|st|n|nd|r|rd|t|th)?")  # what can still become one
# a clitic standing alone ("Cardinals 's", "you 'd"): AG News text spaces them off, and
# copying that gave headlines like "Bus 's 's 's"; in a headline a clitic ends a word
STRAY_CLITIC = re.compile(r"(?:^|\s)'(?:s|d|t|m|re|ve|ll)\b", re.IGNORECASE)
# "DIone", "AOLels" (not "CEOs"); the lookbehind starts a match only at the head of a run of
# capitals, so a long run is scanned once, not once per position
GLUED_CASE = re.compile(r"(?<![A-Z])[A-Z]{2,}+[a-z]{2}")
ABBREVIATION = re.compile(r"[A-Za-z](?:\.[A-Za-z]){0,3}")  # "U.S" of "U.S.", "U.K", "U.S.A"
NUMBER_COMPOUND = re.compile(r"\d+(?:st|nd|rd|th|s)?(?:[-/.,]\d*[a-z]*)*", re.IGNORECASE)
# may stand before a word ("(Reuters"; "$5" only where the article has it: "Johnson $s")
OPENING = frozenset("\"'“‘([")
CLOSING = frozenset(".,;:!?\"'”’)]%")  # may stand after one ("U.S.,", "said:", "5%")
JOINING = frozenset("-/&.'’")  # may stand between two words of a token ("low-cost", "J&J")
DASHES = frozenset("-–—")  # may stand alone ("Cancer – study")
MAX_EDGE = 3  # edge punctuation characters per side ("U.S.”," has 3 after "U.S")
# what a growing run of edge punctuation may hold: it may still close the token or join a word
GROWING_START, GROWING_END = OPENING | JOINING, CLOSING | JOINING
ALONE = OPENING | CLOSING | DASHES  # a token without letters or digits
TOP_K = 32  # candidates checked per hypothesis and step
WIDE_K = 256  # checked too when none of the TOP_K passes
# fewer words are a label, not a headline: the beam ends no full headline shorter, the
# trims (trim.py) offer none and `degenerate` (training/headline/quality.py) counts one
MIN_HEADLINE_WORDS = 3
DEAD_END_COST = 20.0  # log-probability a hypothesis pays when no candidate keeps the rule


@dataclass(frozen=True)
class ArticleWords:
    """One article's words (sorted, sorted reversed, as a set), its copied unknown
    tokens and its whitespace tokens."""

    sorted: tuple[str, ...]
    reversed: tuple[str, ...]
    set: frozenset[str]
    oovs: tuple[str, ...]
    tokens: tuple[str, ...] = ()  # its whitespace tokens' cores, lower-cased, sorted
    tokens_reversed: tuple[str, ...] = ()  # the same cores reversed, sorted (Seq2BF's left)
    whole_tokens: tuple[str, ...] = ()  # its whitespace tokens, lower-cased, sorted
    whole_reversed: tuple[str, ...] = ()  # the same reversed, sorted (Seq2BF's left)
    names: ArticleNames = ArticleNames()  # faithful.article_names: name runs


def _has_prefix(words: Sequence[str], prefix: str) -> bool:
    i = bisect.bisect_left(words, prefix)
    return i < len(words) and words[i].startswith(prefix)


def plain_edges(token: str, growing: str = "") -> bool:
    """Whether a whitespace token has a headline's edge punctuation (module doc). Finished
    (`growing` ""): at most MAX_EDGE OPENING characters before its first letter or digit and
    MAX_EDGE CLOSING ones after its last; one without letters or digits is at most MAX_EDGE
    of those or DASHES. Growing at its "end" (or "start"): the done edge as if finished;
    the growing run at most MAX_EDGE characters that may still close or join."""
    first = ALNUM.search(token)
    if first is None:
        return len(token) <= MAX_EDGE and all(c in ALONE for c in token)
    last = ALNUM.search(token[::-1])
    lead, trail = token[:first.start()], token[len(token) - last.start():]
    before = GROWING_START if growing == "start" else OPENING
    after = GROWING_END if growing == "end" else CLOSING
    return (len(lead) <= MAX_EDGE and len(trail) <= MAX_EDGE
            and all(c in before for c in lead) and all(c in after for c in trail))


def glued(core: str) -> bool:
    """Whether a token core joins several words or runs capitals into lower case."""
    return len(CASED_WORD.findall(core)) > 1 or bool(GLUED_CASE.search(core))


def shaped(core: str) -> bool:
    """Whether a token core is an abbreviation ("U.S") or a number compound ("10-year")."""
    return bool(ABBREVIATION.fullmatch(core) or NUMBER_COMPOUND.fullmatch(core))


def _articles_token(token: str, growing: str, art: ArticleWords) -> bool:
    """Whether a token is one of the article's (lower-cased), or, growing at its end (start),
    can still become one."""
    key = token.lower()
    if growing == "end":
        return _has_prefix(art.whole_tokens, key)
    if growing == "start":
        return _has_prefix(art.whole_reversed, key[::-1])
    i = bisect.bisect_left(art.whole_tokens, key)
    return i < len(art.whole_tokens) and art.whole_tokens[i] == key


def _same_as_neighbour(tokens: Sequence[str], k: int, front: bool) -> bool:
    """Whether finished token k has the same core as the finished token before it (after
    it, growing leftwards): "a a", "PS. PS.", words too short for the no-repeat rule."""
    j = k + 1 if front else k - 1
    if not 0 <= j < len(tokens):
        return False
    core = token_core(tokens[k]).lower()
    return bool(core) and core == token_core(tokens[j]).lower()


@functools.lru_cache(maxsize=1024)  # small: each key holds its article's names
def _broken_count(text: str, names: ArticleNames) -> int:
    """faithful.broken_runs, counted; cached: a beam asks again for every next token."""
    return len(broken_runs(text, names))


def _finished_part(text: str, ended: bool) -> str:
    """The text without its last word while that word is still growing."""
    return text if ended else OPEN_WORD.sub("", text)


def _name_like(word: str, index: int) -> bool:
    return any(c.isdigit() for c in word) or (
        word[0].isupper() and (index > 0 or len(word) == 1 or word.isupper()))


class WholeWords:
    def __init__(self, vocab: Vocab, known: Iterable[str], unsupported_penalty: float = 0.0,
                 whole_headline: bool = False):
        self.vocab, self.size = vocab, len(vocab)
        self.unsupported_penalty, self.whole_headline = unsupported_penalty, whole_headline
        self._surfaces: dict[int, str] = {}
        self.known = frozenset(known)
        self.sorted = tuple(sorted(self.known))
        self.reversed = tuple(sorted(w[::-1] for w in self.known))  # for Seq2BF's left side

    def article(self, text: str, oovs: Sequence[str]) -> ArticleWords:
        words = set(WORD.findall(text.lower()))
        whole = {t.lower() for t in text.split()}
        tokens = {token_core(t) for t in whole}
        return ArticleWords(tuple(sorted(words)), tuple(sorted(w[::-1] for w in words)),
                            frozenset(words), tuple(oovs), tuple(sorted(tokens)),
                            tuple(sorted(t[::-1] for t in tokens)), tuple(sorted(whole)),
                            tuple(sorted(t[::-1] for t in whole)),
                            article_names(text))

    def complete(self, word: str, art: ArticleWords) -> bool:
        return bool(NUMBER.fullmatch(word)) or word in self.known or word in art.set

    def started(self, prefix: str, art: ArticleWords) -> bool:
        return (bool(NUMBER_START.fullmatch(prefix)) or _has_prefix(self.sorted, prefix)
                or _has_prefix(art.sorted, prefix))

    def ending(self, suffix: str, art: ArticleWords) -> bool:
        """Whether some word ends with ``suffix`` (a word Seq2BF grows leftwards)."""
        backwards = suffix[::-1]
        return (suffix.isdigit() or bool(NUMBER.fullmatch(suffix))
                or _has_prefix(self.reversed, backwards) or _has_prefix(art.reversed, backwards))

    def allows(self, before: str, after: str, ended: bool, art: ArticleWords,
               closes: bool = True) -> bool:
        """Whether text ``before`` may become ``after`` (``ended``: this side ends, which
        ends the headline if ``closes``). With `whole_headline` also: no word of 3+ letters
        twice, and no headline ending before its third word."""
        if STRAY_CLITIC.search(after):
            return False
        old, new = WORD.findall(before.lower()), WORD.findall(after.lower())
        same = 0
        while same < min(len(old), len(new)) and old[same] == new[same]:
            same += 1
        open_last = not ended and bool(after) and after[-1].isalnum()
        if self.whole_headline and ended and closes and len(new) < MIN_HEADLINE_WORDS:
            return False
        # the old last word may be finished by this step: check it again with the new ones
        for k in range(max(0, min(same, len(old) - 1)), len(new)):
            word = new[k]
            last = k == len(new) - 1
            if last and open_last:
                if not self.started(word, art):
                    return False
            elif not self.complete(word, art):
                return False
            elif self.whole_headline and len(word) >= 3 and word in new[:k]:
                return False
        return self.tokens_allowed(before, after, ended, art)

    def tokens_allowed(self, before: str, after: str, ended: bool, art: ArticleWords,
                       front: bool = False) -> bool:
        """The glued-token rule for the whitespace tokens that growing ``before`` into
        ``after`` changes (at the end, or at the front for Seq2BF's backward side): a
        finished glued token is an article token or shaped like an abbreviation or number
        compound; an open one can still become one (an article token starts with it, or,
        growing leftwards, ends with it). A finished token has plain edges or is an article
        token (module doc), and with `whole_headline` is not its neighbour again."""
        old, new = before.split(), after.split()
        edge = 0 if front else -1
        open_edge = not ended and bool(after) and not after[edge].isspace()
        changed = (range(min(len(new), len(new) - len(old) + 1)) if front
                   else range(max(0, len(old) - 1), len(new)))
        for k in changed:
            still_open = k == (0 if front else len(new) - 1) and open_edge
            growing = ("start" if front else "end") if still_open else ""
            if not plain_edges(new[k], growing) and not _articles_token(new[k], growing, art):
                return False
            core = token_core(new[k])
            if self.whole_headline and not still_open and _same_as_neighbour(new, k, front):
                return False
            if not glued(core) or shaped(core):
                continue
            key = core.lower()
            if still_open:
                if not (_has_prefix(art.tokens_reversed, key[::-1]) if front
                        else _has_prefix(art.tokens, key)):
                    return False
            elif key not in art.tokens:
                return False
        return True

    def allows_before(self, before: str, after: str, ended: bool, art: ArticleWords,
                      closes: bool = True) -> bool:
        """``allows`` for a token put in front of the text (Seq2BF's backward side)."""
        if STRAY_CLITIC.search(after):
            return False
        old, new = WORD.findall(before.lower()), WORD.findall(after.lower())
        same = 0
        while same < min(len(old), len(new)) and old[-1 - same] == new[-1 - same]:
            same += 1
        open_first = not ended and bool(after) and after[0].isalnum()
        if self.whole_headline and ended and closes and len(new) < MIN_HEADLINE_WORDS:
            return False
        changed = len(new) - same
        # the old first word may be finished by this step: check it again with the new ones
        for k in range(min(len(new), changed + 1)):
            word = new[k]
            if k == 0 and open_first:
                if not self.ending(word, art):
                    return False
            elif not self.complete(word, art):
                return False
            elif self.whole_headline and len(word) >= 3 and word in new[k + 1:]:
                return False
        return self.tokens_allowed(before, after, ended, art, front=True)

    def unsupported(self, before: str, after: str, ended: bool, art: ArticleWords) -> int:
        """How many name-like words the article lacks, and runs of two names it never
        writes side by side ("U.S. Snowe": faithful.py), are finished by growing ``before``
        into ``after`` (forward only)."""
        old, new = CASED_WORD.findall(before), CASED_WORD.findall(after)
        first = len(old) - 1 if old and before[-1].isalnum() else len(old)
        last = len(new) - 1 if not ended and after and after[-1].isalnum() else len(new)
        finished = [i for i in range(max(first, 0), last) if _name_like(new[i], i)]
        if not finished:  # only a finished name can be unsupported or close a run
            return 0
        missing = sum(1 for i in finished if new[i].lower() not in art.set)
        runs = (_broken_count(_finished_part(after, ended), art.names)
                - _broken_count(_finished_part(before, False), art.names))
        return missing + max(runs, 0)

    def block(self, logp: torch.Tensor, texts: Sequence[list[int]],
              arts: Sequence[ArticleWords], backward: Sequence[bool] | None = None,
              end_before: int = EOS, closes: Sequence[bool] | None = None,
              cut: bool = False) -> torch.Tensor:
        """logp (rows, V+ext) with -inf for the next tokens that would break the rule, and
        the unsupported-name penalty subtracted (forward rows); ``texts``: each row's tokens
        so far in reading order; ``backward``: rows whose next token goes in front (Seq2BF),
        ending with ``end_before`` ([BOS]); ``closes``: rows whose side's end would end the
        headline (Seq2BF: the other side has ended; default all); ``cut``: the search stops
        after this token (its length limit), so the token must leave every word finished,
        as an ending would: otherwise a headline cut at the limit ends in a prefix ("baby's
        mus")."""
        ranked = logp.topk(min(WIDE_K, logp.shape[1]), -1)
        values, indices = ranked.values.tolist(), ranked.indices.tolist()
        out = torch.full_like(logp, float("-inf"))
        for r, (tokens, art) in enumerate(zip(texts, arts, strict=True)):
            before = "".join(self._surface(t, art) for t in tokens)
            front = backward is not None and backward[r]
            final = closes is None or closes[r]
            check = (values[r], indices[r], before, front, final, art, end_before, cut)
            passed = self._passing(*check, 0, TOP_K) or self._passing(*check, TOP_K, WIDE_K)
            if passed:
                allowed, costs = zip(*passed, strict=True)
                out[r, list(allowed)] = logp[r, list(allowed)] - torch.tensor(costs,
                                                                             dtype=logp.dtype)
            else:
                out[r] = logp[r] - DEAD_END_COST
        return out

    def _passing(self, values: list[float], indices: list[int], before: str, front: bool,
                 final: bool, art: ArticleWords, end_before: int, cut: bool, start: int,
                 stop: int) -> list[tuple[int, float]]:
        """(token, penalty) for the ranked candidates start..stop that keep the rule."""
        passed = []
        for value, tok in zip(values[start:stop], indices[start:stop], strict=True):
            if value == float("-inf"):
                break
            if front:
                ended = tok == end_before
                after = before if ended else self._surface(tok, art) + before
                ok = self.allows_before(before, after, ended or cut, art, final)
            else:
                ended = tok == EOS
                after = before if ended else before + self._surface(tok, art)
                ok = self.allows(before, after, ended or cut, art, final)
            if ok and cut and not final:  # Seq2BF: the other side stops open here too
                ok = self._other_edge_finished(after, front, art)
            ended = ended or cut
            if ok:
                cost = (self.unsupported_penalty * self.unsupported(before, after, ended, art)
                        if self.unsupported_penalty and not front else 0.0)
                passed.append((tok, cost))
        return passed

    def _other_edge_finished(self, text: str, front: bool, art: ArticleWords) -> bool:
        """Whether the word at the edge not growing now (the end for a row growing in front,
        else the start) is a finished word, for a Seq2BF headline cut with both sides open."""
        words = WORD.findall(text.lower())
        if not words:
            return True
        edge = text[-1] if front else text[0]
        return not edge.isalnum() or self.complete(words[-1] if front else words[0], art)

    def _surface(self, token: int, art: ArticleWords) -> str:
        """The text a token adds (as `Vocab.decode` joins it; specials add nothing)."""
        if token >= self.size:
            return art.oovs[token - self.size]
        if token not in self._surfaces:
            self._surfaces[token] = self.vocab.surface(token) if token > SEP else ""
        return self._surfaces[token]
