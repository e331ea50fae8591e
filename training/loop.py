"""The training loop the three tasks share (POS tagger, hashtag and headline generators).

A task says what is particular to it (`Task`): its batches for an epoch, the loss of one
batch, how to score the model on its dev sets (one selection score), and how to save a
checkpoint. The loop does the rest, the same way for all of them:

- epochs of batches in an order drawn from one `random.Random`, so the order of an epoch is
  reproduced from the rng state it started with;
- the learning rate: constant (`warmup = 0`), or a linear warm-up over the first `warmup`
  share of steps and a linear decay to `peak * floor`;
- gradient clipping, progress on stderr;
- evaluation after every epoch and every `eval_every` steps (0: epoch ends only); the best
  selection score's checkpoint is `best.pt`; each evaluation is a line of `log.jsonl`
  (the learning curve);
- `last.pt` after every epoch, every `save_minutes` inside one, and when the time budget
  runs out: `--resume` continues where it stopped, mid-epoch included;
- stopping: the last epoch, the time budget (`max_minutes`), or `patience` epochs without a
  better selection score.

last.pt holds `model`, `opt`, `epoch` (the last finished one, -1 for none), `best`,
`best_epoch`, `in_epoch` (`{"epoch", "done", "rng"}` when written inside an epoch) and
whatever the task adds (its vocabulary, its config).
"""

from __future__ import annotations

import json
import random
import sys
import time
from collections import Counter
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Protocol

import torch


class Task(Protocol):
    def batches(self, rng: random.Random) -> Sequence[Any]:
        """The next epoch's batches, in an order drawn from `rng`."""

    def loss(self, batch: Any, rng: random.Random) -> dict[str, torch.Tensor]:
        """`{"loss": ..., other terms to report}` for one batch."""

    def evaluate(self) -> tuple[dict, float]:
        """(what to log, the selection score: higher is better); may switch the model to eval
        mode, the loop switches it back."""

    def save_best(self, path: Path, meta: dict) -> None:
        """Write the serving checkpoint (fp16) with `meta` (where in training it was made)."""

    def state(self) -> dict:
        """What last.pt needs besides model and optimizer (vocabulary, config)."""


@dataclass
class LoopConfig:
    epochs: int
    lr: float
    warmup: float = 0.0  # share of steps; 0: the learning rate stays at lr
    floor: float = 1 / 20  # the decay ends at lr * floor
    clip: float = 1.0
    max_minutes: float = 10**6
    save_minutes: float = 15
    eval_every: int = 0  # steps between mid-epoch evaluations (0: epoch ends only)
    patience: int = 0  # epochs without improvement before stopping (0: never)
    quick: bool = False  # smoke test: the deadline ends an epoch early instead of stopping

    @classmethod
    def of(cls, tc: dict, epochs: int, quick: bool, **defaults) -> LoopConfig:
        """From a config's [train] table (keys named as the fields), `defaults` for the
        task's own defaults; --quick runs one epoch of at most 90 seconds."""
        keys = {k: tc[k] for k in cls.__dataclass_fields__ if k in tc and k != "epochs"}
        cfg = cls(**{"epochs": epochs, **defaults, **keys})
        if quick:
            cfg.epochs, cfg.max_minutes, cfg.quick, cfg.eval_every = 1, 1.5, True, 0
        return cfg


def lr_at(step: int, total: int, cfg: LoopConfig) -> float:
    """Linear warm-up over the first `warmup` share of steps, then linear decay to
    lr * floor; constant without warm-up."""
    if cfg.warmup <= 0:
        return cfg.lr
    w = max(1, int(total * cfg.warmup))
    if step < w:
        return cfg.lr * (step + 1) / w
    return cfg.lr * max(cfg.floor, 1 - (step - w) / max(1, total - w))


class Loop:
    def __init__(self, model: torch.nn.Module, opt: torch.optim.Optimizer, task: Task,
                 cfg: LoopConfig, out: Path, rng: random.Random, meta: dict):
        self.model, self.opt, self.task, self.cfg, self.out = model, opt, task, cfg, out
        self.rng, self.meta = rng, meta
        self.start_epoch, self.skip, self.best, self.best_epoch = 0, 0, -float("inf"), 0.0
        self.steps_per_epoch = len(task.batches(random.Random(0)))
        self.total_steps = cfg.epochs * self.steps_per_epoch
        self.step = 0
        self.deadline = time.time() + cfg.max_minutes * 60

    def resume(self, state: dict) -> None:
        """Continue from a last.pt (the task has restored its own part)."""
        self.model.load_state_dict(state["model"])
        self.opt.load_state_dict(state["opt"])
        self.start_epoch, self.best = state["epoch"] + 1, state["best"]
        self.best_epoch = state.get("best_epoch", state["epoch"] + 1)
        if state.get("in_epoch"):  # stopped inside an epoch: the same batches, from there
            self.start_epoch, self.skip = state["in_epoch"]["epoch"], state["in_epoch"]["done"]
            self.rng.setstate(state["in_epoch"]["rng"])
        self.step = self.start_epoch * self.steps_per_epoch + self.skip
        print(f"resumed at epoch {self.start_epoch + 1}, batch {self.skip + 1}; best "
              f"selection score {self.best:.4f}", flush=True)

    def run(self) -> float:
        """Train; returns the best selection score (best.pt holds its checkpoint)."""
        for epoch in range(self.start_epoch, self.cfg.epochs):
            t0, order = time.time(), self.rng.getstate()
            losses, finished = self._epoch(epoch, order)
            if not finished:
                print(f"time budget reached inside epoch {epoch + 1}; --resume continues it",
                      flush=True)
                break
            self.evaluate(epoch + 1, {**losses, "seconds": round(time.time() - t0, 1)})
            self.save_last(epoch)
            if self.cfg.patience and epoch + 1 - self.best_epoch >= self.cfg.patience:
                print(f"no better selection score for {self.cfg.patience} epochs: stopping",
                      flush=True)
                break
            if time.time() > self.deadline:
                print(f"time budget reached after epoch {epoch + 1}", flush=True)
                break
        print(f"best selection score {self.best:.4f} (epoch {self.best_epoch}); checkpoint "
              f"{self.out / 'best.pt'}", flush=True)
        return self.best

    def _epoch(self, epoch: int, order: tuple) -> tuple[dict[str, float], bool]:
        """One pass from batch `skip` on: (mean loss terms, whether it finished)."""
        self.model.train()
        groups = self.task.batches(self.rng)
        skip, self.skip = self.skip, 0
        sums, n, last_save = Counter(), skip, time.time()
        for n, group in enumerate(groups[skip:], skip + 1):
            for g in self.opt.param_groups:
                g["lr"] = lr_at(self.step, self.total_steps, self.cfg)
            losses = self.task.loss(group, self.rng)
            self.opt.zero_grad()
            losses["loss"].backward()
            torch.nn.utils.clip_grad_norm_(self.model.parameters(), self.cfg.clip)
            self.opt.step()
            self.step += 1
            sums.update({k: v.item() for k, v in losses.items()})
            if n % 20 == 0 or n == len(groups):
                shown = " ".join(f"{k} {v / (n - skip):.4f}" for k, v in sums.items())
                print(f"\repoch {epoch + 1}/{self.cfg.epochs} step {n}/{len(groups)} {shown}",
                      end="", file=sys.stderr, flush=True)
            if n == len(groups):
                break
            out_of_time = time.time() > self.deadline
            if self.cfg.quick:
                if out_of_time:
                    break
                continue
            if self.cfg.eval_every and self.step % self.cfg.eval_every == 0:
                self.evaluate(epoch + n / len(groups), {"mid_epoch": True})
            if out_of_time or time.time() - last_save > self.cfg.save_minutes * 60:
                self.save_last(epoch - 1, {"epoch": epoch, "done": n, "rng": order})
                last_save = time.time()
            if out_of_time:
                print(file=sys.stderr)
                return self._means(sums, n - skip), False
        print(file=sys.stderr)
        return self._means(sums, n - skip), True

    @staticmethod
    def _means(sums: Counter, n: int) -> dict[str, float]:
        return {k: round(v / max(n, 1), 4) for k, v in sums.items()}

    def evaluate(self, epoch: float, extra: dict) -> None:
        """Score the dev sets, log, and keep the checkpoint if it is the best so far."""
        fields, score = self.task.evaluate()
        self.model.train()
        record = {"epoch": round(epoch, 3), "step": self.step, **extra, **fields,
                  "selection": round(score, 4)}
        print(json.dumps(record), flush=True)
        with open(self.out / "log.jsonl", "a") as f:
            f.write(json.dumps(record) + "\n")
        if score > self.best:
            self.best, self.best_epoch = score, round(epoch, 3)
            self.task.save_best(self.out / "best.pt", {**self.meta, "epoch": self.best_epoch,
                                                       **fields})

    def save_last(self, epoch: int, in_epoch: dict | None = None) -> None:
        """last.pt, replaced atomically (a crash while writing keeps the previous one)."""
        state = {"model": self.model.state_dict(), "opt": self.opt.state_dict(),
                 "epoch": epoch, "best": self.best, "best_epoch": self.best_epoch,
                 "in_epoch": in_epoch, **self.task.state()}
        torch.save(state, self.out / "last.pt.tmp")
        (self.out / "last.pt.tmp").replace(self.out / "last.pt")
