"""DCNN: the hypernetwork bi-LSTM POS tagger of Gui et al. (EMNLP 2018), and its baselines.

"Transferring from Formal Newswire Domain with Hypernet for Twitter POS Tagging"
(../shared/papers/twitter-pos-hypernet-dcnn.txt). One file holds every variant the paper
compares, so they share all code but the recurrence:

    variant        main recurrence input      weights of the main LSTM
    -------------  -------------------------  ------------------------------------------
    bilstm         x_i                        static
    bilstm_ctx     [x_i ; t_i]  (paper's *)   static
    bihyperlstm    x_i                        scaled by a hyper LSTM fed [x_i ; h_{i-1}]
                                              (Ha et al. 2016: main net feeds the hyper net)
    dcnn           x_i                        scaled by a hyper LSTM fed t_i only (Eq. 2-3)

Shapes use B = batch, T = tokens, U = distinct tokens, L = characters per token,
D = word representation, H = main LSTM units, K = hyper LSTM units,
C = context classes (t_i), G = 4*H gate units.

Why DCNN is fast here: its hyper LSTM reads only t_i, never the main LSTM's state, so the
whole hyper sequence and every scaling vector d (Eq. 3) are computed for all steps at once,
before the main recurrence. Since (d ⊗ W) x = d ⊙ (W x), the input and bias terms of
Eq. 3 are precomputed too; the sequential loop is left with one (B,H)x(H,G) matmul per step
for both directions together (`_scaled_lstm_scan`, TorchScript).
"""

from __future__ import annotations

import warnings
from dataclasses import dataclass, field

import torch
import torch.nn as nn
import torch.nn.functional as F
from torch import Tensor

VARIANTS = ("bilstm", "bilstm_ctx", "bihyperlstm", "dcnn")


@dataclass
class TaggerConfig:
    variant: str = "dcnn"
    n_words: int = 0  # vocabulary sizes are set from the data
    n_chars: int = 0
    tagsets: dict[str, int] = field(default_factory=dict)  # head name -> number of tags
    word_dim: int = 100
    char_dim: int = 25  # paper: 25
    char_widths: tuple[int, ...] = (2, 3, 4)
    char_filters: int = 32  # per width
    window: int = 2  # r in Eq. 1: the context window is 2r+1 tokens
    context_hidden: int = 64
    context_dim: int = 7  # N_t; the paper found 7 best (10 with three unused)
    hidden: int = 128  # main LSTM units per direction (paper: 250)
    hyper_hidden: int = 64  # hyper LSTM units (paper: 160)
    hyper_embed: int = 16  # N_z: hyper state -> z -> d, as in Ha et al.
    dropout: float = 0.3
    n_cluster_features: int = 0  # ARK cluster-prefix vocabulary (0: no cluster features)
    cluster_dim: int = 0  # the prefixes of a word (2..16 bits) are embedded and summed


class CharCNN(nn.Module):
    """Orthographic features c_i: char embeddings, convolutions of several widths, max-pool."""

    def __init__(self, cfg: TaggerConfig):
        super().__init__()
        self.embed = nn.Embedding(cfg.n_chars, cfg.char_dim, padding_idx=0)
        self.convs = nn.ModuleList(
            nn.Conv1d(cfg.char_dim, cfg.char_filters, w, padding=w // 2) for w in cfg.char_widths
        )

    @property
    def out_dim(self) -> int:
        return len(self.convs) * self.convs[0].out_channels

    def features(self, chars: Tensor) -> Tensor:  # (U,L) -> (U,F), one row per distinct token
        e = self.embed(chars).transpose(1, 2)  # (U, char_dim, L); padding embeds to zeros
        L = chars.shape[1]
        return torch.tanh(torch.cat([conv(e)[:, :, :L].amax(dim=2) for conv in self.convs], 1))

    def forward(self, types: Tensor, chars: Tensor) -> Tensor:  # (B,T) + (U,L) -> (B,T,F)
        return self.features(chars)[types]  # each distinct token is convolved once


class ContextMLP(nn.Module):
    """Eq. 1: t_i = softmax(MLP[x_{i-r} ⊕ ... ⊕ x_{i+r}]), a distribution over C contexts."""

    def __init__(self, in_dim: int, cfg: TaggerConfig):
        super().__init__()
        self.r = cfg.window
        self.mlp = nn.Sequential(
            nn.Linear((2 * self.r + 1) * in_dim, cfg.context_hidden),
            nn.Tanh(),
            nn.Linear(cfg.context_hidden, cfg.context_dim),
        )

    def forward(self, x: Tensor, mask: Tensor) -> Tensor:  # (B,T,D) -> (B,T,C)
        x = x * mask.unsqueeze(-1)  # padding contributes zeros to the windows
        padded = F.pad(x, (0, 0, self.r, self.r))  # (B, T+2r, D)
        windows = padded.unfold(1, 2 * self.r + 1, 1)  # (B, T, D, 2r+1)
        windows = windows.transpose(2, 3).flatten(2)  # (B, T, (2r+1)D), in token order
        return torch.softmax(self.mlp(windows), dim=-1)


def _script(fn):
    """TorchScript a step loop, so it runs without the Python interpreter per step.

    torch.jit.script is deprecated in favour of torch.compile, which needs a C++ compiler
    at run time and recompiles for new shapes; until that fits serving, we keep TorchScript
    and silence its deprecation warning, which would otherwise greet every CLI call.
    """
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", FutureWarning)
        return torch.jit.script(fn)


@_script
def _scaled_lstm_scan(gx: Tensor, w_h: Tensor, d_h: Tensor | None) -> Tensor:
    """LSTM recurrence for both directions at once.

    gx:  (2,B,T,G) input and bias terms of every step, already scaled (Eq. 3)
    w_h: (2,H,G)   recurrent weights per direction
    d_h: (2,B,T,G) per-step scaling of the recurrent term, or None for a static LSTM
    returns (2,B,T,H) hidden states
    """
    S, B, T, G = gx.shape
    H = G // 4
    h = gx.new_zeros(S, B, H)
    c = gx.new_zeros(S, B, H)
    outs: list[Tensor] = []
    for t in range(T):
        rec = torch.bmm(h, w_h)
        if d_h is not None:
            rec = rec * d_h[:, :, t]
        i, f, g, o = (gx[:, :, t] + rec).chunk(4, dim=-1)
        c = torch.sigmoid(f) * c + torch.sigmoid(i) * torch.tanh(g)
        h = torch.sigmoid(o) * torch.tanh(c)
        outs.append(h)
    return torch.stack(outs, dim=2)


@_script
def _ha_hyper_lstm_scan(
    x: Tensor,
    w_x: Tensor,
    w_h: Tensor,
    b: Tensor,
    hw_x: Tensor,
    hw_h: Tensor,
    hb: Tensor,
    z_w: Tensor,
    z_b: Tensor,
    d_w: Tensor,
) -> Tensor:
    """HyperLSTM of Ha et al. (2016): the hyper cell reads [x_i ; h_{i-1}] of the main cell.

    x: (2,B,T,D); w_x: (2,D,G); w_h: (2,H,G); b: (2,1,G)
    hw_x: (2,D+H,4K); hw_h: (2,K,4K); hb: (2,1,4K)   hyper cell
    z_w: (2,K,3Z); z_b: (2,1,3Z); d_w: (3,2,Z,G)      hyper state -> z -> d (x, h, b)
    returns (2,B,T,H)
    """
    S, B, T, D = x.shape
    H = w_h.shape[1]
    K = hw_h.shape[1]
    Z = d_w.shape[2]
    h = x.new_zeros(S, B, H)
    c = x.new_zeros(S, B, H)
    hh = x.new_zeros(S, B, K)
    hc = x.new_zeros(S, B, K)
    xw = torch.bmm(x.reshape(S, B * T, D), w_x).view(S, B, T, -1)  # input term, all steps
    outs: list[Tensor] = []
    for t in range(T):
        hin = torch.cat([x[:, :, t], h], dim=-1)
        hi, hf, hg, ho = (torch.bmm(hin, hw_x) + torch.bmm(hh, hw_h) + hb).chunk(4, dim=-1)
        hc = torch.sigmoid(hf) * hc + torch.sigmoid(hi) * torch.tanh(hg)
        hh = torch.sigmoid(ho) * torch.tanh(hc)
        z = torch.bmm(hh, z_w) + z_b  # (2,B,3Z)
        d_x = torch.bmm(z[:, :, :Z], d_w[0]) + 1.0
        d_r = torch.bmm(z[:, :, Z : 2 * Z], d_w[1]) + 1.0
        d_b = torch.bmm(z[:, :, 2 * Z :], d_w[2]) + 1.0
        gates = d_x * xw[:, :, t] + d_r * torch.bmm(h, w_h) + d_b * b
        i, f, g, o = gates.chunk(4, dim=-1)
        c = torch.sigmoid(f) * c + torch.sigmoid(i) * torch.tanh(g)
        h = torch.sigmoid(o) * torch.tanh(c)
        outs.append(h)
    return torch.stack(outs, dim=2)


def per_direction(x: Tensor, w: Tensor) -> Tensor:
    """(2,B,T,D) x (2,D,G) -> (2,B,T,G): one matmul per direction, without broadcast copies."""
    S, B, T, D = x.shape
    return torch.bmm(x.reshape(S, B * T, D), w).view(S, B, T, w.shape[-1])


def reverse_padded(x: Tensor, lengths: Tensor) -> Tensor:
    """Reverse each sequence of x (B,T,...) within its length; padding stays at the end."""
    B, T = x.shape[:2]
    steps = torch.arange(T, device=x.device).unsqueeze(0)  # (1,T)
    idx = (lengths.unsqueeze(1) - 1 - steps).clamp(min=0)
    idx = torch.where(steps < lengths.unsqueeze(1), idx, steps)  # (B,T)
    idx = idx.view(B, T, *([1] * (x.dim() - 2))).expand_as(x)
    return x.gather(1, idx)


def _uniform_(module: nn.Module, bound: float = 0.05) -> None:
    """Paper 3.3: all weights but the word embeddings ~ U[-0.05, 0.05]."""
    for name, p in module.named_parameters():
        if not name.startswith(("word_embed", "cluster_embed")):
            nn.init.uniform_(p, -bound, bound)


class Tagger(nn.Module):
    """Word + char representations -> (context MLP) -> bi-LSTM variant -> one softmax per tagset."""

    def __init__(self, cfg: TaggerConfig):
        super().__init__()
        if cfg.variant not in VARIANTS:
            raise ValueError(f"unknown variant {cfg.variant!r}; choose one of {VARIANTS}")
        self.cfg = cfg
        H, G = cfg.hidden, 4 * cfg.hidden
        self.word_embed = nn.Embedding(cfg.n_words, cfg.word_dim, padding_idx=0)
        self.chars = CharCNN(cfg)
        self.cluster_embed = None
        if cfg.n_cluster_features and cfg.cluster_dim:
            n, dim = cfg.n_cluster_features, cfg.cluster_dim
            self.cluster_embed = nn.Embedding(n, dim, padding_idx=0)
        D = cfg.word_dim + self.type_dim
        self.drop = nn.Dropout(cfg.dropout)
        uses_context = cfg.variant in ("bilstm_ctx", "dcnn")
        self.context = ContextMLP(D, cfg) if uses_context else None
        in_dim = D + cfg.context_dim if cfg.variant == "bilstm_ctx" else D
        # Main LSTM weights, one slice per direction.
        self.w_x = nn.Parameter(torch.empty(2, in_dim, G))
        self.w_h = nn.Parameter(torch.empty(2, H, G))
        self.b = nn.Parameter(torch.empty(2, 1, G))
        if cfg.variant == "dcnn":
            K, Z = cfg.hyper_hidden, cfg.hyper_embed
            self.hyper = nn.ModuleList(nn.LSTM(cfg.context_dim, K, batch_first=True) for _ in "fb")
            self.to_z = nn.Linear(K, 3 * Z)  # hyper state -> z for the x, h and b terms
            self.z_to_d = nn.Parameter(torch.empty(3, 2, Z, G))
        elif cfg.variant == "bihyperlstm":
            K, Z = cfg.hyper_hidden, cfg.hyper_embed
            self.hw_x = nn.Parameter(torch.empty(2, in_dim + H, 4 * K))
            self.hw_h = nn.Parameter(torch.empty(2, K, 4 * K))
            self.hb = nn.Parameter(torch.empty(2, 1, 4 * K))
            self.z_w = nn.Parameter(torch.empty(2, K, 3 * Z))
            self.z_b = nn.Parameter(torch.empty(2, 1, 3 * Z))
            self.z_to_d = nn.Parameter(torch.empty(3, 2, Z, G))
        self.heads = nn.ModuleDict({name: nn.Linear(2 * H, n) for name, n in cfg.tagsets.items()})
        _uniform_(self)
        if self.cluster_embed is not None:
            # the prefixes of a word are summed: about unit variance in all
            nn.init.normal_(self.cluster_embed.weight, std=0.35)
            with torch.no_grad():
                self.cluster_embed.weight[0].zero_()

    @property
    def type_dim(self) -> int:
        """Width of the features that depend on the token string only (chars, clusters)."""
        return self.chars.out_dim + (self.cfg.cluster_dim if self.cluster_embed is not None else 0)

    def type_features(self, chars: Tensor, clusters: Tensor | None = None) -> Tensor:
        """(U,L) chars + (U,levels) cluster prefixes -> (U,F): [char-CNN ; sum of prefix
        embeddings], one row per distinct token."""
        c = self.chars.features(chars)
        if self.cluster_embed is None:
            return c
        if clusters is None:
            raise ValueError("this model uses ARK word clusters: encode with a cluster file")
        return torch.cat([c, self.cluster_embed(clusters).sum(1)], dim=-1)

    def represent(
        self,
        words: Tensor,
        types: Tensor,
        chars: Tensor,
        clusters: Tensor | None = None,
    ) -> Tensor:
        """x_i = [word embedding ; char-CNN features ; cluster features] -> (B,T,D)."""
        feats = self.type_features(chars, clusters)
        return self.drop(torch.cat([self.word_embed(words), feats[types]], dim=-1))

    def encode(
        self,
        words: Tensor,
        types: Tensor,
        chars: Tensor,
        lengths: Tensor,
        clusters: Tensor | None = None,
    ) -> Tensor:
        """Hidden states of the bi-LSTM, (B,T,2H)."""
        x = self.represent(words, types, chars, clusters)
        return self._encode_represented(x, (types != 0).float(), lengths)

    def _encode_represented(self, x: Tensor, mask: Tensor, lengths: Tensor) -> Tensor:
        """(B,T,D) token representations -> (B,T,2H) bi-LSTM states."""
        t = self.context(x, mask) if self.context is not None else None
        if self.cfg.variant == "bilstm_ctx":
            x = torch.cat([x, t], dim=-1)
        both = torch.stack([x, reverse_padded(x, lengths)])  # (2,B,T,D)
        if self.cfg.variant == "bihyperlstm":
            h = _ha_hyper_lstm_scan(
                both, self.w_x, self.w_h, self.b, self.hw_x, self.hw_h, self.hb,
                self.z_w, self.z_b, self.z_to_d,
            )
        elif self.cfg.variant == "dcnn":
            h = self._dcnn_scan(per_direction(both, self.w_x), t, lengths)
        else:
            gx = per_direction(both, self.w_x) + self.b.unsqueeze(1)
            h = _scaled_lstm_scan(gx, self.w_h, None)
        return self._join(h, lengths)

    def _join(self, h: Tensor, lengths: Tensor) -> Tensor:
        """(2,B,T,H) states of both directions -> (B,T,2H), each step's own pair."""
        return self.drop(torch.cat([h[0], reverse_padded(h[1], lengths)], dim=-1))

    def _dcnn_scan(self, xw: Tensor, t: Tensor, lengths: Tensor) -> Tensor:
        """Eq. 2-3: the hyper LSTM reads t_i only; its states scale the main LSTM's weights.
        xw: (2,B,T,G) the unscaled input terms W_x x_i of both directions."""
        Z = self.cfg.hyper_embed
        t_dirs = (t, reverse_padded(t, lengths))
        pairs = zip(self.hyper, t_dirs, strict=True)
        hyper = torch.stack([lstm(td)[0] for lstm, td in pairs])  # (2,B,T,K)
        z = self.to_z(hyper)  # (2,B,T,3Z)
        S, B, T, G = xw.shape

        def scaled(k: int, base: Tensor, w: Tensor) -> Tensor:  # base + z_k w, (2,B,T,G)
            z_k = z[..., k * Z : (k + 1) * Z].reshape(S, B * T, Z)
            return torch.baddbmm(base, z_k, w).view(S, B, T, G)

        # d_k = 1 + z_k W_k: "+1" starts every scaling at identity. Fused: d_b ⊙ b is
        # b + z_b (W_b ⊙ b), and gx = d_b ⊙ b + d_x ⊙ xw.
        one = xw.new_ones(1, 1, 1)
        b = self.b  # (2,1,G)
        gx = torch.addcmul(scaled(2, b, self.z_to_d[2] * b), scaled(0, one, self.z_to_d[0]), xw)
        return _scaled_lstm_scan(gx, self.w_h, scaled(1, one, self.z_to_d[1]))

    # Inference per distinct token. Everything the DCNN computes before tokens mix is linear
    # in x_i: the input terms W_x x_i of both directions and x_i's share of the context
    # MLP's first layer (one slice per window position). Computing these once per token
    # string (PosPredictor caches them) saves the largest matmuls of a pass; tag_projected
    # finishes it and gives the tags tag_all gives (tests/unit/test_pos_predictor.py).

    def project_tokens(self, x: Tensor) -> Tensor:
        """(U,D) representations of distinct tokens -> (U,P): for the DCNN
        [W_x x (forward) ; W_x x (backward) ; the context layer's 2r+1 slices times x];
        the other variants mix tokens earlier, so for them x itself."""
        if self.cfg.variant != "dcnn":
            return x
        first = self.context.mlp[0].weight  # (Hc, (2r+1)·D), window positions in order
        n, D = 2 * self.context.r + 1, x.shape[1]
        slices = first.view(-1, n, D).permute(2, 1, 0).reshape(D, -1)  # (D, (2r+1)·Hc)
        return torch.cat([x @ self.w_x[0], x @ self.w_x[1], x @ slices], dim=1)

    def tag_projected(self, rows: Tensor, types: Tensor, lengths: Tensor) -> dict[str, Tensor]:
        """Best tag ids (B,T) per tagset from `project_tokens` rows (U+1,P; row 0 padding,
        all zeros) and the row of each position (B,T); the same tags as tag_all."""
        x = rows[types]  # (B,T,P)
        if self.cfg.variant != "dcnn":
            h = self._encode_represented(x, (types != 0).float(), lengths)
        else:
            G, r = 4 * self.cfg.hidden, self.context.r
            B, T, _ = x.shape
            parts = F.pad(x[..., 2 * G :].view(B, T, 2 * r + 1, -1), (0, 0, 0, 0, r, r))
            first = sum(parts[:, k : k + T, k] for k in range(2 * r + 1))  # (B,T,Hc)
            mlp = self.context.mlp
            t = torch.softmax(mlp[2](mlp[1](first + mlp[0].bias)), dim=-1)
            xw = torch.stack([x[..., :G], reverse_padded(x[..., G : 2 * G], lengths)])
            h = self._join(self._dcnn_scan(xw, t, lengths), lengths)
        return {name: head(h).argmax(-1) for name, head in self.heads.items()}

    def forward(
        self,
        words: Tensor,
        types: Tensor,
        chars: Tensor,
        lengths: Tensor,
        head: str,
        clusters: Tensor | None = None,
    ) -> Tensor:
        """Tag scores (B,T,n_tags) for one tagset."""
        return self.heads[head](self.encode(words, types, chars, lengths, clusters))

    def tag_all(
        self,
        words: Tensor,
        types: Tensor,
        chars: Tensor,
        lengths: Tensor,
        clusters: Tensor | None = None,
    ) -> dict[str, Tensor]:
        """Best tag ids (B,T) for every tagset, sharing one encoder pass (inference goes
        through project_tokens and tag_projected instead, which give the same tags)."""
        h = self.encode(words, types, chars, lengths, clusters)
        return {name: head(h).argmax(-1) for name, head in self.heads.items()}
