"""A learned deletion compressor: which words of a sentence a headline keeps.

A newsroom's headline is mostly its lead sentence with words deleted (Filippova & Altun,
2013; Dorr et al., 2003). This model reads a sentence and labels each word keep or drop; a
compression is the sentence's own tokens in their own order, so it states nothing the
article does not, and a phrase it is told to keep is in it by construction.

The words' labels are one linear-chain CRF (Lafferty et al., 2001): besides each word's keep
score, the network scores each *switch* between keeping and dropping at each place in the
sentence. Editors delete whole phrases (a title, an attribution, a clause), so a cut inside
"Salt Lake City" or between "sentenced" and "to" costs much and a cut before "who" or after
"said" little: a compression forced to a length deletes phrases, not scattered words.
Punctuation is decided per mark (its own keep score) once the words are chosen.

Shapes (B sentences, T tokens):

    words, suffixes, shapes, phrase   (B, T) int64    `encode` of each sentence
    embeddings, concatenated           (B, T, E)       E = word + suffix + shape + phrase dims
    bi-LSTM, 2 layers                  (B, T, 2H)      h
    keep logits                        (B, T)          a word's unary score; a mark's logit
    switch scores                      (B, T, 2, 2)    from [h of the previous word; h]:
                                                       [previous label, this label] (words)

`compressions` turns the scores into text at several lengths: for n words, the labelling of
highest score with exactly n words kept (a phrase's tokens always among them), by dynamic
programming; punctuation kept where the model keeps it and its neighbours are kept; plus the
model's own length (the best labelling of any length).
"""

from __future__ import annotations

import re
from collections.abc import Callable
from dataclasses import asdict, dataclass

import torch
from torch import nn

# a token: an abbreviation ("U.S."), a number with inner marks or a dollar sign ("$5.5",
# "2,400", "$26"), a word with inner apostrophes or hyphens and a closing % ("don't",
# "R-Maine", "10-year", "21st", "63%"), or one mark
TOKEN = re.compile(r"[A-Za-z](?:\.[A-Za-z])+\.?|\$?\d+(?:[.,:/]\d+)+%?|\$\d+%?"
                   r"|\w+(?:['\u2019&-]\w+)*%?|[^\w\s]")
WORD = re.compile(r"\w")
PAD, UNK = 0, 1
SHAPES = ("pad", "lower", "Title", "UPPER", "digit", "mixed", "mark")
MAX_TOKENS = 80  # a sentence is read up to this many tokens; later ones are deleted
BATCH = 64  # sentences per forward pass of `keep_logits`
NO_SPACE_BEFORE = frozenset(",.;:!?%)]}'\u2019")
NO_SPACE_AFTER = frozenset("([{$")
RUN_GAP = 2.0  # the gap of the compressions offered "in few runs"
Tagger = Callable[[list[str]], list[str]]  # tokens -> their Penn Treebank tags


def tokens(sentence: str) -> list[str]:
    """The sentence's tokens, at most MAX_TOKENS."""
    return TOKEN.findall(sentence)[:MAX_TOKENS]


def is_word(token: str) -> bool:
    return WORD.search(token) is not None


def word_count(text: str) -> int:
    """Words of `text` as the compressor counts a length (marks aside)."""
    return sum(map(is_word, tokens(text)))


def shape(token: str) -> int:
    if not is_word(token):
        return SHAPES.index("mark")
    if any(c.isdigit() for c in token):
        return SHAPES.index("digit")
    if token.islower():
        return SHAPES.index("lower")
    if token.isupper():
        return SHAPES.index("UPPER")
    if token[:1].isupper() and token[1:].islower():
        return SHAPES.index("Title")
    return SHAPES.index("mixed")


def detokenize(kept: list[str]) -> str:
    """Tokens joined as text: no space before a closing mark or after an opening one; no
    mark at either end."""
    out = ""
    for tok in kept:
        if out and tok[0] not in NO_SPACE_BEFORE and out[-1] not in NO_SPACE_AFTER:
            out += " "
        out += tok
    return out.strip(" ,;:-\u2013\u2014.")


@dataclass(frozen=True)
class CompressorConfig:
    words: int  # vocabulary sizes, PAD and UNK included
    suffixes: int
    word_dim: int = 128
    suffix_dim: int = 32
    shape_dim: int = 8
    phrase_dim: int = 8
    hidden: int = 160
    layers: int = 2
    dropout: float = 0.3


class Compressor(nn.Module):
    def __init__(self, cfg: CompressorConfig, words: list[str], suffixes: list[str]):
        super().__init__()
        self.cfg = cfg
        self.word_index = {w: i for i, w in enumerate(words)}
        self.suffix_index = {s: i for i, s in enumerate(suffixes)}
        self.words, self.suffixes = words, suffixes
        self.gap = 0.0  # what a run of kept words after the first costs (`select`)
        self.word_emb = nn.Embedding(cfg.words, cfg.word_dim, padding_idx=PAD)
        self.suffix_emb = nn.Embedding(cfg.suffixes, cfg.suffix_dim, padding_idx=PAD)
        self.shape_emb = nn.Embedding(len(SHAPES), cfg.shape_dim, padding_idx=PAD)
        self.phrase_emb = nn.Embedding(2, cfg.phrase_dim)
        width = cfg.word_dim + cfg.suffix_dim + cfg.shape_dim + cfg.phrase_dim
        self.drop = nn.Dropout(cfg.dropout)
        self.lstm = nn.LSTM(width, cfg.hidden, cfg.layers, batch_first=True,
                            bidirectional=True, dropout=cfg.dropout if cfg.layers > 1 else 0.0)
        self.out = nn.Linear(2 * cfg.hidden, 1)
        self.switch = nn.Linear(4 * cfg.hidden, 4)
        nn.init.zeros_(self.switch.weight)  # starts as independent words: no switch costs
        nn.init.zeros_(self.switch.bias)

    def encode(self, toks: list[str], phrase: list[bool] | None = None) -> list[list[int]]:
        """One sentence's input rows: word, suffix, shape and phrase ids per token."""
        low = [t.lower() for t in toks]
        return [[self.word_index.get(t, UNK) for t in low],
                [self.suffix_index.get(t[-3:], UNK) for t in low],
                [shape(t) for t in toks],
                [int(p) for p in (phrase or [False] * len(toks))]]

    @staticmethod
    def batch(rows: list[list[list[int]]]) -> torch.Tensor:
        """(4, B, T) int64 from `encode`'s rows, padded with PAD."""
        width = max(len(r[0]) for r in rows)
        out = torch.zeros(4, len(rows), width, dtype=torch.long)
        for b, r in enumerate(rows):
            out[:, b, : len(r[0])] = torch.tensor(r)
        return out

    def forward(self, x: torch.Tensor) -> tuple[torch.Tensor, torch.Tensor]:
        """x (4, B, T) -> (keep logits (B, T), switch scores (B, T, 2, 2)); a word's switch
        scores are its label's given the previous word's (before the first word: "drop")."""
        words, suffixes, shapes, phrase = x
        e = torch.cat([self.word_emb(words), self.suffix_emb(suffixes),
                       self.shape_emb(shapes), self.phrase_emb(phrase)], dim=-1)
        lengths = (shapes != PAD).sum(1).clamp(min=1).cpu()
        packed = nn.utils.rnn.pack_padded_sequence(self.drop(e), lengths, batch_first=True,
                                                   enforce_sorted=False)
        h, _ = self.lstm(packed)
        h, _ = nn.utils.rnn.pad_packed_sequence(h, batch_first=True, total_length=words.size(1))
        h = self.drop(h)
        # the previous word's position for every token (-1: none), marks skipped
        at = torch.arange(words.size(1)).expand_as(words)
        last = torch.where(is_word_shape(shapes), at, -1).cummax(dim=1).values
        prev = torch.cat([torch.full_like(last[:, :1], -1), last[:, :-1]], dim=1)
        h_prev = h.gather(1, prev.clamp(min=0).unsqueeze(-1).expand_as(h))
        h_prev = h_prev * (prev >= 0).unsqueeze(-1)
        switch = self.switch(torch.cat([h_prev, h], dim=-1)).view(*words.shape, 2, 2)
        return self.out(h).squeeze(-1), switch

    @torch.no_grad()
    def scores(self, sentences: list[list[str]], phrases: list[list[bool]] | None = None,
               marginals: bool = False) -> list[Scored]:
        """Each tokenised sentence's scores (eval mode), BATCH sentences a pass; with
        `marginals`, also each token's keep log-odds under the chain (a backward pass,
        which selecting a compression does not need)."""
        self.eval()
        phrases = phrases or [None] * len(sentences)
        out: list[Scored] = []
        for i in range(0, len(sentences), BATCH):
            chunk = sentences[i: i + BATCH]
            x = self.batch([self.encode(s, p) for s, p in
                            zip(chunk, phrases[i: i + BATCH], strict=True)])
            logits, switch = (t.float() for t in self(x))
            odds = keep_marginals(logits, switch, is_word_shape(x[2])) if marginals else None
            out += [Scored(logits[b, : len(s)].tolist(),
                           switch[b, : len(s)].flatten(1).tolist(),
                           odds[b, : len(s)].tolist() if odds is not None else None)
                    for b, s in enumerate(chunk)]
        return out

    def keep_logits(self, sentences: list[list[str]],
                    phrases: list[list[bool]] | None = None) -> list[list[float]]:
        """Each tokenised sentence's log-odds of keeping each token: a word's from its
        marginal under the chain, a mark's its own logit."""
        return [s.marginal or [] for s in self.scores(sentences, phrases, marginals=True)]

    def compressions(self, sentence: str, lengths: list[int], phrase: str = "",
                     runs: bool = False, tagger: Tagger | None = None) -> dict[str, str]:
        """`sentence` compressed to each of `lengths` words (keys "8", "12", ...), then to
        the model's own length (key "model"), `phrase` kept when the sentence holds it; `runs`:
        also each length in few runs of the sentence (keys "8/runs", ...; RUN_GAP), which
        read better where the dev's ROUGE-chosen gap scatters words; `tagger`: each noun
        group kept whole or with its head (`noun_groups` of its Penn Treebank tags)."""
        toks = tokens(sentence)
        marks = phrase_mask(toks, phrase)
        scored = self.scores([toks], [marks])[0]
        groups = noun_groups(tagger(toks)) if tagger and toks else None
        out = {}
        for n in lengths:
            out[str(n)] = detokenize(scored.select(toks, marks, n, self.gap, groups))
            if runs:
                out[f"{n}/runs"] = detokenize(scored.select(toks, marks, n, RUN_GAP, groups))
        out["model"] = detokenize(scored.select(toks, marks, None, self.gap, groups))
        return out

    def to_state(self) -> dict:
        """Everything `from_state` needs, weights in fp16 (what ships)."""
        return {"config": asdict(self.cfg), "words": self.words, "suffixes": self.suffixes,
                "gap": self.gap, "weights": {k: v.half() for k, v in self.state_dict().items()}}

    @classmethod
    def from_state(cls, state: dict) -> Compressor:
        model = cls(CompressorConfig(**state["config"]), state["words"], state["suffixes"])
        model.load_state_dict({k: v.float() for k, v in state["weights"].items()})
        model.gap = float(state.get("gap", 0.0))
        return model.eval()


@dataclass(frozen=True)
class Scored:
    """One sentence as the compressor scores it, per token."""

    logits: list[float]  # a word's keep score in the chain; a mark's own keep logit
    switches: list[list[float]]  # a word's [drop→drop, drop→keep, keep→drop, keep→keep]
    marginal: list[float] | None  # log-odds of keeping the token (a word's under the chain)

    def select(self, toks: list[str], forced: list[bool], n: int | None,
               gap: float = 0.0, groups: list[Group] | None = None) -> list[str]:
        return select(toks, self.logits, forced, n, gap, self.switches, groups)

    def kept_positions(self, toks: list[str], forced: list[bool], n: int | None,
                       gap: float = 0.0, groups: list[Group] | None = None) -> list[int]:
        return kept_positions(toks, self.logits, forced, n, gap, self.switches, groups)


def is_word_shape(shapes: torch.Tensor) -> torch.Tensor:
    return (shapes != PAD) & (shapes != SHAPES.index("mark"))


def word_chain(logits: torch.Tensor, switch: torch.Tensor, words: torch.Tensor
               ) -> tuple[torch.Tensor, torch.Tensor, torch.Tensor, torch.Tensor]:
    """The words of each sentence packed to the left: (unary (B, W, 2): 0 for drop, the keep
    logit for keep; switch (B, W, 2, 2); mask (B, W); token positions (B, W))."""
    order = torch.sort((~words).int(), dim=1, stable=True).indices
    width = max(int(words.sum(1).max()), 1)
    at = order[:, :width]
    mask = words.gather(1, at)
    keep = logits.gather(1, at)
    unary = torch.stack([torch.zeros_like(keep), keep], dim=-1)
    switch = switch.gather(1, at[..., None, None].expand(-1, -1, 2, 2))
    return unary, switch, mask, at


def log_partition(unary: torch.Tensor, switch: torch.Tensor, mask: torch.Tensor
                  ) -> torch.Tensor:
    """(B,) log of the summed exp-scores of every labelling (forward algorithm)."""
    alpha = switch[:, 0, 0] + unary[:, 0]  # (B, 2): before the first word, "drop"
    for w in range(1, unary.size(1)):
        step = torch.logsumexp(alpha.unsqueeze(-1) + switch[:, w], dim=1) + unary[:, w]
        alpha = torch.where(mask[:, w, None], step, alpha)
    return torch.logsumexp(alpha, dim=-1)


def labelling_score(unary: torch.Tensor, switch: torch.Tensor, mask: torch.Tensor,
                    gold: torch.Tensor) -> torch.Tensor:
    """(B,) the score of the labelling `gold` (B, W) int64 (0 drop, 1 keep)."""
    prev = torch.cat([torch.zeros_like(gold[:, :1]), gold[:, :-1]], dim=1)
    unary_gold = unary.gather(2, gold.unsqueeze(-1)).squeeze(-1)
    switch_gold = switch.gather(2, prev[..., None, None].expand(-1, -1, 1, 2)).squeeze(2)
    switch_gold = switch_gold.gather(2, gold.unsqueeze(-1)).squeeze(-1)
    return ((unary_gold + switch_gold) * mask).sum(1)


def keep_marginals(logits: torch.Tensor, switch: torch.Tensor, words: torch.Tensor
                   ) -> torch.Tensor:
    """(B, T) log-odds of keeping each token: a word's marginal under the chain (the
    gradient of the log partition by its keep score), a mark's own logit."""
    with torch.enable_grad():
        unary, sw, mask, at = word_chain(logits.detach(), switch.detach(), words)
        unary.requires_grad_(True)
        (grad,) = torch.autograd.grad(log_partition(unary, sw, mask).sum(), unary)
    p = grad[..., 1].clamp(1e-6, 1 - 1e-6)
    odds = torch.log(p) - torch.log1p(-p)
    out = logits.clone()
    out.scatter_(1, at, torch.where(mask, odds, out.gather(1, at)))
    return out


def phrase_mask(toks: list[str], phrase: str) -> list[bool]:
    """Which tokens are the phrase's first occurrence in `toks` (all False if absent)."""
    want = tokens(phrase)
    marks = [False] * len(toks)
    for i in range(len(toks) - len(want) + 1) if want else ():
        if toks[i: i + len(want)] == want:
            marks[i: i + len(want)] = [True] * len(want)
            break
    return marks


def select(toks: list[str], logits: list[float], forced: list[bool], n: int | None,
           gap: float = 0.0, switches: list[list[float]] | None = None,
           groups: list[Group] | None = None) -> list[str]:
    """The kept tokens (`kept_positions`)."""
    return [toks[i] for i in kept_positions(toks, logits, forced, n, gap, switches, groups)]


def kept_positions(toks: list[str], logits: list[float], forced: list[bool], n: int | None,
                   gap: float = 0.0, switches: list[list[float]] | None = None,
                   groups: list[Group] | None = None) -> list[int]:
    """The kept tokens' positions: `n` words (`n` None: as many as pay), the forced ones
    among them, that maximise their summed keep logits plus the `switches` of their
    labelling (each word's [drop→drop, drop→keep, keep→drop, keep→keep] from the previous
    word's label; None: no switch costs) minus `gap` for every run of kept words after the
    first (a headline reads best as few runs of the sentence: "Smith resigned", not "Smith
    mayor Friday"); then each mark the model keeps that follows a kept token and precedes a kept
    word ("Harvey, Illinois, man"; not "Smith, resigned" for "Smith, the mayor, resigned"),
    and always a period inside the sentence between kept tokens: an abbreviation's
    ("Sen. Snowe"). With the tokens' noun `groups` (`noun_groups`), a labelling that keeps
    a group's modifier without its head or a preposition without the word after it, or
    that starts a run inside a group after dropping more than modifiers, is not chosen while
    another of `n` words with the forced ones exists."""
    words = [i for i, t in enumerate(toks) if is_word(t)]
    scores = [FORCED if forced[i] else logits[i] for i in words]
    chain = [switches[i] for i in words] if switches is not None else [[0.0] * 4] * len(words)
    if n is not None:
        n = min(len(words), max(n, sum(forced[i] for i in words)))
    chosen = _best_runs(scores, chain, n, gap, [groups[i] for i in words]) if groups else []
    if not chosen or not {j for j, i in enumerate(words) if forced[i]} <= set(chosen):
        chosen = _best_runs(scores, chain, n, gap)
    keep = {words[j] for j in chosen}
    marks = {i for i, t in enumerate(toks) if not is_word(t) and (logits[i] > 0 or t == ".")
             and i - 1 in keep and _next_word(toks, i) in keep}
    return sorted(keep | marks)


FORCED = 1e4  # a forced word's score: above any sum of logits
DROP, KEEP = 0, 1


@dataclass(frozen=True)
class Group:
    """A token's place in a noun group ("a Utah county man", "$14 million"): the group's
    number (-1: in none) and the token's role in it; or a preposition ("to", "for", "that")
    outside any group."""

    number: int = -1
    role: str = ""  # "modifier" (before the head), "head" (its last noun), "after" (past
    #                 it); "preposition" outside a group
    modifies: bool = False  # its tag is one a noun's modifier has (MODIFIER_TAGS)


NO_GROUP = Group()
# Penn Treebank tags that a noun group is made of; a determiner after a noun opens a new one
GROUP_TAGS = frozenset({"DT", "PDT", "PRP$", "JJ", "JJR", "JJS", "NN", "NNS", "NNP", "NNPS",
                        "CD", "POS"})
NOUN_TAGS = frozenset({"NN", "NNS", "NNP", "NNPS"})
OPENER_TAGS = frozenset({"DT", "PDT", "PRP$"})
PREPOSITION_TAGS = frozenset({"IN", "TO"})
PARTICIPLE_TAGS = frozenset({"VBG", "VBN"})
ADJECTIVE_TAGS = frozenset({"JJ", "JJR", "JJS"})
# tags of words that may stand before a noun: dropping only these keeps a group whole
MODIFIER_TAGS = frozenset({"DT", "PDT", "PRP$", "JJ", "JJR", "JJS", "VBG", "VBN", "RB", "CD",
                           "POS"})


def noun_groups(tags: list[str]) -> list[Group]:
    """Each token's noun group from its Penn Treebank tag (our POS tagger's `ptb` head): a
    maximal run of `GROUP_TAGS` and inner participles (a determiner after a noun starts a new
    run) holding a noun or a number; its head is its last noun, else its last number. Why:
    garbled deletions keep a group's modifiers and drop its head ("Utah sentenced to 4
    years" of "a Utah man was sentenced to 4 years"), join a group to a word whose
    preposition or verb they drop ("sentenced false tax returns" of "sentenced for filing
    false tax returns"), or keep a preposition without its object ("sentenced to false tax
    returns")."""
    runs: list[list[int]] = []
    for i, tag in enumerate(tags):
        # an abbreviation's period ("Sen. Olympia J. Snowe") does not end a group
        follows = bool(runs) and (runs[-1][-1] == i - 1 or runs[-1][-1] == i - 2
                                  and tags[i - 1] == "." and tag in NOUN_TAGS)
        if tag not in GROUP_TAGS and not (follows and _inner_participle(tags, i)):
            continue
        opens_new = tag in OPENER_TAGS and bool(runs) and tags[runs[-1][-1]] in NOUN_TAGS
        if follows and not opens_new:
            runs[-1].append(i)
        else:
            runs.append([i])
    out = [Group(role="preposition" if t in PREPOSITION_TAGS else "",
                 modifies=t in MODIFIER_TAGS) for t in tags]
    number = 0
    for run in runs:
        nouns = [i for i in run if tags[i] in NOUN_TAGS] or [i for i in run if tags[i] == "CD"]
        if not nouns:
            continue
        head = nouns[-1]
        for i in run:
            role = "modifier" if i < head else "head" if i == head else "after"
            out[i] = Group(number, role, tags[i] in MODIFIER_TAGS)
        number += 1
    return out


def _inner_participle(tags: list[str], i: int) -> bool:
    """A participle between a determiner or adjective and a group word ("the attempted
    terrorist attack", "the following statement") is a group word; one after a verb or
    before a name is not ("was sentenced Friday")."""
    return (tags[i] in PARTICIPLE_TAGS and i > 0 and tags[i - 1] in OPENER_TAGS | ADJECTIVE_TAGS
            and i + 1 < len(tags) and tags[i + 1] in GROUP_TAGS)


# What the words since the last kept one ask of the next (`_best_runs`' states)
FREE = 0  # nothing: nothing kept yet, or only modifiers dropped since the last kept word
OPEN = 1  # the last kept word is in the current word's group (its head kept or to come)
DETACHED = 2  # a word that modifies no noun was dropped since: no run starts inside a group
OWES_HEAD = 3  # the last kept word is a modifier whose head is still to come
OWES_OBJECT = 4  # the last kept word is a preposition: the next word must be kept


def _best_runs(scores: list[float], switches: list[list[float]], n: int | None,
               gap: float, groups: list[Group] | None = None) -> list[int]:
    """The word indices of the labelling of highest score (kept words' `scores`, every
    word's switch score, minus `gap` per run after the first), exactly `n` kept (None: any
    number), by dynamic programming over (words kept, last label, what the words since the
    last kept one ask), with back-pointers; [] when none exists. With `groups` (one per
    word), a kept modifier keeps its head, a kept preposition the word after it, and a run
    starts inside a noun group only where the words dropped before it could all modify it
    ("issued [the following] statement", not "sentenced [for filing] false tax returns")."""
    tracks = groups is not None  # without groups every state stays FREE: half the states
    groups = groups or [NO_GROUP] * len(scores)
    most = len(scores) if n is None else n
    State = tuple[int, int, int]
    best: dict[State, float] = {(0, DROP, FREE): 0.0}  # before the first word: "drop"
    back: list[dict[State, State]] = []
    previous = NO_GROUP
    for score, switch, group in zip(scores, switches, groups, strict=True):
        step: dict[State, float] = {}
        came: dict[State, State] = {}
        in_group = group.number >= 0
        still_open = in_group and group.number == previous.number
        for state, total in best.items():
            c, label, asks = state
            if asks == OPEN and not still_open:
                asks = FREE
            options = []
            if asks != OWES_OBJECT and not (asks == OWES_HEAD and group.role == "head"):
                detaches = tracks and asks == FREE and c > 0 and not group.modifies
                dropped = DETACHED if detaches else asks
                options.append(((c, DROP, dropped), total + switch[2 * label + DROP]))
            if c < most and not (asks == DETACHED and in_group):
                cost = gap if label == DROP and c > 0 else 0.0
                options.append(((c + 1, KEEP, _asks(group)),
                                total + score + switch[2 * label + KEEP] - cost))
            for key, value in options:
                if key not in step or value > step[key]:
                    step[key], came[key] = value, state
        best, previous = step, group
        back.append(came)
    finals = [k for k in best if (n is None or k[0] == n)
              and k[2] not in (OWES_HEAD, OWES_OBJECT)]
    if not finals:
        return []
    key, kept = max(finals, key=best.__getitem__), []
    for j in range(len(scores) - 1, -1, -1):
        if key[1] == KEEP:
            kept.append(j)
        key = back[j][key]
    return kept[::-1]


def _asks(group: Group) -> int:
    """What keeping a word of `group` asks of the words after it."""
    if group.role == "preposition":
        return OWES_OBJECT
    if group.role == "modifier":
        return OWES_HEAD
    return OPEN if group.number >= 0 else FREE


def _next_word(toks: list[str], i: int) -> int | None:
    return next((j for j in range(i + 1, len(toks)) if is_word(toks[j])), None)
