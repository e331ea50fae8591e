"""The quality gate of the refresh path: is a candidate checkpoint at least as good as the
version Triton serves?

Both are scored on the model's gate data with the code of ``python -m training
evaluate`` (same metrics, same decoding). A candidate is refused when, on any gate set, its
primary metric is more than ``tolerance`` below the serving version's, or a safety measure
(lower is better: degenerate headlines, unsupported names and numbers, the share of posts
given the single most frequent hashtag) rises by more than its allowance.

Gate data by default (the first ``gate_size`` examples of each: the whole sets for the
tagger, 300 for the generators): the sets that select checkpoints in training, plus the
held-out-source dev sets that ``python -m training data <task> --out data/<task>`` builds,
when they are there:

    pos_tagger                      ritter/dev (PTB tags), ark_oct27/test (ARK tags)
    hashtag_generator               hashtag/<lang>/dev, data/hashtag/<lang>/dev_ood
    headline_generator              headline/<lang>/dev, data/headline/<lang>/dev_ood
    constrained_headline_generator  the same as headline_generator

Test sets (reported in the model card, never used to decide) follow the same pattern. Each
model's rule, loader, sets and evaluation live in its training package (training/pos/gate.py,
training/hashtag/gate.py, training/headline/gate.py), named by its registry entry; this
module holds what every gate shares and ``spec(model)``, which puts the two together.

An adapted headline generator (``python -m training adapt``) is judged first on its
newsroom's newest pairs, held out of the adaptation (``newsroom holdout``, the usual
tolerance), then on the default sets (or ``--gate-data``) with ``Rule.adapted_tolerance``;
the card records both.
"""

from __future__ import annotations

import importlib
import sys
import tempfile
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path

from nlp_models import registry
from training.paths import REPO_ROOT, data_dir

#: Where ``python -m training data hashtag|headline --out data/<task>`` writes the extra
#: training pairs and the held-out-source dev sets (git-ignored).
EXTRA_DATA = REPO_ROOT / "data"


class Unloadable(Exception):
    """The checkpoint would fail in the model's model.py (or is for another model)."""


@dataclass(frozen=True)
class GateSet:
    """One evaluation file and what the model's evaluation needs to read it."""

    name: str
    path: Path
    option: str  # pos: the tagset scored; the generators: the language

    def describe(self) -> dict:
        return {"name": self.name, "path": str(self.path), "option": self.option}


@dataclass(frozen=True)
class Checkpoint:
    """What loading a checkpoint the way the model's model.py does tells us about it."""

    filename: str  # its file name inside a version directory
    lang: str | None
    signature: dict  # what must match the serving checkpoint (heads, kind, language)
    holdout: Path | None = None  # an adapted generator's newsroom pairs held out of adapting
    decoding: tuple[str, ...] = ()  # the decoder's rules in order (headline models' cards)


@dataclass(frozen=True)
class Rule:
    primary: str  # a metric path, "rouge1.f" = result["rouge1"]["f"]
    tolerance: float
    safety: dict[str, float] = field(default_factory=dict)  # metric -> allowed increase
    # an adapted model is for one newsroom: judged on its held-out pairs with `tolerance`,
    # on the generic sets with this wider one (it may trade some general skill for the house)
    adapted_tolerance: float = 0.03


@dataclass(frozen=True)
class ModelGate:
    """How the refresh path judges one model's checkpoints; each model's training package
    defines its own (e.g. training/pos/gate.py) and its registry entry names it."""

    rule: Rule
    load: Callable[[Path], Checkpoint]
    sets: Callable[[str | None, str], list[GateSet]]  # (lang, "dev"|"test") -> sets
    evaluate: Callable[[Path, GateSet], dict]
    gate_size: int = 300  # examples per gate set by default (the generators decode slowly)


@dataclass(frozen=True)
class ModelSpec(ModelGate):
    """A model's gate with its registry name and size budget (``spec``)."""

    name: str = ""
    max_mb: int = 0  # the shipped-weights budget of one checkpoint file


def generator_sets(task: str) -> Callable[[str | None, str], list[GateSet]]:
    """``<shared>/<task>/<lang>/<split>.jsonl`` and, for dev, the held-out-source dev set."""
    def sets(lang: str | None, split: str) -> list[GateSet]:
        lang = lang or "en"
        found = []
        root = shared(task)
        if root and (root / lang / f"{split}.jsonl").exists():
            found.append(GateSet(f"{task}/{lang}/{split}", root / lang / f"{split}.jsonl", lang))
        ood = EXTRA_DATA / task / lang / "dev_ood.jsonl"
        if split == "dev" and ood.exists():
            found.append(GateSet(f"{task}/{lang}/dev_ood", ood, lang))
        return found
    return sets


def shared(task: str) -> Path | None:
    """``<shared data>/<task>``, None where the shared datasets are not on this machine."""
    try:
        root = data_dir() / task
    except SystemExit:  # no shared datasets on this machine
        return None
    return root if root.is_dir() else None


def spec(model: str) -> ModelSpec:
    """The gate of ``model``, as its registry entry names it (KeyError: no such model)."""
    served = registry.MODELS[model]
    module, name = served.gate.split(":")
    gate: ModelGate = getattr(importlib.import_module(module), name)
    return ModelSpec(gate.rule, gate.load, gate.sets, gate.evaluate, gate.gate_size,
                     name=served.name, max_mb=served.max_mb)


# The decision ---------------------------------------------------------------------------------
def metric(result: dict, path: str) -> float | None:
    """``result["rouge1"]["f"]`` for ``"rouge1.f"``; None when absent or null."""
    value: object = result
    for key in path.split("."):
        if not isinstance(value, dict) or key not in value:
            return None
        value = value[key]
    return float(value) if isinstance(value, int | float) else None


def judge(rule: Rule, scores: dict[str, dict[str, dict]],
          widened: frozenset[str] = frozenset()) -> list[str]:
    """Why the candidate is refused (empty: it passes). ``scores[set]`` holds the
    ``candidate`` and ``serving`` results; a set without a serving result passes. Sets in
    ``widened`` (an adapted model's generic sets) allow ``rule.adapted_tolerance``."""
    failures = []
    for name, pair in scores.items():
        cand, serv = pair["candidate"], pair.get("serving")
        if serv is None:
            continue
        tolerance = rule.adapted_tolerance if name in widened else rule.tolerance
        c, s = metric(cand, rule.primary), metric(serv, rule.primary)
        if c is None or s is None:
            failures.append(f"{name}: no {rule.primary} to compare")
        elif c < s - tolerance:
            failures.append(f"{name}: {rule.primary} {c:.4f} is below the serving "
                            f"version's {s:.4f} by more than {tolerance}")
        for key, allowance in rule.safety.items():
            c, s = metric(cand, key), metric(serv, key)
            if c is not None and s is not None and c > s + allowance:
                failures.append(f"{name}: {key} {c:.4f} is above the serving version's "
                                f"{s:.4f} by more than {allowance}")
    return failures


def first(gate_set: GateSet, size: int, workdir: Path) -> GateSet:
    """The same set cut to its first ``size`` examples (JSON lines, or CoNLL sentences)."""
    text = gate_set.path.read_text(encoding="utf-8")
    if gate_set.path.suffix == ".conll":
        blocks = [b for b in text.strip().split("\n\n") if b.strip()]
        cut, n = "\n\n".join(blocks[:size]) + "\n\n", len(blocks[:size])
    else:
        lines = [line for line in text.splitlines() if line.strip()]
        cut, n = "\n".join(lines[:size]) + "\n", len(lines[:size])
    path = workdir / f"{len(list(workdir.iterdir()))}{gate_set.path.suffix}"
    path.write_text(cut, encoding="utf-8")
    return GateSet(f"{gate_set.name}[:{n}]", path, gate_set.option)


def score_sets(spec: ModelSpec, models: dict[str, Path | None], sets: list[GateSet],
               size: int) -> dict[str, dict[str, dict]]:
    """``{set name: {role: result}}`` for each model (role -> checkpoint; None skipped)."""
    out: dict[str, dict[str, dict]] = {}
    with tempfile.TemporaryDirectory(prefix="gate-") as tmp:
        for full in sets:
            gate_set = first(full, size, Path(tmp))
            out[gate_set.name] = {"data": full.describe()}  # type: ignore[dict-item]
            for role, path in models.items():
                if path is None:
                    continue
                print(f"gate: {role} on {gate_set.name} ...", file=sys.stderr, flush=True)
                result = spec.evaluate(path, gate_set)
                out[gate_set.name][role] = _summary(result, spec.rule)
    return out


def _summary(result: dict, rule: Rule) -> dict:
    """The result without per-run noise (paths, timing): what the card and the gate show."""
    drop = {"model", "data", "seconds", "by_length", "by_presence"}
    kept = {k: v for k, v in result.items() if k not in drop}
    return kept if metric(kept, rule.primary) is not None else result
