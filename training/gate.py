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

Test sets (reported in the model card, never used to decide) follow the same pattern.

An adapted headline generator (``python -m training adapt``) is judged first on its
newsroom's newest pairs, held out of the adaptation (``newsroom holdout``, the usual
tolerance), then on the default sets (or ``--gate-data``) with ``Rule.adapted_tolerance``;
the card records both.
"""

from __future__ import annotations

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
class ModelSpec:
    """How the refresh path handles one Triton model."""

    name: str
    max_mb: int  # the shipped-weights budget of one checkpoint file
    rule: Rule
    load: Callable[[Path], Checkpoint]
    sets: Callable[[str | None, str], list[GateSet]]  # (lang, "dev"|"test") -> sets
    evaluate: Callable[[Path, GateSet], dict]
    gate_size: int = 300  # examples per gate set by default (the generators decode slowly)


# POS tagger -----------------------------------------------------------------------------
def _load_pos(path: Path) -> Checkpoint:
    from nlp_models.pos.predictor import PosPredictor

    tagsets = sorted(PosPredictor(path).tagsets)
    return Checkpoint("pos_tagger.pt", None, {"tagsets": tagsets})


def _pos_sets(lang: str | None, split: str) -> list[GateSet]:
    files = ({"ritter/dev": "ptb", "ark_oct27/test": "ark"} if split == "dev" else
             {"ritter/test": "ptb", "npschat/test": "ptb", "ark_daily547/test": "ark"})
    root = _shared("pos")
    return [GateSet(f"{rel} ({tagset})", root / f"{rel}.conll", tagset)
            for rel, tagset in files.items()] if root else []


def _evaluate_pos(model: Path, gate_set: GateSet) -> dict:
    from training.pos.evaluate import evaluate

    return evaluate(str(gate_set.path), gate_set.option, str(model))


# Hashtag generator ------------------------------------------------------------------------
def _load_hashtag(path: Path) -> Checkpoint:
    from nlp_models.hashtag.predictor import HashtagPredictor

    lang = HashtagPredictor(path).lang
    return Checkpoint(f"hashtag_{lang}.pt", lang, {"lang": lang})


# The served decoding (`parameters` of model_repository/hashtag_generator/config.pbtxt): the
# gate compares what users would get. At the paper's protocol (beam 20, top 10) a checkpoint
# tuned for beam 4 can look collapsed: a wide beam finds the favourites its prior weight was
# never tuned against (Chinese version 7: top_share 0.83 at beam 20, 0.04 at beam 4).
SERVED_BEAM, SERVED_N_BEST = 4, 3


def _evaluate_hashtag(model: Path, gate_set: GateSet) -> dict:
    from training.hashtag.evaluate import evaluate

    return evaluate(str(gate_set.path), gate_set.option, str(model), beam=SERVED_BEAM,
                    n_best=SERVED_N_BEST)


# Headline generators ------------------------------------------------------------------------
def _headline_loader(constrained: bool) -> Callable[[Path], Checkpoint]:
    def load(path: Path) -> Checkpoint:
        from nlp_models.headline.predictor import HeadlinePredictor

        predictor = HeadlinePredictor.load(path)
        if (predictor.kind != "generator") != constrained:
            wanted = "constrained" if constrained else "full (generator)"
            raise Unloadable(f"it is a {predictor.kind} checkpoint, not a {wanted} one")
        holdout = predictor.meta.get("adapted", {}).get("holdout")
        return Checkpoint(f"headline_{predictor.lang}.pt", predictor.lang,
                          {"kind": predictor.kind, "lang": predictor.lang},
                          Path(holdout) if holdout else None,
                          tuple(predictor.decoding_rules()))
    return load


def _evaluate_headline(model: Path, gate_set: GateSet) -> dict:
    from training.headline.evaluate import evaluate_headline

    return evaluate_headline(str(gate_set.path), str(model), lang=gate_set.option)


def _evaluate_constrained(model: Path, gate_set: GateSet) -> dict:
    from nlp_models.headline.predictor import HeadlinePredictor
    from training.headline.evaluate import evaluate_constrained

    strategy = HeadlinePredictor.load(model).default_strategy  # what serving uses
    return evaluate_constrained(str(gate_set.path), strategy, str(model), lang=gate_set.option)


def _generator_sets(task: str) -> Callable[[str | None, str], list[GateSet]]:
    """``<shared>/<task>/<lang>/<split>.jsonl`` and, for dev, the held-out-source dev set."""
    def sets(lang: str | None, split: str) -> list[GateSet]:
        lang = lang or "en"
        found = []
        root = _shared(task)
        if root and (root / lang / f"{split}.jsonl").exists():
            found.append(GateSet(f"{task}/{lang}/{split}", root / lang / f"{split}.jsonl", lang))
        ood = EXTRA_DATA / task / lang / "dev_ood.jsonl"
        if split == "dev" and ood.exists():
            found.append(GateSet(f"{task}/{lang}/dev_ood", ood, lang))
        return found
    return sets


def _shared(task: str) -> Path | None:
    try:
        root = data_dir() / task
    except SystemExit:  # no shared datasets on this machine
        return None
    return root if root.is_dir() else None


#: The gate of every served model (names and size budgets: nlp_models/registry.py).
MODELS: dict[str, ModelSpec] = {spec.name: spec for spec in (
    ModelSpec(registry.POS.name, registry.POS.max_mb, Rule("accuracy", 0.005), _load_pos,
              _pos_sets, _evaluate_pos, gate_size=2000),  # whole dev sets: seconds
    ModelSpec(registry.HASHTAG.name, registry.HASHTAG.max_mb,
              Rule("rouge1", 0.005, {"top_share": 0.02}), _load_hashtag,
              _generator_sets("hashtag"), _evaluate_hashtag),
    ModelSpec(registry.HEADLINE.name, registry.HEADLINE.max_mb,
              Rule("rouge1.f", 0.005, {"degenerate": 0.01, "unsupported": 0.02}),
              _headline_loader(constrained=False), _generator_sets("headline"),
              _evaluate_headline),
    ModelSpec(registry.CONSTRAINED.name, registry.CONSTRAINED.max_mb,
              Rule("rouge1.f", 0.005, {"degenerate": 0.01, "unsupported": 0.02}),
              _headline_loader(constrained=True), _generator_sets("headline"),
              _evaluate_constrained),
)}


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
