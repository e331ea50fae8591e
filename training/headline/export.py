"""Publish a headline checkpoint as the next version of its Triton model.

    python -m training export headline --checkpoint runs/headline_en_xl-cc/best.pt
    python -m training export constrained-headline --checkpoint runs/constrained_en_mixed/best.pt

Full generators go to `headline_generator`, He et al. and Seq2BF checkpoints to
`constrained_headline_generator`, as headline_<lang>.pt (training/publish.py).
"""

from __future__ import annotations

from pathlib import Path

from training.headline.predictor import HeadlinePredictor
from training.publish import publish

MAX_MB = 35  # shipped-weights budget per model
MODELS = {"headline": "headline_generator",
          "constrained-headline": "constrained_headline_generator"}


def export(checkpoint: str, task: str, repository: str) -> Path:
    predictor = HeadlinePredictor.load(checkpoint)  # also refuses a file Triton could not load
    if (predictor.kind == "generator") != (task == "headline"):
        raise SystemExit(f"{checkpoint} is a {predictor.kind} checkpoint, not for {task}")
    return publish(checkpoint, Path(repository) / MODELS[task], f"headline_{predictor.lang}.pt",
                   MAX_MB)
