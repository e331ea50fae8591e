"""The training loop of all three tasks (training/loop.py): a run stopped inside an epoch
continues it on --resume with the same batches in the same order; the learning-rate
schedule, evaluation, checkpoint selection and patience behave as configured."""

from __future__ import annotations

import json
import random
import time

import pytest
import torch

from training.loop import Loop, LoopConfig, lr_at


class CountingTask:
    """Batches are numbered; the loss is a parameter times the batch's number, so training
    is real (gradients, optimizer) and every batch seen is recorded. Dev scores are given."""

    def __init__(self, model: torch.nn.Linear, n_batches: int = 12, scores=()):
        self.model, self.n_batches, self.scores = model, n_batches, list(scores)
        self.seen: list[int] = []
        self.saved: list[dict] = []

    def batches(self, rng: random.Random) -> list[int]:
        order = list(range(self.n_batches))
        rng.shuffle(order)
        return order

    def loss(self, batch: int, rng: random.Random) -> dict[str, torch.Tensor]:
        self.seen.append(batch)
        return {"loss": self.model.weight.sum() * batch}

    def evaluate(self) -> tuple[dict, float]:
        score = self.scores.pop(0) if self.scores else 0.0
        return {"dev": score}, score

    def save_best(self, path, meta: dict) -> None:
        self.saved.append(meta)

    def state(self) -> dict:
        return {"vocab": "v"}


def make_loop(tmp_path, task_kwargs=None, **cfg) -> tuple[Loop, CountingTask]:
    model = torch.nn.Linear(1, 1)
    task = CountingTask(model, **(task_kwargs or {}))
    opt = torch.optim.SGD(model.parameters(), lr=0.1)
    config = LoopConfig(**{"epochs": 2, "lr": 0.1, **cfg})
    return Loop(model, opt, task, config, tmp_path, random.Random(7), {"run": "t"}), task


def test_a_run_stopped_mid_epoch_resumes_with_the_same_batches(tmp_path) -> None:
    whole, full = make_loop(tmp_path / "whole")
    (tmp_path / "whole").mkdir()
    whole.run()

    (tmp_path / "cut").mkdir()
    first, part = make_loop(tmp_path / "cut")
    first.deadline = time.time() - 1  # out of time after the first batch
    first.run()
    state = torch.load(tmp_path / "cut" / "last.pt", weights_only=False)
    assert state["in_epoch"]["done"] == 1 and state["epoch"] == -1 and state["vocab"] == "v"

    second, rest = make_loop(tmp_path / "cut")
    second.resume(state)
    assert second.step == 1  # the learning-rate schedule continues too
    second.run()
    assert part.seen + rest.seen == full.seen  # every batch once, in the original order


def test_the_schedule_warms_up_decays_to_the_floor_or_stays_constant() -> None:
    cfg = LoopConfig(epochs=1, lr=1.0, warmup=0.1, floor=0.05)
    rates = [lr_at(step, 100, cfg) for step in range(100)]
    assert rates[0] == pytest.approx(0.1) and rates[9] == pytest.approx(1.0)
    assert rates == sorted(rates[:10]) + sorted(rates[10:], reverse=True)
    assert rates[-1] == pytest.approx(0.05)
    assert {lr_at(s, 100, LoopConfig(epochs=1, lr=0.3)) for s in range(100)} == {0.3}


def test_the_best_evaluation_is_kept_and_every_one_is_logged(tmp_path) -> None:
    loop, task = make_loop(tmp_path, {"scores": [0.2, 0.5, 0.4, 0.3]}, epochs=2,
                           eval_every=6)  # 12 batches per epoch: one evaluation mid-epoch
    loop.run()
    log = [json.loads(line) for line in (tmp_path / "log.jsonl").read_text().splitlines()]
    assert [r["epoch"] for r in log] == [0.5, 1, 1.5, 2]
    assert [r["selection"] for r in log] == [0.2, 0.5, 0.4, 0.3]
    assert log[0]["mid_epoch"] and "loss" in log[1]
    assert [m["epoch"] for m in task.saved] == [0.5, 1]  # improvements only
    assert task.saved[-1]["run"] == "t" and task.saved[-1]["dev"] == 0.5


def test_patience_stops_after_epochs_without_improvement(tmp_path) -> None:
    loop, task = make_loop(tmp_path, {"scores": [0.5, 0.4, 0.3, 0.9]}, epochs=4, patience=2)
    loop.run()
    assert len(task.seen) == 3 * 12  # stopped after the third epoch, before the 0.9


def test_quick_runs_end_an_epoch_at_the_deadline_and_still_evaluate(tmp_path) -> None:
    loop, task = make_loop(tmp_path, {"scores": [0.1]}, epochs=1, quick=True)
    loop.deadline = time.time() - 1
    loop.run()
    assert len(task.seen) == 1 and len(task.saved) == 1
