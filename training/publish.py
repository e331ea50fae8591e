"""The refresh path: publish a checkpoint as the next served version, or roll back.

    python -m training publish pos_tagger --checkpoint runs/pos_dcnn/best.pt \\
        [--repository model_repository] [--triton 127.0.0.1:8000] [--force]
    python -m training rollback pos_tagger [--to 2] [--triton 127.0.0.1:8000]

Publish, step by step (progress on stderr, one JSON object as the last stdout line):

1. **Load** the checkpoint the way the model's model.py will (refused: exit 1, if it does
   not load, is for another model or language head set, or is over the size budget).
2. **Gate** (training/gate.py): score the candidate and the serving version on the gate
   data with the evaluation code of ``python -m training evaluate``; refuse (exit 3) a
   candidate worse beyond the tolerance, unless ``--force``.
3. **Stage** version N+1 in ``.staging-*`` inside the model directory: every file of the
   serving version (model.py, the other language's weights, blocklists), the new weights,
   ``nlp_models.zip`` (the checkout's serving code, which the gate ran: the version keeps
   it whatever the checkout holds later) and ``card.json`` (provenance, metrics, size,
   date); fsync; **rename** into place. A change of serving code alone is published the
   same way, with the serving weights as the checkpoint.
   A crash before the rename leaves a staging directory that Triton ignores and the next
   publish deletes; after it, a complete version.
4. **Switch** (with ``--triton``): ask Triton, over its admin-key-protected API, to load
   the model and wait until N+1 is the version serving. Requests in flight finish on N.
   If N+1 fails to load, N keeps serving, N+1 is retired and publish exits 1.
5. **Prune**: keep the newest ``--keep`` versions (default 2: the serving one and the one
   a rollback returns to); delete older and retired ones.

Rollback retires every version above the target (renamed ``retired-<N>``, which Triton
does not read) and asks Triton to load, so the target serves again -- also after a
restart, since the repository itself now says so.
"""

from __future__ import annotations

import json
import shutil
import sys
from dataclasses import dataclass
from pathlib import Path

from services.model_control import ModelControl, ModelControlError
from services.settings import Settings
from training.gate import (
    MODELS,
    Checkpoint,
    GateSet,
    ModelSpec,
    Unloadable,
    judge,
    score_sets,
)
from training.provenance import file_entry, git_commit, now, read_run
from training.repository import REPOSITORY, SERVING_CODE, Busy, ModelDir, bundle_serving_code

CARD = "card.json"
EXIT_PUBLISHED, EXIT_ERROR, EXIT_REFUSED = 0, 1, 3


class PublishError(Exception):
    """Nothing was published (or the new version did not come up); the message says why."""


@dataclass(frozen=True)
class Options:
    repository: Path = REPOSITORY
    triton: str | None = None  # host:port of Triton's HTTP API; None: repository only
    force: bool = False
    gate_data: tuple[GateSet, ...] = ()  # overrides the model's default gate sets
    gate_size: int | None = None  # first N examples of each gate set; None: the model's
    keep: int = 2
    command: str | None = None  # the command line, recorded in the model card


def progress(message: str) -> None:
    print(message, file=sys.stderr, flush=True)


def publish(model: str, checkpoint: str | Path, options: Options = Options()) -> dict:
    """Publish ``checkpoint`` as the next version of ``model``; the result is the JSON the
    CLI prints. Raises PublishError when nothing could be published."""
    spec = _spec(model)
    mdir = _model_dir(model, options.repository)
    try:
        with mdir.locked():
            return _publish(spec, mdir, Path(checkpoint), options)
    except Busy as exc:
        raise PublishError(str(exc)) from exc


def _publish(spec: ModelSpec, mdir: ModelDir, checkpoint: Path, options: Options) -> dict:
    serving = mdir.serving()
    result: dict = {"model": spec.name, "checkpoint": str(checkpoint), "published": False,
                    "version": None, "previous_version": serving}
    candidate = _load(spec, checkpoint)
    result.update(file=candidate.filename, lang=candidate.lang)
    served = _served_file(mdir, serving, candidate.filename)
    if served is not None:
        _check_same_kind(spec, candidate.signature, served)
    scores = _gate_scores(spec, candidate, checkpoint, served, options)
    failures = judge(spec.rule, scores)
    result["gate"] = {"primary": spec.rule.primary, "tolerance": spec.rule.tolerance,
                      "safety": spec.rule.safety, "passed": not failures,
                      "serving": str(served) if served else None, "sets": scores}
    if failures and not options.force:
        result["reason"] = "the gate refused the candidate: " + "; ".join(failures)
        return result
    if failures:
        progress(f"{spec.name}: gate failures overridden by --force: {'; '.join(failures)}")
    version = _stage_and_commit(spec, mdir, checkpoint, candidate.filename, serving, result,
                                options)
    result.update(published=True, version=version)
    if options.triton:
        _switch(mdir, version, options)
        result["serving"] = version
    result["removed"] = mdir.prune(max(options.keep, 2))
    return result


def rollback(model: str, to: int | None = None, options: Options = Options()) -> dict:
    """Serve an earlier version again: retire every version above it, then load."""
    mdir = _model_dir(model, options.repository)
    try:
        with mdir.locked():
            return _rollback(mdir, to, options)
    except Busy as exc:
        raise PublishError(str(exc)) from exc


def _rollback(mdir: ModelDir, to: int | None, options: Options) -> dict:
    versions, serving = mdir.versions(), mdir.serving()
    earlier = [v for v in versions if serving is not None and v < serving]
    target = to if to is not None else (earlier[-1] if earlier else None)
    if target is None or target not in earlier:
        raise PublishError(f"{mdir.name}: no earlier version {'' if to is None else to} to "
                           f"roll back to (versions on disk: {versions or 'none'}; serving "
                           f"{serving})")
    retired = [v for v in versions if v > target]
    for v in reversed(retired):
        mdir.retire(v)
        progress(f"{mdir.name}: retired version {v}")
    if options.triton:
        control = ModelControl(options.triton, Settings.from_env())
        try:
            control.load(mdir.name)
            control.wait_serving(mdir.name, str(target))
        except ModelControlError as exc:
            raise PublishError(f"rolled back on disk but Triton did not switch: {exc}") from exc
        progress(f"{mdir.name}: Triton serves version {target}")
    return {"model": mdir.name, "rolled_back": True, "version": target,
            "previous_version": serving, "retired": retired,
            "serving": target if options.triton else None}


# Steps ------------------------------------------------------------------------------------
def _spec(model: str) -> ModelSpec:
    if model not in MODELS:
        raise PublishError(f"unknown model {model!r}; choose from {', '.join(MODELS)}")
    return MODELS[model]


def _model_dir(model: str, repository: Path) -> ModelDir:
    try:
        return ModelDir.of(model, repository)
    except FileNotFoundError as exc:
        raise PublishError(str(exc)) from exc


def _gate_scores(spec: ModelSpec, candidate: Checkpoint, checkpoint: Path,
                 served: Path | None, options: Options) -> dict:
    sets = [GateSet(s.name, s.path, s.option or candidate.lang or "")
            for s in options.gate_data] or spec.sets(candidate.lang, "dev")
    if not sets:
        raise PublishError(f"no gate data for {spec.name} on this machine (the shared "
                           "datasets are not found: set NLP_DATA_DIR, or pass --gate-data "
                           "FILE)")
    missing = [str(s.path) for s in sets if not s.path.is_file()]
    if missing:
        raise PublishError(f"gate data not found: {', '.join(missing)}")
    size = options.gate_size or spec.gate_size
    progress(f"{spec.name}: gate on {', '.join(s.name for s in sets)} "
             f"(first {size} examples each)")
    try:
        return score_sets(spec, {"candidate": checkpoint, "serving": served}, sets, size)
    except (SystemExit, Exception) as exc:  # noqa: BLE001 - report, publish nothing
        raise PublishError(f"the gate evaluation failed: {exc}") from exc


def _load(spec: ModelSpec, checkpoint: Path) -> Checkpoint:
    if not checkpoint.is_file():
        raise PublishError(f"{checkpoint} does not exist")
    size = checkpoint.stat().st_size
    if size > spec.max_mb * 1024 * 1024:
        raise PublishError(f"{checkpoint} is {size / 2**20:.1f} MiB, over the {spec.max_mb} "
                           f"MiB budget of {spec.name}")
    try:
        return spec.load(checkpoint)
    except (Unloadable, SystemExit, Exception) as exc:  # noqa: BLE001 - any load failure
        raise PublishError(f"{checkpoint} does not load as a {spec.name} checkpoint: "
                           f"{exc}") from exc


def _served_file(mdir: ModelDir, serving: int | None, filename: str) -> Path | None:
    if serving is None:
        return None
    path = mdir.version_dir(serving) / filename
    return path if path.exists() else None


def _check_same_kind(spec: ModelSpec, signature: dict, served: Path) -> None:
    """The candidate must fit the serving model.py as the served file does (same heads,
    same kind and language)."""
    theirs = spec.load(served).signature
    if signature != theirs:
        raise PublishError(f"the checkpoint has {signature}, the serving version "
                           f"{served.parent.name} has {theirs}: wrong architecture for "
                           f"{spec.name}'s model.py")


def _stage_and_commit(spec: ModelSpec, mdir: ModelDir, checkpoint: Path, filename: str,
                      serving: int | None, result: dict, options: Options) -> int:
    if serving is None or not (mdir.version_dir(serving) / "model.py").exists():
        raise PublishError(f"{mdir.path} has no serving version with a model.py to build "
                           "the new version from")
    version = mdir.next_version()
    staging = mdir.stage(version)
    source = mdir.version_dir(serving)
    progress(f"{spec.name}: staging version {version} in {staging.name} from version "
             f"{serving}")
    for item in source.iterdir():
        if item.is_file() and item.name not in (filename, CARD, SERVING_CODE):
            shutil.copy2(item, staging / item.name)
    shutil.copy2(checkpoint, staging / filename)
    bundle_serving_code(staging)  # the code the gate just ran, frozen with the weights
    card = _card(spec, mdir, serving, version, checkpoint, filename, result, options)
    (staging / CARD).write_text(json.dumps(card, indent=1, ensure_ascii=False) + "\n")
    target = mdir.commit(staging, version)
    progress(f"{spec.name}: version {version} is in place ({target})")
    return version


def _card(spec: ModelSpec, mdir: ModelDir, serving: int, version: int, checkpoint: Path,
          filename: str, result: dict, options: Options) -> dict:
    """Provenance and quality of every weights file of the new version: the new file's
    entry is built here, the others' are carried over from the serving version's card."""
    previous = mdir.version_dir(serving) / CARD
    files = json.loads(previous.read_text()).get("files", {}) if previous.exists() else {}
    candidate = result["checkpoint"]
    test_sets = [] if options.gate_data else spec.sets(result.get("lang"), "test")
    test = score_sets(spec, {"candidate": checkpoint}, test_sets,
                      options.gate_size or spec.gate_size)
    entry = file_entry(checkpoint)
    before = files.get(filename, {})
    same = before.get("sha256") == entry["sha256"]  # the serving weights again (new code)
    files[filename] = {
        "bytes": entry["bytes"], "sha256": entry["sha256"],
        "source": before.get("source", candidate) if same else candidate,
        "training": (read_run(checkpoint) or (before.get("training") if same else None)
                     or {"note": f"no run.json next to {candidate}"}),
        **({"republished_from": serving} if same else {}),
        "metrics": {"dev": {n: s["candidate"] for n, s in result["gate"]["sets"].items()},
                    "test": {n: s["candidate"] for n, s in test.items()}},
    }
    return {"model": spec.name, "version": version, "previous_version": serving,
            "published_at": now(), "command": options.command,
            "code": git_commit(),
            "forced": options.force and not result["gate"]["passed"],
            "gate": {k: v for k, v in result["gate"].items() if k != "sets"},
            "files": files}


def _switch(mdir: ModelDir, version: int, options: Options) -> None:
    """Load through Triton; on failure retire the new version so disk matches what serves."""
    control = ModelControl(options.triton or "", Settings.from_env())
    progress(f"{mdir.name}: asking Triton at {options.triton} to load version {version}")
    try:
        control.load(mdir.name)
        control.wait_serving(mdir.name, str(version))
    except ModelControlError as exc:
        mdir.retire(version)
        raise PublishError(f"version {version} was written but did not start serving "
                           f"({exc}); it is retired and the previous version still serves"
                           ) from exc
    progress(f"{mdir.name}: Triton serves version {version}")
