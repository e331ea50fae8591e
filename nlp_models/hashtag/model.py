"""SegTrm (Mao et al.): a Transformer that attends to fixed-length segments and selects some.

One class covers the paper's model and its comparison models, chosen by `variant`:

    transformer  vanilla encoder-decoder (TransAbs-like): no [SEG], no segment embeddings
    softbase     SgT encoder ([SEG] every n tokens, segment embeddings, segment-local masks);
                 the decoder reads every encoder state (SegTrm "w/o SSM")
    hardbase     SgT encoder; the decoder reads [S] and every [SEG] state
    soft         SgT + segment selection: top-k [SEG]s *with their segment tokens*
    hard         SgT + segment selection: top-k [SEG]s only

Encoder input (SgT): [S] [SEG] t1..tn [SEG] tn+1..t2n ... ; each token's embedding is
token + position + segment. [S] and ordinary tokens attend to the whole text (the paper's
text and token attention); each [SEG] attends only to its own segment (Eq. 1), so it
aggregates local meaning. Eq. 1 writes the mask multiplicatively; we mask with -inf, which
is what "attend only to the segment" needs (a zeroed score still gets weight exp(0)).

Segment selection (Eq. 2): s_i = f(H[S], H[SEG]_i) for one of four similarities; the top k
are kept in text order and scaled by k * softmax(s over the top k) (k: the segments
actually chosen, fewer for short posts), which leaves them unchanged when the scores
agree and lets the similarity receive gradient (top-k alone is not differentiable).

Decoder: standard pre-LN Transformer decoder that starts from [S] and emits
`h1 # h2 # ... [SEP]`, so the number of hashtags is learned. Self-attention keys/values
are cached for incremental decoding (see decode.py).

Copying (`copy = true`, our extension; the paper has none): most of our hashtags are not
in the post, but where they are, a decoder that can only generate falls back on frequent
training tags. With copying the output is pointer-generator style (See et al. 2017)

    P(w) = p_gen * softmax(logits)(w) + (1 - p_gen) * sum_{j: src_j = w} a_j

where a is a single-head attention of the decoder state over the *copy source*: the
ordinary tokens of the chosen segments (soft, hard: what selection keeps) or of the whole
post (transformer, softbase, hardbase), never [S]/[SEG]/padding; p_gen =
sigmoid(w . [context; state; input embedding] + b). Source and target share one vocabulary
(English BPE subwords, Chinese characters; see vocab.py), so a copied token is an ordinary
id; a source [UNK] can be copied only as [UNK], which decoding never emits. A post with
nothing to copy generates (p_gen = 1). Without copying the model and its checkpoints are
exactly as before (no extra parameters). Shapes: B batch, L source length, T target
length, M decoder memory length, C copy-source length, D model width, H heads, V vocabulary.
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from typing import NamedTuple

import torch
import torch.nn as nn
import torch.nn.functional as F

from nlp_models.hashtag.vocab import PAD, SEG, S, Vocab
from nlp_models.layers import DecoderLayer, EncoderLayer, decode_cached

VARIANTS = ("transformer", "softbase", "hardbase", "soft", "hard")
SIMILARITIES = ("euclidean", "mahalanobis", "cosine", "manhattan")


@dataclass
class SegTrmConfig:
    vocab_size: int
    variant: str = "soft"
    similarity: str = "manhattan"
    d_model: int = 256
    n_heads: int = 4
    enc_layers: int = 3
    dec_layers: int = 3
    d_ff: int = 1024
    dropout: float = 0.1
    segment_len: int = 5  # tokens per segment (the paper's Figure 1 uses 5)
    top_k: int = 3  # selected segments
    max_source: int = 64  # text tokens, before [S]/[SEG] insertion
    max_target: int = 32  # hashtag tokens including [SEP]
    copy: bool = False  # pointer-generator copying from the source (see the module doc)

    def __post_init__(self):
        if self.variant not in VARIANTS:
            raise ValueError(f"variant {self.variant!r} not in {VARIANTS}")
        if self.similarity not in SIMILARITIES:
            raise ValueError(f"similarity {self.similarity!r} not in {SIMILARITIES}")

    @property
    def segmented(self) -> bool:
        return self.variant != "transformer"

    @property
    def max_segments(self) -> int:
        return math.ceil(self.max_source / self.segment_len)

    @property
    def max_positions(self) -> int:
        return 1 + self.max_source + self.max_segments


def layout(tokens: list[int], cfg: SegTrmConfig) -> tuple[list[int], list[int]]:
    """Text token ids -> (encoder ids, segment ids): [S] [SEG] seg1 [SEG] seg2 ...

    Segment ids are 0 for [S] and i+1 for the i-th segment and its [SEG]. The vanilla
    Transformer gets [S] + tokens with segment id 0 throughout.
    """
    tokens = tokens[: cfg.max_source]
    if not cfg.segmented:
        return [S] + tokens, [0] * (len(tokens) + 1)
    ids, segs = [S], [0]
    for i in range(0, max(len(tokens), 1), cfg.segment_len):
        chunk = tokens[i : i + cfg.segment_len]
        ids += [SEG] + chunk
        segs += [i // cfg.segment_len + 1] * (len(chunk) + 1)
    return ids, segs


class Similarity(nn.Module):
    """s_i = f(H[S], H[SEG]_i), larger = more similar; distances are negated.

    Scores are scaled to comparable ranges (distances by sqrt(D), Manhattan by D) so the
    softmax over the top k neither saturates nor flattens just because of the metric.
    Mahalanobis distance uses a learned matrix W (||W(a-b)||, i.e. covariance^-1 = W^T W),
    initialised to the identity so it starts as Euclidean.
    """

    def __init__(self, kind: str, d: int):
        super().__init__()
        self.kind, self.d = kind, d
        if kind == "mahalanobis":
            self.w = nn.Linear(d, d, bias=False)
            nn.init.eye_(self.w.weight)

    def forward(self, s: torch.Tensor, segs: torch.Tensor) -> torch.Tensor:
        """s: (B, D), segs: (B, K, D) -> scores (B, K)."""
        diff = segs - s[:, None, :]
        if self.kind == "cosine":
            return F.cosine_similarity(segs, s[:, None, :], dim=-1) * 4.0
        if self.kind == "manhattan":
            return -diff.abs().sum(-1) / math.sqrt(self.d)
        if self.kind == "mahalanobis":
            diff = self.w(diff)
        return -diff.norm(dim=-1)


class CopySource(NamedTuple):
    """What the decoder may copy from: states (B, C, D), token ids (B, C), copyable (B, C)."""

    states: torch.Tensor
    ids: torch.Tensor
    valid: torch.Tensor


class PostStates(NamedTuple):
    """What the decoder reads of encoded posts, computed once per post and then indexed per
    hypothesis or scored sequence."""

    cross_kv: list[tuple[torch.Tensor, torch.Tensor]]  # per decoder layer: (B, H, M, D/H) each
    valid: torch.Tensor  # (B, M) real memory positions
    src: CopySource | None  # copying models: the copy source
    copy_keys: torch.Tensor | None  # (B, C, D)

    def take(self, rows: torch.Tensor) -> PostStates:
        """The states of posts `rows` (R,), repeats allowed: (R, ...) each."""
        return PostStates([(k[rows], v[rows]) for k, v in self.cross_kv], self.valid[rows],
                          None if self.src is None else CopySource(*(x[rows] for x in self.src)),
                          None if self.copy_keys is None else self.copy_keys[rows])


class CopyHead(nn.Module):
    """Single-head copy attention, the generate/copy switch and the mixture of the two.

    A separate head, not the decoder's multi-head cross-attention: scaled_dot_product_attention
    does not return its weights, and a dedicated head lets copying and context reading
    specialise."""

    def __init__(self, d: int):
        super().__init__()
        self.q, self.k = nn.Linear(d, d), nn.Linear(d, d)
        self.gen = nn.Linear(3 * d, 1)

    def keys(self, states: torch.Tensor) -> torch.Tensor:
        """(B, C, D) -> copy keys (B, C, D): computed once per post, reused every step."""
        return self.k(states)

    def attend(self, h: torch.Tensor, x: torch.Tensor, keys: torch.Tensor,
               src: CopySource) -> tuple[torch.Tensor, torch.Tensor]:
        """Decoder states h (B, T, D), input embeddings x (B, T, D) -> copy attention
        (B, T, C) and p_gen (B, T, 1). Rows with nothing to copy get a = 0 and p_gen = 1."""
        scores = self.q(h) @ keys.transpose(1, 2) / math.sqrt(h.shape[-1])
        scores = scores.masked_fill(~src.valid[:, None, :], float("-inf"))
        a = torch.softmax(scores, -1).nan_to_num(0.0)
        context = a @ src.states
        p_gen = torch.sigmoid(self.gen(torch.cat([context, h, x], -1)))
        return a, p_gen.masked_fill(~src.valid.any(1)[:, None, None], 1.0)

    @staticmethod
    def mix(p_vocab: torch.Tensor, a: torch.Tensor, p_gen: torch.Tensor,
            src_ids: torch.Tensor) -> torch.Tensor:
        """Per decoder position (leading dims ...): p_gen (..., 1) * P_vocab (..., V) +
        (1 - p_gen) * the copy attention a (..., C) summed per source id (..., C)."""
        return (p_gen * p_vocab).scatter_add(-1, src_ids, (1 - p_gen) * a)


class SegTrm(nn.Module):
    def __init__(self, cfg: SegTrmConfig):
        super().__init__()
        self.cfg = cfg
        d = cfg.d_model
        self.tok = nn.Embedding(cfg.vocab_size, d, padding_idx=PAD)
        self.pos = nn.Embedding(max(cfg.max_positions, cfg.max_target + 1), d)
        self.seg = nn.Embedding(cfg.max_segments + 1, d) if cfg.segmented else None
        self.drop = nn.Dropout(cfg.dropout)
        layer = (cfg.d_model, cfg.n_heads, cfg.d_ff, cfg.dropout)
        self.encoder = nn.ModuleList(EncoderLayer(*layer) for _ in range(cfg.enc_layers))
        self.enc_ln = nn.LayerNorm(d)
        self.similarity = Similarity(cfg.similarity, d) if cfg.variant in ("soft", "hard") else None
        self.decoder = nn.ModuleList(DecoderLayer(*layer) for _ in range(cfg.dec_layers))
        self.dec_ln = nn.LayerNorm(d)
        self.copy = CopyHead(d) if cfg.copy else None
        for name, p in self.named_parameters():
            if name.endswith("bias"):
                nn.init.zeros_(p)
            elif p.dim() == 2 and not name.startswith("similarity"):
                nn.init.normal_(p, std=0.02)

    # ---- encoder -------------------------------------------------------------------------

    def encoder_mask(self, ids: torch.Tensor, segs: torch.Tensor) -> torch.Tensor:
        """(B, L) -> (B, 1, L, L): keys must be real tokens; a [SEG] row sees only its segment."""
        keys = (ids != PAD)[:, None, :]  # (B, 1, L)
        mask = keys.expand(-1, ids.shape[1], -1)
        if self.cfg.segmented:
            same_segment = segs[:, :, None] == segs[:, None, :]
            is_seg = (ids == SEG)[:, :, None]
            mask = mask & (~is_seg | same_segment)
        return mask[:, None]

    def encode(self, ids: torch.Tensor, segs: torch.Tensor) -> torch.Tensor:
        """ids, segs: (B, L) -> hidden states (B, L, D)."""
        positions = torch.arange(ids.shape[1], device=ids.device)
        x = self.tok(ids) + self.pos(positions)[None]
        if self.seg is not None:
            x = x + self.seg(segs)
        x = self.drop(x)
        mask = self.encoder_mask(ids, segs)
        for layer in self.encoder:
            x = layer(x, mask)
        return self.enc_ln(x)

    # ---- segment selection ---------------------------------------------------------------

    def segment_scores(self, h: torch.Tensor, ids: torch.Tensor) -> tuple[torch.Tensor, ...]:
        """(B, L, D) -> [SEG] positions (B, K), their states (B, K, D), scores (B, K), valid."""
        n, k_max = self.cfg.segment_len, math.ceil((ids.shape[1] - 1) / (self.cfg.segment_len + 1))
        pos = 1 + torch.arange(k_max, device=ids.device) * (n + 1)  # fixed layout, see layout()
        pos = pos[None].expand(ids.shape[0], -1)
        valid = ids.gather(1, pos) == SEG
        seg_h = h.gather(1, pos[..., None].expand(-1, -1, h.shape[-1]))
        scores = self.similarity(h[:, 0], seg_h) if self.similarity is not None else None
        return pos, seg_h, scores, valid

    def memory(self, h: torch.Tensor, ids: torch.Tensor) -> tuple[torch.Tensor, torch.Tensor]:
        """What the decoder attends to: (B, M, D) states and (B, M) validity."""
        v = self.cfg.variant
        if v in ("transformer", "softbase"):
            return h, ids != PAD
        pos, seg_h, scores, valid = self.segment_scores(h, ids)
        if v == "hardbase":
            return torch.cat([h[:, :1], seg_h], 1), F.pad(valid, (1, 0), value=True)
        k = min(self.cfg.top_k, pos.shape[1])
        top = scores.masked_fill(~valid, float("-inf")).topk(k, dim=1)
        order = top.indices.argsort(dim=1)  # back to text order
        chosen = top.indices.gather(1, order)  # (B, k)
        chosen_valid = valid.gather(1, chosen)
        # k' * softmax over the chosen scores, k' = how many chosen segments exist (a short
        # post has fewer than k), so agreeing scores leave the states unchanged.
        weight = torch.softmax(top.values, dim=1).gather(1, order).nan_to_num(0.0)
        weight = weight * chosen_valid.sum(1, keepdim=True)
        if v == "hard":
            sel = seg_h.gather(1, chosen[..., None].expand(-1, -1, h.shape[-1]))
            sel = sel * weight[..., None]
            return torch.cat([h[:, :1], sel], 1), F.pad(chosen_valid, (1, 0), value=True)
        # soft: each chosen [SEG] with its n segment tokens, in order
        span, span_valid = self._spans(pos.gather(1, chosen), chosen_valid, ids)
        sel = h.gather(1, span[..., None].expand(-1, -1, h.shape[-1]))
        sel = sel * weight.repeat_interleave(self.cfg.segment_len + 1, dim=1)[..., None]
        return torch.cat([h[:, :1], sel], 1), F.pad(span_valid, (1, 0), value=True)

    def _spans(self, seg_pos: torch.Tensor, chosen_valid: torch.Tensor,
               ids: torch.Tensor) -> tuple[torch.Tensor, torch.Tensor]:
        """Chosen [SEG] positions (B, k) -> positions of each [SEG] and its n tokens
        (B, k*(n+1)), clamped into the post, and which of them are real."""
        span = seg_pos[..., None] + torch.arange(self.cfg.segment_len + 1, device=ids.device)
        in_range = span < ids.shape[1]
        span = span.clamp(max=ids.shape[1] - 1)
        real = (ids.gather(1, span.flatten(1)) != PAD).view(span.shape)
        return span.flatten(1), (real & in_range & chosen_valid[..., None]).flatten(1)

    def chosen_segments(self, h: torch.Tensor, ids: torch.Tensor) -> tuple[torch.Tensor, ...]:
        """The top-k [SEG] positions in text order (B, k) and whether each exists (B, k)."""
        pos, _, scores, valid = self.segment_scores(h, ids)
        k = min(self.cfg.top_k, pos.shape[1])
        chosen = scores.masked_fill(~valid, float("-inf")).topk(k, dim=1).indices.sort(1).values
        return pos.gather(1, chosen), valid.gather(1, chosen)

    def copy_source(self, h: torch.Tensor, ids: torch.Tensor) -> CopySource:
        """The tokens the decoder may copy: those of the chosen segments (soft, hard) or of
        the whole post (the base models), as encoder states with their ids. States are the
        unscaled encoder states: the selection weights shape what the decoder reads, the copy
        attention learns its own weighting."""
        if self.cfg.variant in ("soft", "hard"):
            span, valid = self._spans(*self.chosen_segments(h, ids), ids)
            states = h.gather(1, span[..., None].expand(-1, -1, h.shape[-1]))
            src_ids = ids.gather(1, span)
        else:
            states, src_ids, valid = h, ids, ids != PAD
        valid = valid & (src_ids != S) & (src_ids != SEG)
        return CopySource(states, src_ids, valid)

    # ---- decoder -------------------------------------------------------------------------

    def cross_keys_values(self, memory: torch.Tensor) -> list[tuple[torch.Tensor, torch.Tensor]]:
        """Per decoder layer, the memory's keys/values: computed once per post, reused per step."""
        return [layer.cross_attn.keys_values(memory) for layer in self.decoder]

    def decode_step(self, y_ids: torch.Tensor, start: int, cache: list | None,
                    cross_kv: list, memory_valid: torch.Tensor) -> tuple[torch.Tensor, list]:
        """Decode `y_ids` (B, t) at positions start..start+t-1 given cached self K/V.

        Returns final hidden states (B, t, D) and the extended cache. With start=0 and no
        cache this is ordinary teacher-forced decoding with a causal mask.
        """
        t = y_ids.shape[1]
        positions = torch.arange(start, start + t, device=y_ids.device)
        y = self.drop(self.tok(y_ids) + self.pos(positions)[None])
        causal = None
        if t > 1:
            causal = torch.ones(t, start + t, dtype=torch.bool, device=y.device).tril(start)
        cross_mask = memory_valid[:, None, None, :]
        y, new_cache = decode_cached(self.decoder, y, causal, cache, cross_kv, cross_mask)
        return self.dec_ln(y), new_cache

    def logits(self, h: torch.Tensor) -> torch.Tensor:
        """Output projection tied to the token embeddings: (..., D) -> (..., V)."""
        return h @ self.tok.weight.T

    def copy_probs(self, h: torch.Tensor, y_ids: torch.Tensor, keys: torch.Tensor,
                   src: CopySource, rows: torch.Tensor | None = None) -> torch.Tensor:
        """The copy mixture for decoder states h (B, T, D) fed with y_ids (B, T): (B, T, V),
        or (R, V) for the positions where the bool mask `rows` (B, T) is set. Restricting
        the vocabulary-sized work to real target positions is what keeps copying
        affordable in training (targets are padded to the longest in the batch)."""
        a, p_gen = self.copy.attend(h, self.tok(y_ids), keys, src)
        src_ids = src.ids[:, None, :].expand(-1, h.shape[1], -1)
        if rows is not None:
            h, a, p_gen, src_ids = h[rows], a[rows], p_gen[rows], src_ids[rows]
        return CopyHead.mix(self.logits(h).softmax(-1), a, p_gen, src_ids)

    def target_log_probs(self, ids: torch.Tensor, segs: torch.Tensor, y_in: torch.Tensor,
                         real: torch.Tensor) -> torch.Tensor:
        """Teacher-forced log-distributions of the next token at the target positions set in
        the bool mask `real` (B, T), for source (B, L) and decoder input [S] y1.. (B, T):
        (R, V), R = real.sum(). Only real positions are projected onto the vocabulary: the
        projection is the largest matrix product, and padding would be a third of it."""
        enc = self.encode(ids, segs)
        mem, mem_valid = self.memory(enc, ids)
        h, _ = self.decode_step(y_in, 0, None, self.cross_keys_values(mem), mem_valid)
        if self.copy is None:
            return self.logits(h[real]).log_softmax(-1)
        src = self.copy_source(enc, ids)
        p = self.copy_probs(h, y_in, self.copy.keys(src.states), src, real)
        return p.clamp_min(1e-12).log()  # a token neither generated nor copyable has p = 0

    def post_states(self, ids: torch.Tensor, segs: torch.Tensor) -> PostStates:
        """Encode posts (B, L) once for decoding: memory keys/values, copy source and keys."""
        enc = self.encode(ids, segs)
        mem, mem_valid = self.memory(enc, ids)
        src = self.copy_source(enc, ids) if self.copy is not None else None
        keys = self.copy.keys(src.states) if src is not None else None
        return PostStates(self.cross_keys_values(mem), mem_valid, src, keys)

    def token_log_probs(self, posts: PostStates, y_in: torch.Tensor,
                        wanted: torch.Tensor) -> torch.Tensor:
        """log p(wanted[i, t, k] | post i, y_in[i, :t+1]) (R, T, K), 0 where y_in is
        padding: for decoder input [S] y1.. (R, T) reading `posts` row i (R rows, see
        PostStates.take), the probabilities of K tokens at every position (scoring asks for
        the next token and [SEP]). The numbers target_log_probs would gather, without ever
        forming an (R, T, V) distribution: for scoring many sequences against few posts,
        which was most of the served time (`python -m bench hashtag`)."""
        real = y_in != PAD
        h, _ = self.decode_step(y_in, 0, None, posts.cross_kv, posts.valid)
        logits = self.logits(h[real])  # (N, V), N = real.sum()
        asked = wanted[real]  # (N, K)
        logp = logits.gather(1, asked) - logits.logsumexp(-1, keepdim=True)
        if posts.src is not None:
            a, p_gen = self.copy.attend(h, self.tok(y_in), posts.copy_keys, posts.src)
            src_ids = posts.src.ids[:, None, :].expand(-1, y_in.shape[1], -1)[real]  # (N, C)
            copied = (a[real][:, None, :] * (src_ids[:, None, :] == asked[..., None])).sum(-1)
            gen = p_gen[real]  # (N, 1)
            p = gen * logp.exp() + (1 - gen) * copied
            logp = p.clamp_min(1e-12).log()  # as target_log_probs: p = 0 -> log(1e-12)
        out = torch.zeros(wanted.shape)
        out[real] = logp
        return out

    def forward(self, ids: torch.Tensor, segs: torch.Tensor, y_in: torch.Tensor,
                targets: torch.Tensor, label_smoothing: float = 0.0) -> torch.Tensor:
        """Teacher-forced loss: source (B, L), decoder input [S] y1.. (B, T), targets (B, T),
        label-smoothed as F.cross_entropy smooths (with copying: the mixed distribution)."""
        real = targets != PAD
        logp = self.target_log_probs(ids, segs, y_in, real)
        nll = -logp.gather(1, targets[real][:, None]).squeeze(1)
        return ((1 - label_smoothing) * nll - label_smoothing * logp.mean(-1)).mean()

def pad(rows: list[list[int]]) -> torch.Tensor:
    width = max(len(r) for r in rows)
    return torch.tensor([r + [PAD] * (width - len(r)) for r in rows], dtype=torch.long)


def encode_sources(texts: list[str], vocab: Vocab, cfg: SegTrmConfig) -> tuple[torch.Tensor, ...]:
    """Raw texts -> (ids, segs, truncated flags); shared by training and serving."""
    tokens = [vocab.encode(t) for t in texts]
    laid = [layout(t, cfg) for t in tokens]
    truncated = torch.tensor([len(t) > cfg.max_source for t in tokens])
    return pad([ids for ids, _ in laid]), pad([s for _, s in laid]), truncated
