"""Publish a trained checkpoint as the next version of the Triton `hashtag_generator`.

    python -m training export hashtag --checkpoint runs/hashtag_en_soft_manhattan/best.pt

One Triton model serves both languages; the checkpoint becomes hashtag_<lang>.pt of a new
version that keeps everything else (training/publish.py).
"""

from __future__ import annotations

from pathlib import Path

from training.hashtag.predictor import HashtagPredictor
from training.publish import publish

MAX_MB = 25  # shipped-weights budget per language


def export(checkpoint: str, repository: str) -> Path:
    lang = HashtagPredictor(checkpoint).lang  # also refuses a file Triton could not load
    return publish(checkpoint, Path(repository) / "hashtag_generator", f"hashtag_{lang}.pt",
                   MAX_MB)
