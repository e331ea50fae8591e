"""Beam search for both headline models, with cached decoder keys/values.

Each step feeds only the newest token of every hypothesis; earlier self-attention keys and
values come from the cache and the article's cross-attention keys/values are computed once
per article. The full generator also carries each hypothesis's coverage vector, so the copy
attention at step t knows what steps < t attended to. Seq2BF hypotheses carry, per side,
the state of their outermost token (the next prediction on that side starts from it), the
next relative position, and whether the side has ended.

Both searches apply the same rules: a length floor (`MIN_TOKENS`; Seq2BF must also add
`MIN_ADDED` tokens to its phrase), no English word twice and no Chinese character trigram
twice (`repeat_rule`, `NoRepeats`).
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

import numpy as np
import torch

from nlp_models.beam import Hypothesis, beam_search, expand
from nlp_models.headline.model import HeadlineGenerator
from nlp_models.headline.runs import ArticleRuns, WholeRuns
from nlp_models.headline.seq2bf import (
    BACKWARD,
    FORWARD,
    STRATEGIES,
    Seq2BF,
    end_marker,
    next_side,
)
from nlp_models.headline.vocab import BOS, EOS, PAD, SEP, UNK, Vocab
from nlp_models.headline.wholewords import ArticleWords, WholeWords

# Shortest headline a search may end with, in tokens (the phrase's included), per language.
# Models early in training put more mass on [EOS] than on any single word, so without a
# floor beam search returns the bare phrase (Seq2BF) or a two-word stub. English references
# have 3+ words; Chinese tokens are characters, and 99% of the training headlines have 9 or
# more (a floor of 4 let the Chinese Seq2BF return bare 3-4 character phrases).
MIN_TOKENS = {"en": 4, "zh": 8}
# Tokens a Seq2BF headline adds to its phrase at least: the phrase alone is no suggestion,
# but a phrase of 4+ pieces met the floor above by itself and came back bare ("Nissho
# Iwai", 147 of the 1,413 English dev outputs); 99.9% of dev headlines add a word or more.
MIN_ADDED = 1
NEVER = [PAD, UNK, BOS, SEP]  # ids the generator never emits ([EOS] ends, copies replace UNK)


def once_only(vocab: Vocab) -> torch.Tensor:
    """Which vocabulary ids a headline may contain once only (bool, (V,)): pieces that
    start a word and have 3+ letters or digits (" SEC", " mln", not "les" or ".S."). The
    copying Seq2BF repeated a word in 15% of its English dev headlines ("NASD says SEC.S.
    SEC rules for SEC"; 2.3% of the references do). Word pieces and punctuation stay free
    to repeat; Chinese characters have no word boundary, so Chinese gets an n-gram rule."""
    return torch.tensor([s.startswith(" ") and sum(c.isalnum() for c in s) >= 3
                         for s in map(vocab.surface, range(len(vocab)))])


@dataclass(frozen=True)
class RepeatRule:
    """What a headline may not hold twice: once-only tokens (English words, `once_only`)
    and any run of `ngram` tokens (0: no such rule)."""

    once: torch.Tensor | None = None
    ngram: int = 0


# Chinese has no word boundaries, so its rule is on character n-grams. On dev articles
# 300-699 the copying Seq2BF (tok-b) repeated a character trigram in 27% of its headlines
# and the XL-CC in 22% ("失踪：拐卖拐卖拐卖拐卖", "老爸爸爸爸爸..."); 2.3% of the dev
# references do. ROUGE-L F there, Seq2BF / XL-CC: no rule .295 / .203, n = 2 .307 / .208,
# n = 3 .307 / .208, n = 4 .304 / .208. 3 it is: 14% of the references repeat a bigram.
ZH_NGRAM = 3


def repeat_rule(vocab: Vocab, lang: str) -> RepeatRule:
    return RepeatRule(ngram=ZH_NGRAM) if lang == "zh" else RepeatRule(once=once_only(vocab))


class NoRepeats:
    """Each row's headline in reading order, to forbid what its RepeatRule allows once.

    The text sits in a buffer between `left` and `right`: a full generator only appends,
    a Seq2BF row also prepends (its backward side), so the phrase starts in the middle."""

    def __init__(self, rule: RepeatRule | None, vocab_size: int, n_ext: int,
                 start: torch.Tensor, room: int):
        """n_ext: extended ids the search may emit (copied unknown words, once-only under a
        `once` rule); start: (rows, L) tokens already there, PAD-padded on the right;
        room: tokens a row may still add on either side."""
        rule = rule or RepeatRule()
        self.ngram = rule.ngram
        no_rule = torch.zeros(vocab_size, dtype=torch.bool)
        self.once = torch.cat([no_rule if rule.once is None else rule.once,
                               torch.full((n_ext,), rule.once is not None)])
        rows, width = start.shape
        self.rows = torch.arange(rows)
        self.seen = torch.zeros(rows, len(self.once), dtype=torch.bool)
        self.seen[self.rows[:, None], start] = True
        self.text = torch.full((rows, 2 * room + width), -1)
        self.text[:, room : room + width] = start.masked_fill(start == PAD, -1)
        self.left = torch.full((rows,), room)
        self.right = room + (start != PAD).sum(1)

    def add(self, tokens: torch.Tensor, backward: torch.Tensor | None = None,
            keep: torch.Tensor | None = None) -> None:
        """Put each row's token after its text, or before it where `backward`; skip rows
        where `keep` is False (end markers)."""
        backward = torch.zeros_like(tokens, dtype=torch.bool) if backward is None else backward
        keep = torch.ones_like(backward) if keep is None else keep
        self.left = self.left - (backward & keep).long()
        at = torch.where(backward, self.left, self.right)
        self.text[self.rows[keep], at[keep]] = tokens[keep]
        self.seen[self.rows, tokens] = True
        self.right = self.right + (~backward & keep).long()

    def block(self, logp: torch.Tensor, backward: torch.Tensor | None = None) -> torch.Tensor:
        """logp with -inf for every token the row's next step (before its text where
        `backward`) may not produce."""
        banned = self.seen & self.once
        if self.ngram:
            banned |= self._ngram_completions(logp.shape[1], backward)
        return logp.masked_fill(banned, float("-inf"))

    def _ngram_completions(self, width: int, backward: torch.Tensor | None) -> torch.Tensor:
        """(rows, width) bool: tokens that would make an n-gram the text already holds."""
        n = self.ngram
        backward = torch.zeros_like(self.left, dtype=torch.bool) if backward is None else backward
        windows = self.text.unfold(1, n, 1)  # (rows, positions, n)
        start = torch.arange(windows.shape[1])
        inside = (start >= self.left[:, None]) & (start + n <= self.right[:, None])
        # the n-1 tokens the new one will stand next to
        edge = torch.where(backward, self.left, self.right - (n - 1))
        context = self.text.gather(1, (edge[:, None] + torch.arange(n - 1)).clamp(min=0))
        head, tail = windows[..., : n - 1], windows[..., 1:]
        match = torch.where(backward[:, None, None], tail, head) == context[:, None, :]
        match = match.all(-1) & inside
        completion = torch.where(backward[:, None], windows[..., 0], windows[..., n - 1])
        banned = torch.zeros(len(self.rows), width, dtype=torch.bool)
        banned[self.rows[:, None].expand_as(match)[match], completion[match]] = True
        return banned

    def select(self, rows: torch.Tensor) -> None:
        self.seen, self.text = self.seen[rows], self.text[rows]
        self.left, self.right = self.left[rows], self.right[rows]
        self.rows = torch.arange(len(rows))


def length_penalty(kind: str, lang: str) -> float:
    """alpha of GNMT's length penalty for a model kind and language: headlines are short and
    models trained on them tend to stop early, so a preference for length (1.0). Chosen on
    dev articles 300-699 (the first 300 select checkpoints; never test), ROUGE-L F: the
    Chinese XL-CC (characters) .198 at 1.0 with headlines 5.9 characters short, .204 at 1.5,
    .189 at 2.0; the English XL-CC .349 at 1.0, .348 at 1.5; the Chinese Seq2BF (tok-b,
    beam 3) .258 at 1.0, .262 at 0.6 (kept at 1.0: a difference within noise), .214 at 1.5."""
    return 1.5 if (kind, lang) == ("generator", "zh") else 1.0


def _per_input(kept: torch.Tensor, beam: int) -> torch.Tensor:
    """Rows of the kept inputs' beams."""
    return (kept[:, None] * beam + torch.arange(beam)).view(-1)


class _Search:
    """What both searches keep: per hypothesis row, the decoder's cache, the repeat record
    and the `per_row` attributes; per article (repeated for its beam rows), the encoder's
    output and, when copying, the copy keys and extended ids."""

    per_row: tuple[str, ...] = ()
    per_article = ("valid", "memory", "keys", "src_ext")
    beam: int
    cache: list
    cross_kv: list
    repeats: NoRepeats

    def select(self, rows: torch.Tensor, kept_inputs: torch.Tensor | None) -> None:
        self.cache = [(k[rows], v[rows]) for k, v in self.cache]
        self.repeats.select(rows)
        self._take(self.per_row, rows)
        if kept_inputs is not None:
            same = _per_input(kept_inputs, self.beam)
            self.cross_kv = [(k[same], v[same]) for k, v in self.cross_kv]
            self._take(self.per_article, same)

    def _take(self, names: tuple[str, ...], index: torch.Tensor) -> None:
        for name in names:
            if hasattr(self, name):  # the copy state exists only when copying
                value = getattr(self, name)
                # numpy would take a one-element tensor for a scalar index and return the
                # element itself, not a one-row array
                rows = index.cpu().numpy() if isinstance(value, np.ndarray) else index
                setattr(self, name, value[rows])


class GeneratorSearch(_Search):
    per_row = ("coverage", "row_words")

    def __init__(self, model: HeadlineGenerator, src: torch.Tensor, src_ext: torch.Tensor,
                 n_ext: int, beam: int, min_tokens: int, rule: RepeatRule | None = None,
                 words: WholeWords | WholeRuns | None = None,
                 articles: Sequence[ArticleWords | ArticleRuns] | None = None,
                 encoded: tuple[torch.Tensor, torch.Tensor] | None = None):
        self.model, self.beam, self.n_ext, self.min_tokens = model, beam, n_ext, min_tokens
        self.words = words
        if words is not None and articles is not None:  # one entry per hypothesis row
            self.row_words = np.empty(len(articles) * beam, dtype=object)
            self.row_words[:] = [a for a in articles for _ in range(beam)]
        memory, valid = model.encode(src) if encoded is None else encoded
        self.cross_kv = [(expand(k, beam), expand(v, beam))
                         for k, v in model.cross_keys_values(memory)]
        self.valid = expand(valid, beam)
        self.cache: list | None = None
        self.t = 0
        if model.copy is not None:
            self.memory = expand(memory, beam)
            self.keys = expand(model.copy.w_h(memory), beam)
            self.src_ext = expand(src_ext[:, : valid.shape[1]], beam)
            self.coverage = torch.zeros(self.valid.shape)
        self.repeats = NoRepeats(rule, model.cfg.vocab_size, n_ext if model.copy else 0,
                                 torch.empty(self.valid.shape[0], 0, dtype=torch.long),
                                 model.cfg.max_target)

    def step(self, prev: torch.Tensor | None) -> torch.Tensor:
        rows = self.valid.shape[0]
        tokens = torch.full((rows, 1), BOS) if prev is None else prev[:, None]
        if prev is not None:
            self.repeats.add(prev)
        h, x, self.cache = self.model.decode_step(tokens, self.t, self.cache, self.cross_kv,
                                                  self.valid)
        h, x = h[:, -1], x[:, -1]
        logits = self.model.logits(h)
        if self.model.copy is None:
            logp = logits.log_softmax(-1)
        else:
            a, p_gen = self.model.copy.step(self.keys, self.memory, self.valid, h, x,
                                            self.coverage)
            self.coverage = self.coverage + a
            p = self.model.copy.mix(logits.softmax(-1), a, p_gen, self.src_ext, self.n_ext)
            logp = (p + 1e-12).log()
        logp = self.repeats.block(logp)
        logp[:, NEVER] = float("-inf")
        if self.t < max(self.min_tokens, 1):
            logp[:, EOS] = float("-inf")
        if self.words is not None and hasattr(self, "row_words"):
            texts = [[t for t in row if t >= 0] for row in self.repeats.text.tolist()]
            logp = self.words.block(logp, texts, self.row_words,
                                    cut=self.t == self.model.cfg.max_target - 1)
        self.t += 1
        return logp

    def ends(self, src: torch.Tensor, tok: torch.Tensor) -> torch.Tensor:
        return tok == EOS



class Seq2BFSearch(_Search):
    """Rows grow a headline on the side the strategy names; see seq2bf.py."""

    per_row = ("cache_valid", "frontier", "next_pos", "count", "done", "side", "short_by",
               "row_words")

    def __init__(self, model: Seq2BF, src: torch.Tensor, phrases: list[list[int]], beam: int,
                 strategy: str, min_tokens: int, src_ext: torch.Tensor | None = None,
                 n_ext: int = 0, rule: RepeatRule | None = None,
                 words: WholeWords | None = None,
                 articles: Sequence[ArticleWords] | None = None,
                 encoded: tuple[torch.Tensor, torch.Tensor] | None = None):
        self.model, self.beam, self.strategy, self.n_ext = model, beam, strategy, n_ext
        self.words = words
        if words is not None and articles is not None:  # one entry per hypothesis row
            self.row_words = np.empty(len(articles) * beam, dtype=object)
            self.row_words[:] = [a for a in articles for _ in range(beam)]
        memory, valid = encoded if encoded is not None else model.encode(src)
        if model.pointer is not None:
            self.memory = expand(memory, beam)
            self.keys = expand(model.pointer.key(memory), beam)
            ext = src if src_ext is None else src_ext
            self.src_ext = expand(ext[:, : valid.shape[1]], beam)
        cross_kv = model.cross_keys_values(memory)
        n, width = len(phrases), max(len(p) for p in phrases)
        tokens = torch.full((n, width), PAD)
        positions = torch.zeros(n, width, dtype=torch.long)
        for i, p in enumerate(phrases):
            middle = (len(p) + 1) // 2 - 1
            tokens[i, : len(p)] = torch.tensor(p)
            positions[i, : len(p)] = torch.arange(len(p)) - middle
        real = tokens != PAD
        mask = real[:, None, :] | ~real[:, :, None]  # phrase rows see the phrase; pads see all
        h, cache = model.rows(tokens, positions, mask, None, cross_kv, valid)
        lengths = real.sum(1)
        first, last = h[:, 0], h[torch.arange(n), lengths - 1]
        middle = (lengths + 1) // 2 - 1
        self.cross_kv = [(expand(k, beam), expand(v, beam)) for k, v in cross_kv]
        self.valid = expand(valid, beam)
        self.cache = [(expand(k, beam), expand(v, beam)) for k, v in cache]
        self.cache_valid = expand(real, beam)
        self.frontier = expand(torch.stack([first, last], 1), beam)  # (rows, 2, D)
        self.next_pos = expand(torch.stack([-middle - 1, lengths - middle], 1), beam)
        self.count = torch.zeros_like(self.next_pos)  # tokens generated per side
        self.done = torch.zeros(self.next_pos.shape, dtype=torch.bool)
        self.side = torch.zeros(self.next_pos.shape[0], dtype=torch.long)
        # generated tokens still needed before the headline may end, per row
        self.short_by = expand((min_tokens - lengths).clamp(min=MIN_ADDED), beam)
        self.repeats = NoRepeats(rule, model.cfg.vocab_size, n_ext if model.pointer else 0,
                                 expand(tokens, beam), model.cfg.max_target)
        self.t = 0  # steps taken: beam_search stops after model.cfg.max_target

    def _sides(self) -> torch.Tensor:
        """`next_side` for every row at once."""
        back_done, fwd_done = self.done[:, 0], self.done[:, 1]
        if self.strategy == "seq-b":
            both = torch.full_like(back_done, True)
        elif self.strategy == "seq-f":
            both = torch.full_like(back_done, False)
        elif self.strategy == "tok-b":
            both = self.count[:, 0] <= self.count[:, 1]
        else:
            both = self.count[:, 1] > self.count[:, 0]
        backward = ~back_done & (fwd_done | both)
        return torch.where(backward, BACKWARD, FORWARD)

    def _append(self, prev: torch.Tensor) -> None:
        """Add last step's tokens as decoder rows on the sides they were generated for."""
        rows = torch.arange(prev.shape[0])
        side = self.side
        pos = self.next_pos[rows, side]
        mask = torch.cat([self.cache_valid, torch.ones(len(rows), 1, dtype=torch.bool)], 1)
        h, self.cache = self.model.rows(prev[:, None], pos[:, None], mask[:, None], self.cache,
                                        self.cross_kv, self.valid)
        self.cache_valid = mask
        ended = prev == torch.where(side == BACKWARD, BOS, EOS)
        self.done[rows, side] |= ended
        self.frontier[rows, side] = torch.where(ended[:, None], self.frontier[rows, side], h[:, 0])
        self.next_pos[rows, side] += torch.where(side == BACKWARD, -1, 1)
        self.count[rows, side] += 1
        self.repeats.add(prev, side == BACKWARD, ~ended)
        self.short_by = (self.short_by - (~ended).long()).clamp(min=0)

    def step(self, prev: torch.Tensor | None) -> torch.Tensor:
        if prev is not None:
            self._append(prev)
        self.side = self._sides()
        rows = torch.arange(self.side.shape[0])
        h = self.frontier[rows, self.side]
        is_back = self.side == BACKWARD
        if self.model.pointer is not None:
            a, context = self.model.pointer.attend(h[:, None], self.keys, self.memory, self.valid)
            p = self.model.copy_probs(h, self.side, a[:, 0], context[:, 0], self.src_ext,
                                      self.n_ext)
            logp = (p + 1e-12).log()
        else:
            logp = self.model.side_logits(h, self.side).log_softmax(-1)
        logp = self.repeats.block(logp, is_back)
        logp[:, [PAD, UNK, SEP]] = float("-inf")
        logp[:, EOS] = logp[:, EOS].masked_fill(is_back, float("-inf"))
        logp[:, BOS] = logp[:, BOS].masked_fill(~is_back, float("-inf"))
        # The side that ends last may not end while the headline is too short.
        last_side = self.done[rows, 1 - self.side] & (self.short_by > 0)
        end = torch.where(is_back, BOS, EOS)
        logp[rows[last_side], end[last_side]] = float("-inf")
        if self.words is not None and hasattr(self, "row_words"):
            text, left, right = (self.repeats.text.tolist(), self.repeats.left.tolist(),
                                 self.repeats.right.tolist())
            texts = [row[a:b] for row, a, b in zip(text, left, right, strict=True)]
            logp = self.words.block(logp, texts, self.row_words, is_back.tolist(), BOS,
                                    self.done[rows, 1 - self.side].tolist(),
                                    cut=self.t == self.model.cfg.max_target - 1)
        self.t += 1
        return logp

    def ends(self, src: torch.Tensor, tok: torch.Tensor) -> torch.Tensor:
        side = self.side[src]
        other_done = self.done[src, 1 - side]
        return (tok == torch.where(side == BACKWARD, BOS, EOS)) & other_done



def generate(model: HeadlineGenerator, src: torch.Tensor, src_ext: torch.Tensor, n_ext: int,
             beam: int = 4, n_best: int = 1, alpha: float = 1.0,
             min_tokens: int = MIN_TOKENS["en"], rule: RepeatRule | None = None,
             words: WholeWords | WholeRuns | None = None,
             articles: Sequence[ArticleWords | ArticleRuns] | None = None,
             encoded: tuple[torch.Tensor, torch.Tensor] | None = None
             ) -> list[list[Hypothesis]]:
    """``words`` and ``articles`` (one per input): the rule the article sets, whole words
    (wholewords.py) or whole numbers and Latin words (runs.py). ``encoded``: `model.encode(src)`
    when the caller has it already (the clause picker's judge reads the same articles)."""
    model.eval()
    search = GeneratorSearch(model, src, src_ext, n_ext, beam, min_tokens, rule, words,
                             articles, encoded)
    return beam_search(search, src.shape[0], beam, n_best, model.cfg.max_target, alpha,
                       stable_first=True)


def generate_constrained(model: Seq2BF, src: torch.Tensor, phrases: list[list[int]],
                         beam: int = 3, n_best: int = 1, strategy: str = "tok-b",
                         alpha: float = 1.0, min_tokens: int = MIN_TOKENS["en"],
                         src_ext: torch.Tensor | None = None, n_ext: int = 0,
                         rule: RepeatRule | None = None, words: WholeWords | None = None,
                         articles: Sequence[ArticleWords] | None = None,
                         encoded: tuple[torch.Tensor, torch.Tensor] | None = None,
                         ) -> list[list[Hypothesis]]:
    """Seq2BF beam search in the given generation order (the paper's beam is 3). src_ext
    and n_ext: the articles' extended ids, for a copying model (tokens may then be
    extended ids). ``encoded``: `model.encode(src)` when the caller has it already (the
    constrained lead rule's judge reads the same articles)."""
    if strategy not in STRATEGIES:
        raise ValueError(f"strategy {strategy!r} not in {STRATEGIES}")
    model.eval()
    search = Seq2BFSearch(model, src, phrases, beam, strategy, min_tokens, src_ext, n_ext, rule,
                          words, articles, encoded)
    return beam_search(search, src.shape[0], beam, n_best, model.cfg.max_target, alpha,
                       stable_first=True)


def assemble(strategy: str, generated: list[int]) -> tuple[list[int], list[int]]:
    """A Seq2BF hypothesis (tokens in generation order) -> the ids before and after the
    phrase, in reading order."""
    left: list[int] = []
    right: list[int] = []
    done = [False, False]
    for token in generated:
        side = next_side(strategy, len(left) + done[0], len(right) + done[1], *done)
        if token == end_marker(side):
            done[side] = True
        elif side == BACKWARD:
            left.append(token)
        else:
            right.append(token)
    return left[::-1], right

