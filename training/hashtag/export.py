"""Publish a trained checkpoint as the next version of the Triton `hashtag_generator`.

    python -m training export hashtag --checkpoint runs/hashtag_en_soft_manhattan/best.pt

One Triton model serves both languages: version N+1 gets every file of version N (model.py,
blocklist.txt, the other language's checkpoint), with this checkpoint as hashtag_<lang>.pt.
(A newest version that holds no checkpoint yet is filled in place.) Triton, in explicit
model-control mode, serves it after the next load request.
"""

from __future__ import annotations

import shutil
from pathlib import Path

from training.hashtag.predictor import HashtagPredictor

MAX_BYTES = 25 * 1024 * 1024  # shipped-weights budget per language


def export(checkpoint: str, repository: str) -> Path:
    size = Path(checkpoint).stat().st_size
    if size > MAX_BYTES:
        raise SystemExit(f"{checkpoint} is {size / 1e6:.1f} MB, over the 25 MB budget")
    lang = HashtagPredictor(checkpoint).lang  # also refuses a file Triton could not load
    model_dir = Path(repository) / "hashtag_generator"
    versions = sorted(int(p.name) for p in model_dir.iterdir() if p.name.isdigit())
    if not versions:
        raise SystemExit(f"{model_dir} has no version directory with a model.py to start from")
    newest = model_dir / str(versions[-1])
    if not list(newest.glob("hashtag_*.pt")):
        target = newest
    else:
        target = model_dir / str(versions[-1] + 1)
        target.mkdir()
        for other in newest.iterdir():
            if other.is_file() and other.name != f"hashtag_{lang}.pt":
                shutil.copy2(other, target / other.name)
    shutil.copy2(checkpoint, target / f"hashtag_{lang}.pt")
    return target
