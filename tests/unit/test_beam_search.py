"""The model-independent beam search (nlp_models/beam.py) on a scripted next-token table."""

from __future__ import annotations

import torch

from nlp_models.beam import beam_search

END, X = 0, 1
# log-probabilities of (END, X) at each step: ending at once scores -1.0; two X and an END
# score (-1.2 - 0.01 - 0.01) / (8 / 6) = -0.915 under alpha 1, better, but only a search
# that goes on after its first ended hypothesis finds them
TABLE = [(-1.0, -1.2), (-5.0, -0.01), (-0.01, -5.0)]


class Scripted:
    """A Search whose next-token log-probabilities depend on the step only."""

    def __init__(self, rows: int):
        self.rows, self.step_no = rows, 0

    def step(self, prev: torch.Tensor | None) -> torch.Tensor:
        row = TABLE[min(self.step_no, len(TABLE) - 1)]
        self.step_no += 1
        return torch.tensor([row] * self.rows)

    def ends(self, src: torch.Tensor, tok: torch.Tensor) -> torch.Tensor:
        return tok == END

    def select(self, rows: torch.Tensor, kept_inputs: torch.Tensor | None) -> None:
        self.rows = rows.numel()


def search(n_best: int, stable_first: bool) -> list[list[int]]:
    (hyps,) = beam_search(Scripted(2), 1, 2, n_best, 10, 1.0, stable_first)
    return [h.tokens for h in hyps]


def test_a_longer_search_for_more_hypotheses_can_find_a_better_first():
    assert search(1, False) == [[]]
    assert search(3, False)[0] == [X, X]


def test_with_a_stable_first_more_hypotheses_only_add_alternatives():
    assert search(1, True) == [[]]
    assert search(3, True)[0] == []
    assert [X, X] in search(3, True)
