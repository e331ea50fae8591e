"""Full headline generator: Transformer(XL)-CC (Liao et al.) and its comparison models.

One class, chosen by `variant`:

    transformer        vanilla encoder (first max_source tokens), Transformer decoder
    pointer-generator  vanilla encoder, decoder + copy + coverage (the smooth-embedding
                       paper's "Transformer pointer-generation network" baseline)
    xl-cc              Transformer-XL encoder (segment recurrence, relative positions; see
                       encoder.py) + copy + coverage: the paper's model

Copy and coverage (Eq. 13-16; See et al.'s formulation, which the paper's Eq. 14-16 quote):
on top of the decoder's last layer an additive attention over the article,

    e_i^t = v . tanh(W_h h_i + W_s s_t + w_c c_i^t + b),  a^t = softmax(e^t),
    c^t = sum_{t' < t} a^{t'}                               (coverage)

gives a context vector h*_t and p_gen = sigmoid(w . [h*_t; s_t; x_t] + b'). The output is
p_gen * P_vocab + (1 - p_gen) * (attention summed per source token), over the vocabulary
extended by the article's unknown tokens (vocab.py), so names survive. The loss adds
lambda * sum_i min(a_i^t, c_i^t) per step.

Smooth embedding (pointer-generator paper, Eq. 10-11) is an option for every variant:
each input embedding is scaled by alpha / (alpha + Z(w)), Z the token's relative frequency
in the training data, so frequent tokens weigh less (SIF weighting; alpha 0 = off).

Decoder: pre-LN Transformer decoder with sinusoid positions, output projection tied to the
input embeddings. Shapes: B batch, S source length, T target length, V vocabulary,
X = V + article-local unknown tokens, D model width, A copy-attention width.
"""

from __future__ import annotations

import math
from dataclasses import dataclass

import torch
import torch.nn as nn
import torch.nn.functional as F

from nlp_models.headline.encoder import ArticleEncoder
from nlp_models.headline.vocab import PAD, UNK
from nlp_models.layers import DecoderLayer, decode_cached, init_weights, sinusoid

# encoder x copy: vanilla or segment-recurrent (XL) encoder, with or without copy/coverage
VARIANTS = ("transformer", "pointer-generator", "xl", "xl-cc")


@dataclass
class HeadlineConfig:
    vocab_size: int
    variant: str = "xl-cc"
    d_model: int = 256
    n_heads: int = 4
    enc_layers: int = 3
    dec_layers: int = 3
    d_ff: int = 1024
    dropout: float = 0.2  # the paper's
    max_source: int = 1024  # tokens kept of an article (vanilla: its whole window)
    segment_len: int = 128  # xl: tokens per segment
    mem_len: int = 128  # xl: cached states per layer
    max_target: int = 48  # headline tokens including [EOS]
    coverage_weight: float = 1.0  # lambda of Eq. 16
    smooth_alpha: float = 0.0  # alpha of Eq. 10; 0 = smooth embedding off

    def __post_init__(self):
        if self.variant not in VARIANTS:
            raise ValueError(f"variant {self.variant!r} not in {VARIANTS}")

    @property
    def copy(self) -> bool:
        return self.variant in ("pointer-generator", "xl-cc")

    @property
    def encoder(self) -> str:
        return "xl" if self.variant in ("xl", "xl-cc") else "vanilla"


def smooth_scale(counts: torch.Tensor, alpha: float) -> torch.Tensor:
    """Per-token embedding scale alpha / (alpha + relative frequency) (Eq. 10)."""
    if alpha <= 0:
        return torch.ones_like(counts, dtype=torch.float32)
    return alpha / (alpha + counts.float() / counts.sum().clamp(min=1))


class CopyCoverage(nn.Module):
    """Additive attention with coverage (Eq. 14-15), p_gen, and the copy mixture (Eq. 13)."""

    def __init__(self, d: int):
        super().__init__()
        self.w_h = nn.Linear(d, d, bias=False)
        self.w_s = nn.Linear(d, d)  # its bias is b_attn
        self.w_c = nn.Parameter(torch.zeros(d))
        self.v = nn.Linear(d, 1, bias=False)
        self.gen = nn.Linear(3 * d, 1)

    def step(self, keys: torch.Tensor, memory: torch.Tensor, valid: torch.Tensor,
             s: torch.Tensor, x: torch.Tensor, coverage: torch.Tensor):
        """One decoder step. keys = w_h(memory) (B, S, D), precomputed; s, x: (B, D) decoder
        state and input embedding; coverage (B, S). Returns attention (B, S) and p_gen (B, 1)."""
        # the (B, S, D) sum is the step's largest tensor: build it once and work in place
        hidden = keys + self.w_s(s)[:, None]
        e = self.v(hidden.addcmul_(coverage[..., None], self.w_c).tanh_())
        a = e.squeeze(-1).masked_fill(~valid, float("-inf")).softmax(-1)
        context = (a[:, None] @ memory).squeeze(1)
        p_gen = torch.sigmoid(self.gen(torch.cat([context, s, x], -1)))
        return a, p_gen

    @staticmethod
    def mix(p_vocab: torch.Tensor, a: torch.Tensor, p_gen: torch.Tensor,
            src_ext: torch.Tensor, n_ext: int) -> torch.Tensor:
        """P(w) over X = V + n_ext ids: (B, V), (B, S), (B, 1), (B, S) -> (B, X)."""
        p = F.pad(p_gen * p_vocab, (0, n_ext))
        return p.scatter_add(1, src_ext, (1 - p_gen) * a)


class HeadlineGenerator(nn.Module):
    def __init__(self, cfg: HeadlineConfig):
        super().__init__()
        self.cfg = cfg
        d = cfg.d_model
        self.tok = nn.Embedding(cfg.vocab_size, d, padding_idx=PAD)
        self.register_buffer("scale", torch.ones(cfg.vocab_size))  # smooth embedding
        self.encoder = ArticleEncoder(cfg.encoder, d, cfg.n_heads, cfg.enc_layers, cfg.d_ff,
                                      cfg.dropout, cfg.max_source, cfg.segment_len, cfg.mem_len)
        self.decoder = nn.ModuleList(DecoderLayer(d, cfg.n_heads, cfg.d_ff, cfg.dropout)
                                     for _ in range(cfg.dec_layers))
        self.dec_ln = nn.LayerNorm(d)
        self.drop = nn.Dropout(cfg.dropout)
        self.copy = CopyCoverage(d) if cfg.copy else None
        init_weights(self, self.tok)

    def set_token_counts(self, counts: torch.Tensor) -> None:
        """Training-data token counts (V,) -> smooth-embedding scales (no-op if alpha is 0)."""
        self.scale.copy_(smooth_scale(counts, self.cfg.smooth_alpha))

    def embed(self, ids: torch.Tensor) -> torch.Tensor:
        """(B, N) ids, extended ids read as [UNK] -> (B, N, D) at unit scale."""
        ids = ids.masked_fill(ids >= self.cfg.vocab_size, UNK)
        return self.tok(ids) * (self.scale[ids] * math.sqrt(self.cfg.d_model))[..., None]

    def encode(self, src: torch.Tensor) -> tuple[torch.Tensor, torch.Tensor]:
        """(B, S) ids -> states (B, S', D) and validity (B, S')."""
        return self.encoder(self.embed(src), src != PAD)

    def cross_keys_values(self, memory: torch.Tensor) -> list[tuple[torch.Tensor, torch.Tensor]]:
        """Per decoder layer, the article's keys/values: computed once, reused every step."""
        return [layer.cross_attn.keys_values(memory) for layer in self.decoder]

    def decode_step(self, y_ids: torch.Tensor, start: int, cache: list | None, cross_kv: list,
                    valid: torch.Tensor) -> tuple[torch.Tensor, torch.Tensor, list]:
        """Decode `y_ids` (B, t) at positions start..start+t-1 after the cached ones.

        Returns final states (B, t, D), input embeddings (B, t, D) and the extended cache;
        with start=0 and no cache this is teacher forcing with a causal mask."""
        t = y_ids.shape[1]
        x = self.embed(y_ids)
        positions = torch.arange(start, start + t, device=y_ids.device)
        y = self.drop(x + sinusoid(positions, x.shape[-1]))
        causal = None
        if t > 1:
            causal = torch.ones(t, start + t, dtype=torch.bool, device=y.device).tril(start)
        cross_mask = valid[:, None, None, :]
        y, new_cache = decode_cached(self.decoder, y, causal, cache, cross_kv, cross_mask)
        return self.dec_ln(y), x, new_cache

    def logits(self, h: torch.Tensor) -> torch.Tensor:
        return h @ self.tok.weight.T

    def forward(self, src: torch.Tensor, src_ext: torch.Tensor, n_ext: int, y_in: torch.Tensor,
                targets: torch.Tensor) -> dict[str, torch.Tensor]:
        """Teacher-forced losses. src/src_ext: (B, S) ids and extended ids; y_in: [BOS] y1..
        (B, T); targets: y1 .. [EOS] (B, T) in extended ids, PAD where there is none."""
        memory, valid = self.encode(src)
        real = targets != PAD
        log_p, overlap = self.target_log_probs(memory, valid, src_ext, n_ext, y_in, targets)
        nll, cov = -log_p[real].mean(), overlap[real].mean()
        return {"loss": nll + self.cfg.coverage_weight * cov, "nll": nll, "coverage": cov}

    def target_log_probs(self, memory: torch.Tensor, valid: torch.Tensor,
                         src_ext: torch.Tensor, n_ext: int, y_in: torch.Tensor,
                         targets: torch.Tensor) -> tuple[torch.Tensor, torch.Tensor]:
        """Teacher forcing on encoded articles (B, S', D): each target token's log-probability
        (B, T) and its attention's overlap with the coverage so far (B, T; zeros without
        copy). Training's loss, and the clause picker's judge of candidate headlines: there
        one article (batch 1) is read once and its projections shared by the B targets."""
        n = y_in.shape[0]
        cross_kv = [(k.expand(n, -1, -1, -1), v.expand(n, -1, -1, -1))
                    for k, v in self.cross_keys_values(memory)]
        valid = valid.expand(n, -1)
        h, x, _ = self.decode_step(y_in, 0, None, cross_kv, valid)
        if self.copy is None:
            inside = targets.masked_fill(targets >= self.cfg.vocab_size, UNK)
            log_p = self.logits(h).log_softmax(-1).gather(2, inside[..., None]).squeeze(-1)
            return log_p, torch.zeros_like(log_p)
        src_ext = src_ext[:, : valid.shape[1]].expand(n, -1)
        keys = self.copy.w_h(memory).expand(n, -1, -1)
        memory = memory.expand(n, -1, -1)
        p_vocab = self.logits(h).softmax(-1)  # (B, T, V)
        coverage = torch.zeros(valid.shape, device=h.device)
        log_p, overlap = [], []
        for t in range(h.shape[1]):
            a, p_gen = self.copy.step(keys, memory, valid, h[:, t], x[:, t], coverage)
            p = self.copy.mix(p_vocab[:, t], a, p_gen, src_ext, n_ext)
            log_p.append((p.gather(1, targets[:, t : t + 1]).squeeze(1) + 1e-9).log())
            overlap.append(torch.minimum(a, coverage).sum(-1))
            coverage = coverage + a
        return torch.stack(log_p, 1), torch.stack(overlap, 1)
