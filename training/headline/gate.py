"""The headline generators' gates (``python -m training publish headline_generator`` and
``constrained_headline_generator``): ROUGE-1 F on the dev sets at most 0.5 points below the
serving version's; degenerate headlines at most 1 point and unsupported names or numbers at
most 2 points above. An adapted file is judged first on its newsroom's held-out pairs."""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path

from training.gate import Checkpoint, GateSet, ModelGate, Rule, Unloadable, generator_sets

RULE = Rule("rouge1.f", 0.005, {"degenerate": 0.01, "unsupported": 0.02})


def loader(constrained: bool) -> Callable[[Path], Checkpoint]:
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


def evaluate_full(model: Path, gate_set: GateSet) -> dict:
    from training.headline.evaluate import evaluate_headline

    return evaluate_headline(str(gate_set.path), str(model), lang=gate_set.option)


def evaluate_constrained(model: Path, gate_set: GateSet) -> dict:
    from nlp_models.headline.predictor import HeadlinePredictor
    from training.headline.evaluate import evaluate_constrained

    strategy = HeadlinePredictor.load(model).default_strategy  # what serving uses
    return evaluate_constrained(str(gate_set.path), strategy, str(model), lang=gate_set.option)


FULL = ModelGate(RULE, loader(constrained=False), generator_sets("headline"), evaluate_full)
CONSTRAINED = ModelGate(RULE, loader(constrained=True), generator_sets("headline"),
                        evaluate_constrained)
