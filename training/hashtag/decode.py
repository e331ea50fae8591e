"""Beam search over SegTrm with cached self-attention keys/values (incremental decoding).

Each step feeds only the newest token of every hypothesis; the decoder's earlier keys and
values come from the cache, and the memory's cross-attention keys/values are computed once
per post. A hypothesis ends at [SEP] or at `max_len` tokens. Finished hypotheses are ranked
by mean token log-probability, so short and long hashtag lists compete fairly.
"""

from __future__ import annotations

from dataclasses import dataclass

import torch

from training.hashtag.model import SegTrm
from training.hashtag.vocab import PAD, SEG, SEP, UNK, S


@dataclass
class Hypothesis:
    tokens: list[int]  # generated ids, without [S] and [SEP]
    logprob: float  # sum over tokens including [SEP]
    finished: bool  # ended with [SEP] (else cut at max_len)

    @property
    def score(self) -> float:
        return self.logprob / (len(self.tokens) + 1)


def _expand(x: torch.Tensor, beam: int) -> torch.Tensor:
    """(B, ...) -> (B*beam, ...), each row repeated beam times."""
    return x.repeat_interleave(beam, dim=0)


@torch.no_grad()
def beam_search(model: SegTrm, ids: torch.Tensor, segs: torch.Tensor, beam: int = 4,
                n_best: int = 1, max_len: int | None = None) -> list[list[Hypothesis]]:
    """Source batch (B, L) -> per post, the n_best hypotheses, best first."""
    model.eval()
    max_len = max_len or model.cfg.max_target
    b = ids.shape[0]
    memory, valid = model.memory(model.encode(ids, segs), ids)
    cross_kv = [(_expand(k, beam), _expand(v, beam)) for k, v in model.cross_keys_values(memory)]
    valid = _expand(valid, beam)

    tokens = torch.full((b * beam, 1), S, dtype=torch.long)
    # Only the first copy of each post is live at step 0, so the beam does not fill with
    # duplicates of the same first token.
    scores = torch.full((b, beam), float("-inf"))
    scores[:, 0] = 0.0
    finished: list[list[Hypothesis]] = [[] for _ in range(b)]
    done = torch.zeros(b, dtype=torch.bool)
    cache = None
    history = torch.empty(b * beam, 0, dtype=torch.long)
    for step in range(max_len):
        h, cache = model.decode_step(tokens, step, cache, cross_kv, valid)
        logp = model.logits(h[:, -1]).log_softmax(-1)  # (B*beam, V)
        logp[:, [PAD, UNK, S, SEG]] = float("-inf")  # never generated
        vocab = logp.shape[-1]
        cand = (scores.view(-1, 1) + logp).view(b, beam * vocab)
        top_scores, top_idx = cand.topk(2 * beam, dim=1)  # spare room for [SEP] endings
        src_beam, tok = top_idx // vocab, top_idx % vocab
        new_scores = torch.full((b, beam), float("-inf"))
        new_src = torch.zeros(b, beam, dtype=torch.long)
        new_tok = torch.full((b, beam), PAD, dtype=torch.long)
        for i in range(b):
            if done[i]:
                continue
            kept = 0
            for j in range(2 * beam):
                s = top_scores[i, j].item()
                if s == float("-inf"):
                    break
                prev = history[i * beam + src_beam[i, j]].tolist()
                if tok[i, j] == SEP or step == max_len - 1:
                    ended = tok[i, j] == SEP
                    finished[i].append(Hypothesis(prev + ([] if ended else [tok[i, j].item()]),
                                                  s, bool(ended)))
                    continue
                new_scores[i, kept] = s
                new_src[i, kept], new_tok[i, kept] = src_beam[i, j], tok[i, j]
                kept += 1
                if kept == beam:
                    break
            best_open = new_scores[i].max().item()
            ranked = sorted(finished[i], key=lambda h: h.score, reverse=True)
            # Stop a post once n_best finished hypotheses beat anything still open (open
            # scores only fall as they grow, though their mean may not; a cheap, common bound).
            enough = len(ranked) >= n_best
            if enough and (kept == 0 or ranked[n_best - 1].score >= best_open / (step + 2)):
                done[i] = True
        if done.all():
            break
        rows = (torch.arange(b)[:, None] * beam + new_src).view(-1)
        history = torch.cat([history[rows], new_tok.view(-1, 1)], 1)
        cache = [(k[rows], v[rows]) for k, v in cache]
        scores = new_scores.masked_fill(done[:, None], float("-inf"))
        tokens = new_tok.view(-1, 1)
    return [sorted(f, key=lambda h: h.score, reverse=True)[:n_best] for f in finished]


@torch.no_grad()
def greedy(model: SegTrm, ids: torch.Tensor, segs: torch.Tensor,
           max_len: int | None = None) -> list[list[int]]:
    """Fast argmax decoding for dev-set model selection during training."""
    return [h[0].tokens for h in beam_search(model, ids, segs, beam=1, n_best=1, max_len=max_len)]
