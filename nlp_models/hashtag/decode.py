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
from nlp_models.hashtag.model import CopySource, SegTrm, pad
from nlp_models.hashtag.vocab import PAD, SEG, SEP, UNK, S

# alpha of GNMT's length penalty ((5 + n) / 6) ** alpha. Chosen on dev posts 1000-1399 (not
# used for model selection) with the 4-epoch Transformer, beam 4: ROUGE-1 0.0331 at 0, 0.0351
# at 0.6, 0.0298 at 1.0. Ranking by mean log-probability instead produced 12-token lists
# of repeated frequent hashtags.
LENGTH_PENALTY = 0.6


class HashtagSearch:
    """SegTrm's decoder state per hypothesis, for nlp_models/beam.py."""

    def __init__(self, model: SegTrm, ids: torch.Tensor, segs: torch.Tensor, beam: int):
        self.model, self.beam = model, beam
        enc = model.encode(ids, segs)
        memory, valid = model.memory(enc, ids)
        self.cross_kv = [(expand(k, beam), expand(v, beam))
                         for k, v in model.cross_keys_values(memory)]
        self.valid = expand(valid, beam)
        self.src: CopySource | None = None
        self.copy_keys: torch.Tensor | None = None
        if model.copy is not None:
            src = model.copy_source(enc, ids)
            self.src = CopySource(*(expand(x, beam) for x in src))
            self.copy_keys = model.copy.keys(self.src.states)
        self.cache: list | None = None
        self.t = 0

    def step(self, prev: torch.Tensor | None) -> torch.Tensor:
        rows = self.valid.shape[0]
        tokens = torch.full((rows, 1), S) if prev is None else prev[:, None]
        h, self.cache = self.model.decode_step(tokens, self.t, self.cache, self.cross_kv,
                                               self.valid)
        self.t += 1
        if self.src is None:
            logp = self.model.logits(h[:, -1]).log_softmax(-1)
        else:
            p = self.model.copy_probs(h[:, -1:], tokens, self.copy_keys, self.src)[:, 0]
            logp = p.log()  # log(0) = -inf: tokens neither generated nor copyable
        logp[:, [PAD, UNK, S, SEG]] = float("-inf")  # never generated
        return logp

    def ends(self, src: torch.Tensor, tok: torch.Tensor) -> torch.Tensor:
        return tok == SEP

    def select(self, rows: torch.Tensor, kept_inputs: torch.Tensor | None) -> None:
        self.cache = [(k[rows], v[rows]) for k, v in self.cache]
        if kept_inputs is not None:
            same = (kept_inputs[:, None] * self.beam + torch.arange(self.beam)).view(-1)
            self.cross_kv = [(k[same], v[same]) for k, v in self.cross_kv]
            self.valid = self.valid[same]
            if self.src is not None:
                self.src = CopySource(*(x[same] for x in self.src))
                self.copy_keys = self.copy_keys[same]


@torch.no_grad()
def beam_search(model: SegTrm, ids: torch.Tensor, segs: torch.Tensor, beam: int = 4,
                n_best: int = 1, max_len: int | None = None,
                alpha: float = LENGTH_PENALTY) -> list[list[Hypothesis]]:
    """Source batch (B, L) -> per post, the n_best hypotheses, best first."""
    model.eval()
    search = HashtagSearch(model, ids, segs, beam)
    return run_beam(search, ids.shape[0], beam, n_best, max_len or model.cfg.max_target, alpha)


@torch.no_grad()
def greedy(model: SegTrm, ids: torch.Tensor, segs: torch.Tensor,
           max_len: int | None = None) -> list[list[int]]:
    """Fast argmax decoding for dev-set model selection during training."""
    return [h[0].tokens for h in beam_search(model, ids, segs, beam=1, n_best=1, max_len=max_len)]


@torch.no_grad()
def sequence_log_probs(model: SegTrm, ids: torch.Tensor, segs: torch.Tensor,
                       sequences: list[list[int]],
                       source_of: torch.Tensor | None = None) -> torch.Tensor:
    """log p(sequence [SEP] | post) of given token sequences (B,): the same quantity beam
    search accumulates, computed by teacher forcing. One sequence per source row (B, L), or,
    with `source_of` (B,), sequence i against source row source_of[i] of fewer posts (each
    encoded once)."""
    model.eval()
    targets = pad([s + [SEP] for s in sequences])
    y_in = pad([[S] + s for s in sequences])
    real = targets != PAD
    logp = model.target_log_probs(ids, segs, y_in, real, source_of)
    per_token = torch.zeros(targets.shape)
    per_token[real] = logp.gather(1, targets[real][:, None]).squeeze(1)
    return per_token.sum(1)
