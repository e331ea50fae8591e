"""Batched beam search, independent of the model: a `Search` supplies next-token log-probs.

The engine keeps `beam` hypotheses per input, vectorised over the batch; Python touches only
hypotheses that end. An input stops once its n_best-th ended hypothesis scores at least what
its best open one scores now, and its rows leave the batch so they cost nothing further.
Hypotheses are ranked by GNMT's length-normalised score logprob / ((5 + n) / 6) ** alpha;
those that ended rank above those cut at `max_len`.

A longer search may find a better-scored hypothesis, so the best of n_best = 3 can differ
from the best of n_best = 1 (on 49 of 500 FakeHealth articles for the English headline
generator). With `stable_first` the first hypothesis is the one a search for one would
return, and the rest are alternatives: a headline service that serves three candidates
then shows first the headline `training evaluate` measured.

A `Search` holds the model state of every row (row = input * beam + hypothesis):

    step(prev)        log-probs (rows, X) of the next token; prev (rows,) is the token each
                      row chose last step (None at the first step). X may exceed the
                      vocabulary (copy mechanisms add article-local ids).
    ends(src, tok)    (n, k) bool: does appending token tok to row src end the hypothesis?
                      src indexes rows of the current step; tok is a candidate token.
    select(rows, kept_inputs)
                      keep these rows in this order; kept_inputs (indices into the current
                      inputs) is given when inputs were dropped, for per-input state.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Protocol

import torch


@dataclass
class Hypothesis:
    tokens: list[int]  # generated ids in generation order, without the final end token
    logprob: float  # sum over generated tokens, the end token included
    finished: bool  # ended properly (else cut at max_len)
    alpha: float

    def length_penalty(self) -> float:
        """GNMT's ((5 + n) / 6) ** alpha, n counting the end token."""
        return ((5 + len(self.tokens) + 1) / 6) ** self.alpha

    @property
    def score(self) -> float:
        return self.logprob / self.length_penalty()


class Search(Protocol):
    def step(self, prev: torch.Tensor | None) -> torch.Tensor: ...

    def ends(self, src: torch.Tensor, tok: torch.Tensor) -> torch.Tensor: ...

    def select(self, rows: torch.Tensor, kept_inputs: torch.Tensor | None) -> None: ...


def expand(x: torch.Tensor, beam: int) -> torch.Tensor:
    """(B, ...) -> (B*beam, ...), each input repeated for its beam."""
    return x.repeat_interleave(beam, dim=0)


@torch.no_grad()
def beam_search(search: Search, batch: int, beam: int, n_best: int, max_len: int,
                alpha: float, stable_first: bool = False) -> list[list[Hypothesis]]:
    """Per input, its n_best hypotheses, best first (`stable_first`: the first is n_best =
    1's, the others follow by score)."""
    # Only the first copy of each input is live at step 0, so the beam does not fill with
    # duplicates of the same first token.
    scores = torch.full((batch, beam), float("-inf"))
    scores[:, 0] = 0.0
    history = torch.empty(batch * beam, 0, dtype=torch.long)
    finished: list[list[Hypothesis]] = [[] for _ in range(batch)]
    alive = torch.arange(batch)  # inputs still being decoded, as indices into the batch
    nth_best = torch.full((batch,), float("-inf"))  # n_best-th ended score per live input
    best = torch.full((batch,), float("-inf"))  # best ended score per live input
    first: list[Hypothesis | None] = [None] * batch  # where a search for one would stop
    prev = None
    for step in range(max_len):
        n = alive.numel()
        logp = search.step(prev)  # (n*beam, X)
        width = logp.shape[-1]
        cand = (scores.view(-1, 1) + logp).view(n, beam * width)
        top_scores, top_idx = cand.topk(2 * beam, dim=1)  # room for hypotheses that end
        src = (top_idx // width) + torch.arange(n)[:, None] * beam  # rows, (n, 2*beam)
        tok = top_idx % width
        last = step == max_len - 1
        proper = search.ends(src, tok)
        ends = (proper | last) & (top_scores > float("-inf"))
        for i, j in ends.nonzero().tolist():  # record hypotheses that end here
            prior = history[src[i, j]].tolist()
            ended = bool(proper[i, j])
            finished[alive[i]].append(Hypothesis(prior + ([] if ended else [tok[i, j].item()]),
                                                 top_scores[i, j].item(), ended, alpha))
        for i in ends.any(dim=1).nonzero().flatten().tolist():
            hyps = finished[alive[i]]
            hyps.sort(key=lambda h: (h.finished, h.score), reverse=True)
            best[i] = hyps[0].score
            if len(hyps) >= n_best:
                nth_best[i] = hyps[n_best - 1].score
        if last:
            break
        # The best `beam` candidates that go on become the new beams.
        scores, pick = top_scores.masked_fill(ends, float("-inf")).topk(beam, dim=1)
        src, tok = src.gather(1, pick), tok.gather(1, pick)
        bound = scores.max(dim=1).values / ((5 + step + 2) / 6) ** alpha
        if stable_first:
            for i in (best >= bound).nonzero().flatten().tolist():
                first[alive[i]] = first[alive[i]] or finished[alive[i]][0]
        done = nth_best >= bound
        keep = (~done).nonzero().flatten()
        if keep.numel() == 0:
            break
        rows = src[keep].view(-1)
        history = torch.cat([history[rows], tok[keep].view(-1, 1)], 1)
        search.select(rows, keep if keep.numel() < n else None)
        if keep.numel() < n:
            alive, nth_best, best = alive[keep], nth_best[keep], best[keep]
        scores, prev = scores[keep], tok[keep].view(-1)
    return [f[:n_best] if h is None else [h, *[x for x in f if x is not h]][:n_best]
            for f, h in zip(finished, first, strict=True)]
