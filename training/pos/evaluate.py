"""Token accuracy of a tagger on a CoNLL file (gold tokenization).

    python -m training evaluate pos --data FILE.conll --tagset ptb|ark [--model PATH]
"""

from __future__ import annotations

from pathlib import Path

import torch

from nlp_models.pos.predictor import PosPredictor
from training.pos.data import read_conll
from training.repository import shipped


def shipped_checkpoint() -> Path:
    """The serving version's checkpoint in the repository's model_repository."""
    return shipped("pos_tagger", "pos_tagger.pt")


def evaluate(data: str, tagset: str, model: str | None = None) -> dict:
    torch.set_num_threads(1)
    path = Path(model) if model else shipped_checkpoint()
    predictor = PosPredictor(path)
    if tagset not in predictor.tagsets:
        raise SystemExit(f"{path} has no {tagset!r} head (it has {predictor.tagsets})")
    sentences = read_conll(data, tagset)
    predicted = predictor.tag_tokens([s.tokens for s in sentences])
    correct = total = 0
    for s, p in zip(sentences, predicted, strict=True):
        correct += sum(g == t for g, t in zip(s.tags, p[tagset], strict=True))
        total += len(s.tags)
    return {"accuracy": correct / max(total, 1), "tokens": total, "sentences": len(sentences),
            "tagset": tagset, "data": str(data), "model": str(path)}
