"""The POS tagger's gate (``python -m training publish pos_tagger``): accuracy on the PTB
and ARK dev sets may fall at most 0.5 points below the serving version's."""

from __future__ import annotations

from pathlib import Path

from training.gate import Checkpoint, GateSet, ModelGate, Rule, shared


def load(path: Path) -> Checkpoint:
    from nlp_models.pos.predictor import PosPredictor

    tagsets = sorted(PosPredictor(path).tagsets)
    return Checkpoint("pos_tagger.pt", None, {"tagsets": tagsets})


def sets(lang: str | None, split: str) -> list[GateSet]:
    files = ({"ritter/dev": "ptb", "ark_oct27/test": "ark"} if split == "dev" else
             {"ritter/test": "ptb", "npschat/test": "ptb", "ark_daily547/test": "ark"})
    root = shared("pos")
    return [GateSet(f"{rel} ({tagset})", root / f"{rel}.conll", tagset)
            for rel, tagset in files.items()] if root else []


def evaluate(model: Path, gate_set: GateSet) -> dict:
    from training.pos.evaluate import evaluate

    return evaluate(str(gate_set.path), gate_set.option, str(model))


GATE = ModelGate(Rule("accuracy", 0.005), load, sets, evaluate, gate_size=2000)  # whole sets
