"""Article encoders: a vanilla Transformer encoder, and Transformer-XL's segment recurrence.

vanilla  absolute sinusoid positions, full self-attention over the first `max_source`
         tokens; anything after them is cut (the comparison models of the papers).
xl       the article is read in segments of `segment_len` tokens, left to right. Each layer
         of segment tau+1 attends to its own segment and to the cached input states of that
         layer from earlier segments (at most `mem_len` of them), with no gradient through
         the cache (Eq. 8-10 of the XL-CC paper). Positions enter only through relative
         attention (Eq. 12): score(i, j) = (q_i + u) . k_j + (q_i + v) . W_R R_(i-j), with R
         the sinusoid of the distance i-j and learned biases u, v per head. Unlike
         Transformer-XL's language model the encoder is bidirectional inside a segment, so
         distances run from -(segment_len-1) to mem_len+segment_len-1.

The decoder attends to the final states of every segment, so an article of any length is
encoded; what limits length is memory (states of the whole article are kept for the
decoder), hence `max_source` for both kinds. Shapes: B batch, S source length, L segment
length, M memory length, D model width, H heads, dh = D / H.
"""

from __future__ import annotations

import math

import torch
import torch.nn as nn
import torch.nn.functional as F

from nlp_models.layers import EncoderLayer, FeedForward, sinusoid

ENCODERS = ("vanilla", "xl")


class RelativeAttention(nn.Module):
    """Multi-head attention with Transformer-XL relative positions (Eq. 12)."""

    def __init__(self, d_model: int, n_heads: int):
        super().__init__()
        self.h, self.dh = n_heads, d_model // n_heads
        self.q = nn.Linear(d_model, d_model)
        self.kv = nn.Linear(d_model, 2 * d_model)  # W_{k,E} and W_v
        self.r = nn.Linear(d_model, d_model, bias=False)  # W_{k,R}
        self.u = nn.Parameter(torch.zeros(self.h, 1, self.dh))  # global content bias
        self.v = nn.Parameter(torch.zeros(self.h, 1, self.dh))  # global position bias
        self.out = nn.Linear(d_model, d_model)

    def heads(self, x: torch.Tensor) -> torch.Tensor:  # (B, N, D) -> (B, H, N, dh)
        return x.view(x.shape[0], x.shape[1], self.h, self.dh).transpose(1, 2)

    def forward(self, x: torch.Tensor, context: torch.Tensor,
                key_mask: torch.Tensor) -> torch.Tensor:
        """x: (B, L, D) queries; context: (B, M+L, D) = [memory; x]; key_mask: (B, L, M+L)."""
        n_q, n_k = x.shape[1], context.shape[1]
        q = self.heads(self.q(x))
        k, v = self.kv(context).chunk(2, dim=-1)
        k, v = self.heads(k), self.heads(v)
        # Query i sits at position mem+i of the context, so its distance to key j is
        # mem+i-j. R holds distances mem+L-1 down to -(L-1); row i, key j is at L-1-i+j.
        distances = torch.arange(n_k - 1, -n_q, -1, device=x.device)
        r = self.r(sinusoid(distances, x.shape[-1]))  # (mem+2L-1, D)
        r = r.view(-1, self.h, self.dh).transpose(0, 1)  # (H, mem+2L-1, dh)
        position = (q + self.v) @ r.transpose(-1, -2)  # (B, H, L, mem+2L-1)
        index = (n_q - 1 - torch.arange(n_q, device=x.device))[:, None] + torch.arange(
            n_k, device=x.device)[None]  # (L, M+L)
        position = position.gather(-1, index.expand(*position.shape[:2], -1, -1))
        bias = (position / math.sqrt(self.dh)).masked_fill(~key_mask[:, None], float("-inf"))
        # sdpa adds `bias` to (q+u).k / sqrt(dh): content and position terms of Eq. 12.
        y = F.scaled_dot_product_attention(q + self.u, k, v, attn_mask=bias)
        return self.out(y.transpose(1, 2).reshape(x.shape))


class XLEncoderLayer(nn.Module):
    def __init__(self, d_model: int, n_heads: int, d_ff: int, dropout: float):
        super().__init__()
        self.ln1, self.ln2 = nn.LayerNorm(d_model), nn.LayerNorm(d_model)
        self.attn = RelativeAttention(d_model, n_heads)
        self.ff = FeedForward(d_model, d_ff, dropout)
        self.drop = nn.Dropout(dropout)

    def forward(self, x: torch.Tensor, memory: torch.Tensor,
                key_mask: torch.Tensor) -> torch.Tensor:
        context = self.ln1(torch.cat([memory, x], dim=1))
        x = x + self.drop(self.attn(context[:, memory.shape[1]:], context, key_mask))
        return x + self.ff(self.ln2(x))


class ArticleEncoder(nn.Module):
    """Embedded article (B, S, D) + validity (B, S) -> states (B, S', D), validity (B, S').

    S' = S for xl; min(S, max_source) for vanilla."""

    def __init__(self, kind: str, d_model: int, n_heads: int, layers: int, d_ff: int,
                 dropout: float, max_source: int, segment_len: int = 128, mem_len: int = 128):
        super().__init__()
        if kind not in ENCODERS:
            raise ValueError(f"encoder {kind!r} not in {ENCODERS}")
        self.kind, self.max_source = kind, max_source
        self.segment_len, self.mem_len = segment_len, mem_len
        layer = XLEncoderLayer if kind == "xl" else EncoderLayer
        self.layers = nn.ModuleList(layer(d_model, n_heads, d_ff, dropout) for _ in range(layers))
        self.drop = nn.Dropout(dropout)
        self.ln = nn.LayerNorm(d_model)

    def forward(self, x: torch.Tensor, valid: torch.Tensor) -> tuple[torch.Tensor, torch.Tensor]:
        x, valid = x[:, : self.max_source], valid[:, : self.max_source]
        if self.kind == "vanilla":
            x = self.drop(x + sinusoid(torch.arange(x.shape[1], device=x.device), x.shape[-1]))
            mask = valid[:, None, None, :]
            for layer in self.layers:
                x = layer(x, mask)
            return self.ln(x), valid
        return self._recurrent(self.drop(x), valid), valid

    def _recurrent(self, x: torch.Tensor, valid: torch.Tensor) -> torch.Tensor:
        b, _, d = x.shape
        memories = [x.new_zeros(b, 0, d) for _ in self.layers]  # per layer: its cached inputs
        mem_valid = valid.new_zeros(b, 0)
        outputs = []
        for start in range(0, x.shape[1], self.segment_len):
            h = x[:, start : start + self.segment_len]
            seg_valid = valid[:, start : start + self.segment_len]
            keys = torch.cat([mem_valid, seg_valid], dim=1)  # (B, M+L)
            n_q, n_m = h.shape[1], mem_valid.shape[1]
            # A padding query also sees itself, so a segment that is all padding for one
            # article (a shorter one in the batch) gives finite, ignored states, not NaN.
            itself = torch.zeros(n_q, n_m + n_q, dtype=torch.bool, device=x.device)
            itself[:, n_m:] = torch.eye(n_q, dtype=torch.bool, device=x.device)
            key_mask = keys[:, None, :] | itself[None]
            for i, layer in enumerate(self.layers):
                layer_input = h
                h = layer(h, memories[i], key_mask)
                memories[i] = torch.cat([memories[i], layer_input.detach()], 1)[:, -self.mem_len:]
            mem_valid = keys[:, -self.mem_len:]
            outputs.append(h)
        return self.ln(torch.cat(outputs, dim=1))
