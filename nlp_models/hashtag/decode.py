"""Beam search over SegTrm with cached self-attention keys/values (incremental decoding).

Each step feeds only the newest token of every hypothesis; the decoder's earlier keys and
values come from the cache, and the memory's cross-attention keys/values are computed once
per post. A hypothesis ends at [SEP] or is cut at `max_len` tokens. The batched search
itself (ranking, early stop, dropping finished posts) is nlp_models/beam.py.

A copying model (SegTrm with `copy = true`) scores the log of its mixed distribution
p_gen * P_vocab + (1 - p_gen) * copy attention; its copy source and copy keys are, like the
cross-attention keys/values, computed once per post and expanded over the beam. Source and
target share the vocabulary, so the beam's width stays V.
"""

from __future__ import annotations

import torch

from nlp_models.beam import Hypothesis, expand
from nlp_models.beam import beam_search as run_beam
from nlp_models.hashtag.model import PostStates, SegTrm, pad
from nlp_models.hashtag.vocab import PAD, SEG, SEP, UNK, S

# alpha of GNMT's length penalty ((5 + n) / 6) ** alpha. Chosen on dev posts 1000-1399 (not
# used for model selection) with the 4-epoch Transformer, beam 4: ROUGE-1 0.0331 at 0, 0.0351
# at 0.6, 0.0298 at 1.0. Ranking by mean log-probability instead produced 12-token lists
# of repeated frequent hashtags.
LENGTH_PENALTY = 0.6


class HashtagSearch:
    """SegTrm's decoder state per hypothesis, for nlp_models/beam.py."""

    def __init__(self, model: SegTrm, posts: PostStates, beam: int):
        self.model, self.beam = model, beam
        self.posts = posts.take(expand(torch.arange(posts.valid.shape[0]), beam))
        self.cache: list | None = None
        self.t = 0

    def step(self, prev: torch.Tensor | None) -> torch.Tensor:
        rows = self.posts.valid.shape[0]
        tokens = torch.full((rows, 1), S) if prev is None else prev[:, None]
        h, self.cache = self.model.decode_step(tokens, self.t, self.cache, self.posts.cross_kv,
                                               self.posts.valid)
        self.t += 1
        if self.posts.src is None:
            logp = self.model.logits(h[:, -1]).log_softmax(-1)
        else:
            p = self.model.copy_probs(h[:, -1:], tokens, self.posts.copy_keys,
                                      self.posts.src)[:, 0]
            logp = p.log()  # log(0) = -inf: tokens neither generated nor copyable
        logp[:, [PAD, UNK, S, SEG]] = float("-inf")  # never generated
        return logp

    def ends(self, src: torch.Tensor, tok: torch.Tensor) -> torch.Tensor:
        return tok == SEP

    def select(self, rows: torch.Tensor, kept_inputs: torch.Tensor | None) -> None:
        self.cache = [(k[rows], v[rows]) for k, v in self.cache]
        if kept_inputs is not None:
            same = (kept_inputs[:, None] * self.beam + torch.arange(self.beam)).view(-1)
            self.posts = self.posts.take(same)


@torch.no_grad()
def encode_posts(model: SegTrm, ids: torch.Tensor, segs: torch.Tensor) -> PostStates:
    """Posts (B, L) encoded once, in eval mode, for beam_search and sequence_log_probs."""
    model.eval()
    return model.post_states(ids, segs)


@torch.no_grad()
def beam_search(model: SegTrm, posts: PostStates, beam: int = 4, n_best: int = 1,
                max_len: int | None = None,
                alpha: float = LENGTH_PENALTY) -> list[list[Hypothesis]]:
    """Encoded posts (B rows, `encode_posts`) -> per post, the n_best hypotheses, best
    first."""
    search = HashtagSearch(model, posts, beam)
    batch = posts.valid.shape[0]
    return run_beam(search, batch, beam, n_best, max_len or model.cfg.max_target, alpha)


@torch.no_grad()
def greedy(model: SegTrm, ids: torch.Tensor, segs: torch.Tensor,
           max_len: int | None = None) -> list[list[int]]:
    """Fast argmax decoding for dev-set model selection during training."""
    hyps = beam_search(model, encode_posts(model, ids, segs), beam=1, n_best=1, max_len=max_len)
    return [h[0].tokens for h in hyps]


# Sequences scored per decoder pass by sequence_log_probs: sorted by length first, so a
# pass pads little. On the bench's posts 256 was faster than 128 or 512.
SCORE_BATCH = 256


@torch.no_grad()
def sequence_log_probs(model: SegTrm, posts: PostStates, sequences: list[list[int]],
                       source_of: torch.Tensor | None = None) -> torch.Tensor:
    """log p(sequence [SEP] | post) of given token sequences (B,): the same quantity beam
    search accumulates, computed by teacher forcing. One sequence per encoded post
    (`encode_posts`), or, with `source_of` (B,), sequence i against post source_of[i] of
    fewer posts.

    A sequence that starts another one for the same post (`boston` of `boston marathon`)
    costs nothing: the longer one's pass also gives log p([SEP]) at every position, and
    log p(prefix [SEP]) = its tokens' log-probabilities + log p([SEP]) where it ends."""
    if source_of is None:
        source_of = torch.arange(len(sequences))
    keys = [(src, tuple(seq)) for src, seq in zip(source_of.tolist(), sequences, strict=True)]
    carrier = _longer_sequence_of(sorted(set(keys)))
    scored = sorted(set(carrier.values()), key=lambda key: len(key[1]))
    cumulative, ends = {}, {}  # per scored key: running token log-prob sum, log p([SEP])
    for start in range(0, len(scored), SCORE_BATCH):
        chunk = scored[start : start + SCORE_BATCH]
        targets = pad([[*seq, SEP] for _, seq in chunk])
        y_in = pad([[S, *seq] for _, seq in chunk])
        wanted = torch.stack([targets, torch.full_like(targets, SEP)], -1)
        rows = posts.take(torch.tensor([src for src, _ in chunk]))
        logp = model.token_log_probs(rows, y_in, wanted)  # (R, T, 2)
        sums, seps = logp[..., 0].cumsum(1).tolist(), logp[..., 1].tolist()
        for key, tokens, sep in zip(chunk, sums, seps, strict=True):
            cumulative[key], ends[key] = tokens, sep
    out = []
    for key in keys:
        n, long = len(key[1]), carrier[key]
        out.append((cumulative[long][n - 1] if n else 0.0) + ends[long][n])
    return torch.tensor(out)


def _longer_sequence_of(keys: list[tuple[int, tuple[int, ...]]]) -> dict:
    """(source, sequence) keys in sorted order -> the key whose pass scores each: the longest
    key of the same source that it starts (itself if none). In sorted order a key that
    starts another starts the one right after it."""
    carrier: dict = {}
    for i in range(len(keys) - 1, -1, -1):
        (src, seq), after = keys[i], keys[i + 1] if i + 1 < len(keys) else None
        starts_next = after is not None and after[0] == src and after[1][: len(seq)] == seq
        carrier[keys[i]] = carrier[after] if starts_next else keys[i]
    return carrier
