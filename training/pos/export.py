"""Publish a trained checkpoint as the next version of the Triton `pos_tagger` model.

    python -m training export pos --checkpoint runs/pos_dcnn/best.pt

Creates model_repository/pos_tagger/<N+1>/ with the checkpoint and the entry point of
version N. Triton, in explicit model-control mode, picks it up on the next load request
(`POST /v2/repository/models/pos_tagger/load`); the version policy serves the newest.
"""

from __future__ import annotations

import shutil
from pathlib import Path

from training.pos.predictor import load_checkpoint

MAX_BYTES = 40 * 1024 * 1024  # the shipped-weights budget (fp16; the cluster file is not shipped)


def export(checkpoint: str, repository: str) -> Path:
    size = Path(checkpoint).stat().st_size
    if size > MAX_BYTES:
        raise SystemExit(
            f"{checkpoint} is {size / 1e6:.1f} MB, over the {MAX_BYTES // 2**20} MiB budget"
        )
    load_checkpoint(checkpoint)  # refuse a file that would fail inside Triton
    model_dir = Path(repository) / "pos_tagger"
    versions = sorted(int(p.name) for p in model_dir.iterdir() if p.name.isdigit())
    if not versions:
        raise SystemExit(f"{model_dir} has no version directory with a model.py to start from")
    target = model_dir / str(versions[-1] + 1)
    target.mkdir()
    shutil.copy2(model_dir / str(versions[-1]) / "model.py", target / "model.py")
    shutil.copy2(checkpoint, target / "pos_tagger.pt")
    return target
