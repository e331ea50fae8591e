"""Publish a checkpoint as the next version of a Triton model in the model repository.

Version N+1 gets every file of version N (model.py, blocklists, other languages'
checkpoints) with the new checkpoint under `filename`; a newest version that holds no
checkpoint yet is filled in place. Triton, in explicit model-control mode, serves the new
version after the next load request (`deploy.local` and the tests send one).
"""

from __future__ import annotations

import shutil
from pathlib import Path


def publish(checkpoint: str | Path, model_dir: Path, filename: str, max_mb: int) -> Path:
    size = Path(checkpoint).stat().st_size
    if size > max_mb * 1024 * 1024:
        raise SystemExit(f"{checkpoint} is {size / 1e6:.1f} MB, over the {max_mb} MB budget")
    versions = sorted(int(p.name) for p in model_dir.iterdir() if p.name.isdigit())
    if not versions:
        raise SystemExit(f"{model_dir} has no version directory with a model.py to start from")
    newest = model_dir / str(versions[-1])
    if not list(newest.glob("*.pt")):
        target = newest
    else:
        target = model_dir / str(versions[-1] + 1)
        target.mkdir()
        for other in newest.iterdir():
            if other.is_file() and other.name != filename:
                shutil.copy2(other, target / other.name)
    shutil.copy2(checkpoint, target / filename)
    return target


def newest_version(model_dir: Path) -> Path:
    """The highest-numbered version directory of a Triton model."""
    versions = [int(p.name) for p in model_dir.iterdir() if p.is_dir() and p.name.isdigit()]
    if not versions:
        raise FileNotFoundError(f"{model_dir} has no version directory")
    return model_dir / str(max(versions))
