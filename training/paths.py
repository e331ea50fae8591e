"""Where training finds the shared datasets and the repository root."""

from __future__ import annotations

import os
from pathlib import Path

REPO_ROOT = Path(__file__).resolve().parent.parent


def data_dir() -> Path:
    """The shared datasets: $NLP_DATA_DIR, else ../shared/data next to the repository."""
    path = Path(os.environ.get("NLP_DATA_DIR", REPO_ROOT.parent / "shared" / "data"))
    if not path.is_dir():
        raise SystemExit(
            f"dataset directory {path} not found; set NLP_DATA_DIR to the folder holding pos/"
        )
    return path
