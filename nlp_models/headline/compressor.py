"""A learned deletion compressor: which words of a sentence a headline keeps.

A newsroom's headline is mostly its lead sentence with words deleted (Filippova & Altun,
2013; Dorr et al., 2003). This model reads a sentence and gives each token a keep
probability; a compression is the sentence's own tokens in their own order, so it states
nothing the article does not, and a phrase it is told to keep is in it by construction.

Shapes (B sentences, T tokens):

    words, suffixes, shapes, phrase   (B, T) int64    `encode` of each sentence
    embeddings, concatenated           (B, T, E)       E = word + suffix + shape + phrase dims
    bi-LSTM, 2 layers                  (B, T, 2H)
    keep logits                        (B, T)          sigmoid: P(keep token t)

`compressions` turns the probabilities into text at several lengths: for n words, the n
word tokens of highest keep logit (a phrase's tokens always among them), punctuation kept
where the model keeps it and its neighbours are kept; plus the model's own length (every
word above 0.5).
"""

from __future__ import annotations

import re
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

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        """x (4, B, T) -> keep logits (B, T)."""
        words, suffixes, shapes, phrase = x
        e = torch.cat([self.word_emb(words), self.suffix_emb(suffixes),
                       self.shape_emb(shapes), self.phrase_emb(phrase)], dim=-1)
        lengths = (shapes != PAD).sum(1).clamp(min=1).cpu()
        packed = nn.utils.rnn.pack_padded_sequence(self.drop(e), lengths, batch_first=True,
                                                   enforce_sorted=False)
        h, _ = self.lstm(packed)
        h, _ = nn.utils.rnn.pad_packed_sequence(h, batch_first=True, total_length=words.size(1))
        return self.out(self.drop(h)).squeeze(-1)

    @torch.no_grad()
    def keep_logits(self, sentences: list[list[str]],
                    phrases: list[list[bool]] | None = None) -> list[list[float]]:
        """Each tokenised sentence's keep logits (eval mode), BATCH sentences a pass."""
        self.eval()
        phrases = phrases or [None] * len(sentences)
        out: list[list[float]] = []
        for i in range(0, len(sentences), BATCH):
            chunk = sentences[i: i + BATCH]
            x = self.batch([self.encode(s, p) for s, p in
                            zip(chunk, phrases[i: i + BATCH], strict=True)])
            logits = self(x).float()
            out += [logits[b, : len(s)].tolist() for b, s in enumerate(chunk)]
        return out

    def compressions(self, sentence: str, lengths: list[int], phrase: str = "",
                     runs: bool = False) -> dict[str, str]:
        """`sentence` compressed to each of `lengths` words (keys "8", "12", ...), then to
        the model's own length (key "model"), `phrase` kept when the sentence holds it; `runs`:
        also each length in few runs of the sentence (keys "8/runs", ...; RUN_GAP), which
        read better where the dev's ROUGE-chosen gap scatters words."""
        toks = tokens(sentence)
        marks = phrase_mask(toks, phrase)
        logits = self.keep_logits([toks], [marks])[0]
        out = {}
        for n in lengths:
            out[str(n)] = detokenize(select(toks, logits, marks, n, self.gap))
            if runs:
                out[f"{n}/runs"] = detokenize(select(toks, logits, marks, n, RUN_GAP))
        out["model"] = detokenize(select(toks, logits, marks, None, self.gap))
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
           gap: float = 0.0) -> list[str]:
    """The kept tokens: `n` words (`n` None: as many as pay), the forced ones among them,
    that maximise their summed keep logits minus `gap` for every run of kept words after the
    first (a headline reads best as few runs of the sentence: "Smith resigned", not "Smith
    mayor Friday"); then each mark the model keeps that follows a kept token and precedes a
    kept word ("Harvey, Illinois, man"; not "Smith, resigned" for "Smith, the mayor,
    resigned"), and always a period inside the sentence between kept tokens: an
    abbreviation's ("Sen. Snowe")."""
    words = [i for i, t in enumerate(toks) if is_word(t)]
    scores = [FORCED if forced[i] else logits[i] for i in words]
    if n is not None:
        n = min(len(words), max(n, sum(forced[i] for i in words)))
    keep = {words[j] for j in _best_runs(scores, n, gap)}
    marks = {i for i, t in enumerate(toks) if not is_word(t) and (logits[i] > 0 or t == ".")
             and i - 1 in keep and _next_word(toks, i) in keep}
    return [toks[i] for i in sorted(keep | marks)]


FORCED = 1e4  # a forced word's score: above any sum of logits
NONE, IN_RUN, AFTER_RUN = 0, 1, 2  # what the words so far kept: none; the last; not the last


def _best_runs(scores: list[float], n: int | None, gap: float) -> list[int]:
    """The word indices of highest sum of `scores` minus `gap` per run after the first,
    exactly `n` of them (None: any number), by dynamic programming over (words read, words
    kept, state), with back-pointers."""
    most = len(scores) if n is None else n
    best: dict[tuple[int, int], float] = {(0, NONE): 0.0}
    back: list[dict[tuple[int, int], tuple[int, int]]] = []
    for score in scores:
        step: dict[tuple[int, int], float] = {}
        came: dict[tuple[int, int], tuple[int, int]] = {}
        for (c, state), total in best.items():
            options = [((c, NONE if state == NONE else AFTER_RUN), total)]
            if c < most:
                cost = gap if state == AFTER_RUN else 0.0
                options.append(((c + 1, IN_RUN), total + score - cost))
            for key, value in options:
                if key not in step or value > step[key]:
                    step[key], came[key] = value, (c, state)
        best = step
        back.append(came)
    finals = [k for k in best if n is None or k[0] == n]
    if not finals:
        return []
    key, kept = max(finals, key=best.__getitem__), []
    for j in range(len(scores) - 1, -1, -1):
        if key[1] == IN_RUN:
            kept.append(j)
        key = back[j][key]
    return kept[::-1]


def _next_word(toks: list[str], i: int) -> int | None:
    return next((j for j in range(i + 1, len(toks)) if is_word(toks[j])), None)
