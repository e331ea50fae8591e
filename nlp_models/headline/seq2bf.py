"""Transformer-based Seq2BF (Yamada et al.): a headline grown backward and forward from a phrase.

The decoder starts from the given phrase W = w_1..w_L and generates the tokens before it
(backward, ending with [BOS]) and after it (forward, ending with [EOS]), so the phrase is in
the output by construction. Four generation orders (the paper's strategies):

    seq-b  the whole backward sequence, then the forward one
    seq-f  the whole forward sequence, then the backward one
    tok-b  one token backward, one forward, alternately; once a side has ended, the other
           goes on alone
    tok-f  the same, starting forward

Positions are relative to the phrase: its middle token w_floor((L+1)/2) is at 0, backward
tokens negative, forward tokens positive; they enter the decoder as sinusoid encodings.

Decoder rows and masks: the decoder reads the headline in natural order, [BOS] y_-M .. y_-1
w_1 .. w_L y_1 .. y_N [EOS]. Each token has a generation step (phrase tokens 0, then 1, 2,
... in the strategy's order) and its row attends to exactly the tokens whose step is not
later than its own: what existed when it was generated (the paper's Figure 2). A row's
output predicts its outward neighbour with the head of its side: w_1 and backward rows
predict the next token to the left through the backward head, w_L and forward rows the
next to the right through the forward head (two generation components, as in Figure 1).
Because a row never sees later tokens, its keys and values never change once computed:
inference caches them like any left-to-right decoder, and training computes every row at
once under the step mask. Shapes: B batch, N headline rows, S source length, D width.

Copying (`copy = true`, our extension; the paper's Seq2BF has none): each head may also
copy an article token, as the full generator does (Eq. 13 of the XL-CC paper): a row's
distribution is p_gen * P_vocab + (1 - p_gen) * attention over the article, with unknown
article tokens under extended ids. Without it, 22k training pairs teach Seq2BF a language
model of headlines around the phrase, not the article's content (see the README). The copy
attention is dot-product and has no coverage: rows of a headline are computed in parallel
in training, and coverage needs them in generation order.
"""

from __future__ import annotations

from dataclasses import dataclass

import torch
import torch.nn as nn
import torch.nn.functional as F

from nlp_models.headline.encoder import ENCODERS, ArticleEncoder
from nlp_models.headline.model import CopyCoverage
from nlp_models.headline.vocab import BOS, EOS, PAD, UNK
from nlp_models.layers import DecoderLayer, decode_cached, init_weights, sinusoid

STRATEGIES = ("seq-b", "seq-f", "tok-b", "tok-f")
# Training may also draw one of the four orders per example ("mixed"): one model then
# serves every order, which the paper trains a model each for.
TRAINING_STRATEGIES = (*STRATEGIES, "mixed")
BACKWARD, FORWARD = 0, 1
NOT_YET = 1 << 20  # generation step of padding rows: later than any real one


@dataclass
class Seq2BFConfig:
    vocab_size: int
    strategy: str = "tok-b"  # the order trained (and the default order for decoding)
    encoder: str = "xl"
    d_model: int = 256
    n_heads: int = 4
    enc_layers: int = 3
    dec_layers: int = 3
    d_ff: int = 1024
    dropout: float = 0.2
    max_source: int = 1024
    segment_len: int = 128
    mem_len: int = 128
    max_target: int = 48  # generated tokens (both sides, end markers included)
    copy: bool = False  # copy from the article (our extension, see above)

    def __post_init__(self):
        if self.strategy not in TRAINING_STRATEGIES:
            raise ValueError(f"strategy {self.strategy!r} not in {TRAINING_STRATEGIES}")
        if self.encoder not in ENCODERS:
            raise ValueError(f"encoder {self.encoder!r} not in {ENCODERS}")


def next_side(strategy: str, n_back: int, n_fwd: int, back_done: bool, fwd_done: bool) -> int:
    """Which side the next token goes to, given what was generated so far (not both done)."""
    if back_done or fwd_done:
        return FORWARD if back_done else BACKWARD
    if strategy == "seq-b":
        return BACKWARD
    if strategy == "seq-f":
        return FORWARD
    if strategy == "tok-b":
        return BACKWARD if n_back <= n_fwd else FORWARD
    return FORWARD if n_fwd <= n_back else BACKWARD


@dataclass
class Layout:
    """One training headline as decoder rows in natural order."""

    tokens: list[int]
    positions: list[int]
    steps: list[int]
    back_targets: list[int]  # per row: the token its backward head must predict, or PAD
    fwd_targets: list[int]


def layout(left: list[int], phrase: list[int], right: list[int], strategy: str) -> Layout:
    """Token ids before, of, and after the phrase -> rows, positions, steps and targets."""
    m, n_phrase = len(left), len(phrase)
    tokens = [BOS, *left, *phrase, *right, EOS]
    first, last = 1 + m, m + n_phrase  # row indices of w_1 and w_L
    middle = first + (n_phrase + 1) // 2 - 1
    positions = [i - middle for i in range(len(tokens))]
    steps = [0] * len(tokens)
    n_back = n_fwd = step = 0
    back_total, fwd_total = m + 1, len(right) + 1  # each side ends with its marker
    while n_back < back_total or n_fwd < fwd_total:
        step += 1
        side = next_side(strategy, n_back, n_fwd, n_back == back_total, n_fwd == fwd_total)
        if side == BACKWARD:
            steps[first - 1 - n_back] = step
            n_back += 1
        else:
            steps[last + 1 + n_fwd] = step
            n_fwd += 1
    back = [PAD] * len(tokens)
    fwd = [PAD] * len(tokens)
    for i in range(1, first + 1):  # rows BOS+1 .. w_1 predict their left neighbour
        back[i] = tokens[i - 1]
    for i in range(last, len(tokens) - 1):  # rows w_L .. y_N predict their right neighbour
        fwd[i] = tokens[i + 1]
    return Layout(tokens, positions, steps, back, fwd)


class Pointer(nn.Module):
    """Copy attention over the article and p_gen per side (backward, forward)."""

    def __init__(self, d: int):
        super().__init__()
        self.query = nn.Linear(d, d, bias=False)
        self.key = nn.Linear(d, d, bias=False)
        self.gen = nn.Linear(2 * d, 2)

    def attend(self, h: torch.Tensor, keys: torch.Tensor, memory: torch.Tensor,
               valid: torch.Tensor) -> tuple[torch.Tensor, torch.Tensor]:
        """Rows h (B, R, D) over keys = key(memory) (B, S, D) -> attention (B, R, S) and
        context (B, R, D)."""
        scores = self.query(h) @ keys.transpose(1, 2) * h.shape[-1] ** -0.5
        a = scores.masked_fill(~valid[:, None, :], float("-inf")).softmax(-1)
        return a, a @ memory

    def p_gen(self, context: torch.Tensor, h: torch.Tensor, side: torch.Tensor) -> torch.Tensor:
        """(R, D), (R, D), sides (R,) -> probability of generating rather than copying (R, 1)."""
        logits = self.gen(torch.cat([context, h], -1))
        return torch.sigmoid(logits.gather(1, side[:, None]))


class Seq2BF(nn.Module):
    def __init__(self, cfg: Seq2BFConfig):
        super().__init__()
        self.cfg = cfg
        d = cfg.d_model
        self.tok = nn.Embedding(cfg.vocab_size, d, padding_idx=PAD)
        self.encoder = ArticleEncoder(cfg.encoder, d, cfg.n_heads, cfg.enc_layers, cfg.d_ff,
                                      cfg.dropout, cfg.max_source, cfg.segment_len, cfg.mem_len)
        self.decoder = nn.ModuleList(DecoderLayer(d, cfg.n_heads, cfg.d_ff, cfg.dropout)
                                     for _ in range(cfg.dec_layers))
        self.dec_ln = nn.LayerNorm(d)
        self.drop = nn.Dropout(cfg.dropout)
        # Each side's head: its own d x d transform, then the output projection tied to the
        # token embedding (as in the full generator) plus the side's bias over the vocabulary.
        self.heads = nn.ModuleList([nn.Linear(d, d), nn.Linear(d, d)])
        self.out_bias = nn.Parameter(torch.zeros(2, cfg.vocab_size))
        self.pointer = Pointer(d) if cfg.copy else None
        init_weights(self, self.tok)

    def embed(self, ids: torch.Tensor) -> torch.Tensor:
        return self.tok(ids.masked_fill(ids >= self.cfg.vocab_size, UNK)) * self.cfg.d_model**0.5

    def encode(self, src: torch.Tensor) -> tuple[torch.Tensor, torch.Tensor]:
        return self.encoder(self.embed(src), src != PAD)

    def cross_keys_values(self, memory: torch.Tensor) -> list[tuple[torch.Tensor, torch.Tensor]]:
        return [layer.cross_attn.keys_values(memory) for layer in self.decoder]

    def rows(self, tokens: torch.Tensor, positions: torch.Tensor, mask: torch.Tensor,
             cache: list | None, cross_kv: list, valid: torch.Tensor) -> tuple[torch.Tensor, list]:
        """Decoder states of new rows (B, t) given cached rows; mask: (B, t, cached + t)."""
        y = self.drop(self.embed(tokens) + sinusoid(positions, self.cfg.d_model))
        y, new_cache = decode_cached(self.decoder, y, mask[:, None], cache, cross_kv,
                                     valid[:, None, None, :])
        return self.dec_ln(y), new_cache

    def logits(self, h: torch.Tensor, side: int) -> torch.Tensor:
        return self.heads[side](h) @ self.tok.weight.T + self.out_bias[side]

    def side_logits(self, h: torch.Tensor, side: torch.Tensor) -> torch.Tensor:
        """Rows' states (R, D), each through the head of its side (R,) -> logits (R, V)."""
        out = torch.empty(h.shape[0], self.cfg.vocab_size)
        for s in (BACKWARD, FORWARD):
            on_side = side == s
            if on_side.any():
                out[on_side] = self.logits(h[on_side], s)
        return out

    def copy_probs(self, h: torch.Tensor, side: torch.Tensor, a: torch.Tensor,
                   context: torch.Tensor, src_ext: torch.Tensor, n_ext: int) -> torch.Tensor:
        """Rows' states (R, D), sides (R,), copy attention (R, S), context (R, D) and the
        articles' extended ids (R, S) -> P(w) over the vocabulary + n_ext ids (R, V + n_ext)."""
        p_gen = self.pointer.p_gen(context, h, side)
        return CopyCoverage.mix(self.side_logits(h, side).softmax(-1), a, p_gen, src_ext, n_ext)

    def forward(self, src: torch.Tensor, tokens: torch.Tensor, positions: torch.Tensor,
                steps: torch.Tensor, back_targets: torch.Tensor, fwd_targets: torch.Tensor,
                src_ext: torch.Tensor | None = None, n_ext: int = 0) -> dict[str, torch.Tensor]:
        """Teacher-forced loss over both heads; all row tensors (B, N), padded with PAD
        tokens, NOT_YET steps and PAD targets; targets may be extended ids (read as UNK
        without copying). src_ext: the article's extended ids (B, S), needed for copying."""
        memory, valid = self.encode(src)
        mask = steps[:, None, :] <= steps[:, :, None]  # row i sees j iff step j <= step i
        h, _ = self.rows(tokens, positions, mask, None, self.cross_keys_values(memory), valid)
        back, fwd = back_targets != PAD, fwd_targets != PAD
        if self.pointer is not None:
            return self._copy_loss(h, memory, valid, back_targets, fwd_targets,
                                   src_ext if src_ext is not None else src, n_ext)
        logits = torch.cat([self.logits(h[back], BACKWARD), self.logits(h[fwd], FORWARD)])
        targets = torch.cat([back_targets[back], fwd_targets[fwd]])
        nll = F.cross_entropy(logits, targets.masked_fill(targets >= self.cfg.vocab_size, UNK))
        return {"loss": nll, "nll": nll}

    def _copy_loss(self, h: torch.Tensor, memory: torch.Tensor, valid: torch.Tensor,
                   back_targets: torch.Tensor, fwd_targets: torch.Tensor,
                   src_ext: torch.Tensor, n_ext: int) -> dict[str, torch.Tensor]:
        sides = self._side_log_probs(h, memory, valid, back_targets, fwd_targets, src_ext, n_ext)
        nll_t = -torch.cat([log_p for _, log_p in sides]).mean()
        return {"loss": nll_t, "nll": nll_t}

    def _side_log_probs(self, h: torch.Tensor, memory: torch.Tensor, valid: torch.Tensor,
                        back_targets: torch.Tensor, fwd_targets: torch.Tensor,
                        src_ext: torch.Tensor, n_ext: int
                        ) -> list[tuple[torch.Tensor, torch.Tensor]]:
        """Per side, the headline (batch index) of each real target row and log P(target)
        under copying (B, N targets, PAD where a row predicts nothing on that side)."""
        a, context = self.pointer.attend(h, self.pointer.key(memory), memory, valid)
        src_ext = src_ext[:, : valid.shape[1]]
        out = []
        for side, targets in ((BACKWARD, back_targets), (FORWARD, fwd_targets)):
            real = targets != PAD  # (B, N)
            batch_of_row = real.nonzero()[:, 0]
            sides = torch.full((int(real.sum()),), side)
            p = self.copy_probs(h[real], sides, a[real], context[real], src_ext[batch_of_row],
                                n_ext)
            out.append((batch_of_row,
                        (p.gather(1, targets[real][:, None]).squeeze(1) + 1e-9).log()))
        return out

    @torch.no_grad()
    def mean_log_probs(self, memory: torch.Tensor, valid: torch.Tensor, src_ext: torch.Tensor,
                       n_ext: int, tokens: torch.Tensor, positions: torch.Tensor,
                       steps: torch.Tensor, back_targets: torch.Tensor,
                       fwd_targets: torch.Tensor) -> torch.Tensor:
        """Each given headline's mean log-probability per predicted token (B,), both sides
        and their end markers, teacher-forced under the step mask as in training: the judge
        of the constrained lead rule (lead.py). A copying model only; rows as `forward`."""
        if self.pointer is None:
            raise ValueError("judging headlines needs a copying Seq2BF (copy = true)")
        mask = steps[:, None, :] <= steps[:, :, None]
        h, _ = self.rows(tokens, positions, mask, None, self.cross_keys_values(memory), valid)
        total, count = torch.zeros(tokens.shape[0]), torch.zeros(tokens.shape[0])
        for batch_of_row, log_p in self._side_log_probs(h, memory, valid, back_targets,
                                                         fwd_targets, src_ext, n_ext):
            total.index_add_(0, batch_of_row, log_p)
            count.index_add_(0, batch_of_row, torch.ones_like(log_p))
        return total / count.clamp(min=1)


def end_marker(side: int) -> int:
    return BOS if side == BACKWARD else EOS
