"""Transformer building blocks shared by the hashtag and headline models.

Pre-LN layers (LayerNorm before each sub-layer, residual around it). Attention masks are
boolean, True where a query may attend to a key. Keys and values are exposed separately
(`keys_values` / `attend`) so decoders can cache them for incremental decoding.
Shapes: B batch, N queries, M keys, D model width, H heads, dh = D / H.
"""

from __future__ import annotations

import math

import torch
import torch.nn as nn
import torch.nn.functional as F


class Attention(nn.Module):
    def __init__(self, d_model: int, n_heads: int):
        super().__init__()
        self.h, self.dh = n_heads, d_model // n_heads
        self.q = nn.Linear(d_model, d_model)
        self.kv = nn.Linear(d_model, 2 * d_model)
        self.out = nn.Linear(d_model, d_model)

    def heads(self, x: torch.Tensor) -> torch.Tensor:  # (B, N, D) -> (B, H, N, dh)
        return x.view(x.shape[0], x.shape[1], self.h, self.dh).transpose(1, 2)

    def keys_values(self, x: torch.Tensor) -> tuple[torch.Tensor, torch.Tensor]:
        k, v = self.kv(x).chunk(2, dim=-1)
        return self.heads(k), self.heads(v)

    def attend(self, x: torch.Tensor, k: torch.Tensor, v: torch.Tensor,
               mask: torch.Tensor | None) -> torch.Tensor:
        q = self.heads(self.q(x))
        # No dropout on attention weights: on CPU its random masks cost ~10% of a step.
        y = F.scaled_dot_product_attention(q, k, v, attn_mask=mask)
        return self.out(y.transpose(1, 2).reshape(x.shape))

    def forward(self, x: torch.Tensor, memory: torch.Tensor, mask: torch.Tensor | None):
        k, v = self.keys_values(memory)
        return self.attend(x, k, v, mask)


class FeedForward(nn.Sequential):
    def __init__(self, d_model: int, d_ff: int, dropout: float):
        super().__init__(nn.Linear(d_model, d_ff), nn.GELU(), nn.Linear(d_ff, d_model),
                         nn.Dropout(dropout))


class EncoderLayer(nn.Module):
    def __init__(self, d_model: int, n_heads: int, d_ff: int, dropout: float):
        super().__init__()
        self.ln1, self.ln2 = nn.LayerNorm(d_model), nn.LayerNorm(d_model)
        self.attn, self.ff = Attention(d_model, n_heads), FeedForward(d_model, d_ff, dropout)
        self.drop = nn.Dropout(dropout)

    def forward(self, x: torch.Tensor, mask: torch.Tensor) -> torch.Tensor:
        h = self.ln1(x)
        x = x + self.drop(self.attn(h, h, mask))
        return x + self.ff(self.ln2(x))


class DecoderLayer(nn.Module):
    """Self-attention over given (possibly cached) keys/values, then cross-attention."""

    def __init__(self, d_model: int, n_heads: int, d_ff: int, dropout: float):
        super().__init__()
        self.ln1, self.ln2, self.ln3 = (nn.LayerNorm(d_model) for _ in range(3))
        self.self_attn, self.cross_attn = Attention(d_model, n_heads), Attention(d_model, n_heads)
        self.ff = FeedForward(d_model, d_ff, dropout)
        self.drop = nn.Dropout(dropout)

    def forward(self, y: torch.Tensor, self_kv: tuple[torch.Tensor, torch.Tensor],
                self_mask: torch.Tensor | None, cross_kv: tuple[torch.Tensor, torch.Tensor],
                cross_mask: torch.Tensor) -> torch.Tensor:
        y = y + self.drop(self.self_attn.attend(self.ln1(y), *self_kv, self_mask))
        y = y + self.drop(self.cross_attn.attend(self.ln2(y), *cross_kv, cross_mask))
        return y + self.ff(self.ln3(y))


def init_weights(model: nn.Module, embedding: nn.Embedding) -> None:
    """The Transformer initialisation of every generator here: biases zero, matrices
    N(0, 0.02), and the (tied) token embedding N(0, 1/d) so that embeddings scaled by
    sqrt(d) start at unit variance."""
    for name, p in model.named_parameters():
        if name.endswith("bias"):
            nn.init.zeros_(p)
        elif p.dim() == 2:
            nn.init.normal_(p, std=0.02)
    nn.init.normal_(embedding.weight, std=embedding.embedding_dim**-0.5)


def sinusoid(positions: torch.Tensor, d: int) -> torch.Tensor:
    """Vaswani et al.'s encoding of positions, which may be negative: (...,) -> (..., d)."""
    freq = torch.exp(torch.arange(0, d, 2, dtype=torch.float32, device=positions.device)
                     * (-math.log(10000.0) / d))
    angles = positions.float()[..., None] * freq
    return torch.stack([angles.sin(), angles.cos()], dim=-1).flatten(-2)


def decode_cached(layers: nn.ModuleList, y: torch.Tensor, self_mask: torch.Tensor | None,
                  cache: list | None, cross_kv: list, cross_mask: torch.Tensor
                  ) -> tuple[torch.Tensor, list]:
    """Run new decoder rows y (B, t, D) through `layers`, appending their self-attention
    keys/values to the per-layer `cache` (None: no earlier rows). Returns (y, new cache)."""
    new_cache = []
    for i, layer in enumerate(layers):
        k, v = layer.self_attn.keys_values(layer.ln1(y))
        if cache is not None:
            k, v = torch.cat([cache[i][0], k], 2), torch.cat([cache[i][1], v], 2)
        new_cache.append((k, v))
        y = layer(y, (k, v), self_mask, cross_kv[i], cross_mask)
    return y, new_cache
