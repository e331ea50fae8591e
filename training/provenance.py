"""Where a model came from: the run record written by training, read back by publish.

Every ``python -m training train ...`` writes ``runs/<name>/run.json`` when it starts:
the command line, the config file and its parsed content, each data file with its size
and sha256, and the git commit of the code (with ``dirty`` when the working tree had
uncommitted changes). ``python -m training publish`` copies it into the model card next
to the served weights, so an indexed document's model version leads back to its data
and code.
"""

from __future__ import annotations

import hashlib
import json
import subprocess
import sys
from collections.abc import Iterable
from datetime import UTC, datetime
from pathlib import Path

from training.paths import REPO_ROOT

RUN_RECORD = "run.json"


def sha256(path: str | Path) -> str:
    digest = hashlib.sha256()
    with open(path, "rb") as f:
        for block in iter(lambda: f.read(1 << 20), b""):
            digest.update(block)
    return digest.hexdigest()


def git_commit() -> dict:
    """``{"commit": sha, "dirty": bool}`` of the repository, or nulls outside git. ``dirty``:
    a tracked file outside model_repository/ differs from the commit (publishing itself
    writes there, e.g. the serving version's ``served_since``, before the new card)."""
    def git(*args: str) -> str:
        return subprocess.run(["git", *args], cwd=REPO_ROOT, capture_output=True, text=True,
                              check=True, timeout=30).stdout.strip()
    try:
        commit = git("rev-parse", "HEAD")
        dirty = bool(git("status", "--porcelain", "--untracked-files=no", "--", ".",
                         ":(exclude)model_repository"))
    except (OSError, subprocess.SubprocessError):
        return {"commit": None, "dirty": None}
    return {"commit": commit, "dirty": dirty}


def file_entry(path: str | Path) -> dict:
    """Path, size and sha256 (``missing`` instead when the file is not there: training
    then fails with its own message about it)."""
    p = Path(path)
    if not p.is_file():
        return {"path": _shown(p), "missing": True}
    return {"path": _shown(p), "bytes": p.stat().st_size, "sha256": sha256(p)}


def now() -> str:
    return datetime.now(UTC).isoformat(timespec="seconds").replace("+00:00", "Z")


def record_run(run_dir: Path, config_path: str | Path | None, config: dict,
               data_files: Iterable[str | Path]) -> dict:
    """Write ``run_dir/run.json`` (before training starts, so a crashed run has one);
    ``config_path`` None: the options are the command line's (``config``)."""
    record = {
        "command": "python -m training " + " ".join(sys.argv[1:]) if sys.argv[1:] else None,
        "config_file": _shown(Path(config_path)) if config_path else None,
        "config": config,
        "data": [file_entry(p) for p in dict.fromkeys(str(p) for p in data_files)],
        "code": git_commit(),
        "started_at": now(),
    }
    (run_dir / RUN_RECORD).write_text(json.dumps(record, indent=1, default=str) + "\n")
    return record


def read_run(checkpoint: Path) -> dict | None:
    """The run record next to a checkpoint, if training wrote one."""
    path = checkpoint.parent / RUN_RECORD
    return json.loads(path.read_text()) if path.exists() else None


def _shown(path: Path) -> str:
    """Paths inside the repository relative to it; others as given."""
    try:
        return str(path.resolve().relative_to(REPO_ROOT))
    except ValueError:
        return str(path)


def write_derived(checkpoint: str, out: str, state: dict, meta: dict, **record) -> Path:
    """`state` (loaded from `checkpoint`) with `meta` merged into its meta, written to `out`,
    and beside it the run.json that makes the file traceable: the command, the checkpoint
    it derives from, the code, and `record`: how a file derived from another checkpoint (a
    trained clause picker, new picker rules, a lead rule) stays traceable to both."""
    import torch

    path = Path(out)
    path.parent.mkdir(parents=True, exist_ok=True)
    state["meta"] = {**state.get("meta", {}), **meta, "run": path.parent.name}
    torch.save(state, path)
    record = {"command": "python -m training " + " ".join(sys.argv[1:]), **record,
              "derived_from": file_entry(checkpoint), "code": git_commit(), "finished_at": now()}
    (path.parent / "run.json").write_text(json.dumps(record, indent=1, ensure_ascii=False) + "\n")
    return path
