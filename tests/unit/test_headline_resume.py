"""A headline training run stopped inside an epoch continues it on --resume: the same
batches in the same order, from the first one not yet trained (training/headline/train.py)."""

from __future__ import annotations

import random
import time
from types import SimpleNamespace

import torch

from training.headline import train as headline_train
from training.headline.train import Schedule, run_epoch

TC = {"max_tokens": 12, "lr": 0.1, "warmup": 0.0, "clip": 1.0, "save_minutes": 60}


def examples(n: int = 30) -> list:
    """Stand-ins with what batching reads: a source of some length (id = position)."""
    return [SimpleNamespace(id=i, source=SimpleNamespace(ids=[0] * (1 + i % 5)))
            for i in range(n)]


def recording_loss(seen: list[list[int]]):
    weight = torch.nn.Parameter(torch.ones(1))

    def loss_of(model, kind, group, choice, rng):
        seen.append([e.id for e in group])
        return {"loss": (weight * len(group)).sum()}
    return weight, loss_of


def run(monkeypatch, rng: random.Random, deadline: float, skip: int = 0, saves=None):
    """One pass; with `saves`, a hook like train()'s that records where it stopped."""
    seen: list[list[int]] = []
    weight, loss_of = recording_loss(seen)
    monkeypatch.setattr(headline_train, "loss_of", loss_of)
    model = torch.nn.Linear(1, 1)
    opt = torch.optim.SGD([weight], lr=0.1)
    schedule = Schedule(total_steps=100, step_no=skip, deadline=deadline)

    def after_step(done: int, total: int) -> bool:
        out_of_time = time.time() > schedule.deadline
        if out_of_time:
            saves.append(done)
        return out_of_time

    _, finished = run_epoch(model, "generator", "xl-cc", opt, examples(), TC, rng, schedule,
                            "test", skip, None if saves is None else after_step)
    return seen, finished, schedule


def test_the_deadline_stops_the_epoch_resumably_and_resume_trains_the_rest(monkeypatch):
    full, finished, _ = run(monkeypatch, random.Random(7), deadline=time.time() + 3600)
    assert finished and len(full) > 3

    saves: list[int] = []
    first, finished, _ = run(monkeypatch, random.Random(7), deadline=0.0, saves=saves)
    assert not finished and saves == [1] and first == full[:1]

    rest, finished, schedule = run(monkeypatch, random.Random(7), time.time() + 3600,
                                   skip=saves[0], saves=[])
    assert finished and first + rest == full  # every batch once, in the original order
    assert schedule.step_no == len(full)      # the learning-rate schedule continues too


def test_without_a_hook_the_deadline_just_ends_the_pass(monkeypatch):
    seen, finished, _ = run(monkeypatch, random.Random(7), deadline=0.0)
    assert finished and len(seen) == 1  # pre-training and --quick runs: evaluate what there is
