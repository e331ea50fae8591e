"""The refresh path: publish a checkpoint as the next served version, switch, roll back.

    python -m training publish pos_tagger --checkpoint runs/pos_dcnn/best.pt [--force]
        [--repository model_repository] [--triton HOST:PORT] [--no-switch]
    python -m training switch pos_tagger [--triton HOST:PORT]
    python -m training rollback pos_tagger [--to 2] [--triton HOST:PORT] [--no-switch]

The CLI's Triton is the configured one (``NLP_TRITON_HOST:NLP_TRITON_HTTP_PORT``) unless
``--triton`` names another; the library functions ask Triton only when ``Options.triton``
is set.

Publish, step by step (progress on stderr, one JSON object as the last stdout line):

0. **Reference**: ask Triton which version it serves. That version is what the candidate
   is gated against and built from; only when Triton does not answer is it the newest
   version on disk (the result's ``reference`` says which).
1. **Load** the checkpoint the way the model's model.py will (refused: exit 1, if it does
   not load, is for another model or language head set, or is over the size budget).
2. **Gate** (training/gate.py): score the candidate and the reference version on the gate
   data with the evaluation code of ``python -m training evaluate``; refuse (exit 3) a
   candidate worse beyond the tolerance, unless ``--force``.
3. **Stage** version N+1 (one above every number used) in ``.staging-*`` inside the model
   directory: every file of the reference version (model.py, the other language's
   weights, blocklists), the new weights, ``nlp_models.zip`` (the checkout's serving
   code, which the gate ran: the version keeps it whatever the checkout holds later) and
   ``card.json`` (provenance, metrics, size, date, ``served_since: null``); fsync;
   **rename** into place. A change of serving code alone is published the same way, with
   the serving weights as the checkpoint. A crash before the rename leaves a staging
   directory that Triton ignores and the next publish deletes; after it, a complete
   version.
4. **Switch** (unless ``--no-switch``): ask Triton, over its admin-key-protected API, to
   load the model and wait until N+1 is the version serving; the card's ``served_since``
   records it. Requests in flight finish on N. If N+1 fails to load, N keeps serving, N+1
   is retired and publish exits 1. If Triton does not answer, N+1 stays on disk and
   publish exits 4, saying how to switch later (``switch``, or a Triton restart).
5. **Prune**: keep the newest ``--keep`` versions (default 2), the serving one and the
   last one that served before it (the one a rollback returns to); delete older and
   retired ones.

Rollback goes back to the newest version below the serving one that has served (a
version staged but never switched to is skipped), retires every version above it
(renamed ``retired-<N>``, which Triton does not read) and asks Triton to load, so the
target serves again -- also after a restart, since the repository itself now says so.
"""

from __future__ import annotations

import json
import shutil
import sys
from dataclasses import dataclass
from pathlib import Path

from nlp_models import registry
from services.model_control import ModelControl, ModelControlError, TritonUnreachable
from services.settings import Settings
from training.gate import (
    Checkpoint,
    GateSet,
    ModelSpec,
    Unloadable,
    judge,
    score_sets,
    spec,
)
from training.provenance import file_entry, git_commit, now, read_run
from training.repository import CARD, REPOSITORY, SERVING_CODE, Busy, ModelDir, bundle_serving_code

EXIT_PUBLISHED, EXIT_ERROR, EXIT_REFUSED, EXIT_NOT_SWITCHED = 0, 1, 3, 4
NEWSROOM_SET = "newsroom holdout"  # an adapted model's own newest pairs (gate.py)


class PublishError(Exception):
    """Nothing was published (or the new version did not come up); the message says why."""


@dataclass(frozen=True)
class Options:
    repository: Path = REPOSITORY
    triton: str | None = None  # host:port of Triton's HTTP API; None: the repository alone
    switch: bool = True  # with ``triton``: make it serve the new version (False: stage only)
    force: bool = False
    gate_data: tuple[GateSet, ...] = ()  # overrides the model's default gate sets
    gate_size: int | None = None  # first N examples of each gate set; None: the model's
    keep: int = 2
    command: str | None = None  # the command line, recorded in the model card


@dataclass(frozen=True)
class Reference:
    """The version a change is measured against and built from: the one Triton reports
    serving, or the newest on disk when no Triton was asked or none answered."""

    version: int | None
    source: str  # "triton" or "disk"


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
    reference = _reference(mdir, options)
    serving = reference.version
    result: dict = {"model": spec.name, "checkpoint": str(checkpoint), "published": False,
                    "version": None, "previous_version": serving,
                    "reference": reference.source, "switched": False}
    candidate = _load(spec, checkpoint)
    result.update(file=candidate.filename, lang=candidate.lang)
    if candidate.decoding:
        result["decoding_rules"] = list(candidate.decoding)
    served = _served_file(mdir, serving, candidate.filename)
    if served is not None:
        _check_same_kind(spec, candidate.signature, served)
    scores = _gate_scores(spec, candidate, checkpoint, served, options)
    newsroom = NEWSROOM_SET if candidate.holdout else None
    widened = frozenset(name for name in scores if newsroom and not name.startswith(newsroom))
    failures = judge(spec.rule, scores, widened)
    result["gate"] = {"primary": spec.rule.primary, "tolerance": spec.rule.tolerance,
                      "safety": spec.rule.safety, "passed": not failures,
                      **({"adapted": {"newsroom_set": newsroom,
                                      "holdout": str(candidate.holdout),
                                      "generic_tolerance": spec.rule.adapted_tolerance}}
                         if newsroom else {}),
                      "reference": reference.source,
                      "serving": str(served) if served else None, "sets": scores}
    if failures and not options.force:
        result["reason"] = "the gate refused the candidate: " + "; ".join(failures)
        return result
    if failures:
        progress(f"{spec.name}: gate failures overridden by --force: {'; '.join(failures)}")
    version = _stage_and_commit(spec, mdir, checkpoint, candidate.filename, serving, result,
                                options)
    result.update(published=True, version=version)
    if options.triton and options.switch:
        try:
            _switch(mdir, version, options)
        except NotSwitched as exc:
            result.update(serving=serving, reason=str(exc))
            return result
        result.update(serving=version, switched=True)
    else:
        result["serving"] = serving if reference.source == "triton" else None
        progress(f"{spec.name}: version {version} is staged only (--no-switch); Triton "
                 f"still serves {serving if reference.source == 'triton' else 'what it served'}"
                 f" until it loads {spec.name} (python -m training switch {spec.name})")
    keep = {v for v in (serving, _last_served(mdir, below=version)) if v is not None}
    result["removed"] = mdir.prune(max(options.keep, 2), frozenset(keep))
    return result


def switch(model: str, options: Options = Options()) -> dict:
    """Make Triton serve the newest version on disk (one staged by ``publish --no-switch``
    or while Triton was down) and record that it served."""
    mdir = _model_dir(model, options.repository)
    if not options.triton:
        raise PublishError("switch needs a Triton address")
    newest = mdir.newest()
    if newest is None:
        raise PublishError(f"{mdir.path} has no version to serve")
    try:
        with mdir.locked():
            before = _reference(mdir, options).version
            _switch(mdir, newest, options)
    except Busy as exc:
        raise PublishError(str(exc)) from exc
    except NotSwitched as exc:
        raise PublishError(str(exc)) from exc
    return {"model": mdir.name, "switched": True, "serving": newest, "previous_version": before}


def rollback(model: str, to: int | None = None, options: Options = Options()) -> dict:
    """Serve an earlier version again: retire every version above it, then load."""
    mdir = _model_dir(model, options.repository)
    try:
        with mdir.locked():
            return _rollback(mdir, to, options)
    except Busy as exc:
        raise PublishError(str(exc)) from exc


def _rollback(mdir: ModelDir, to: int | None, options: Options) -> dict:
    versions = mdir.versions()
    current = _reference(mdir, options).version
    target = to if to is not None else _last_served(mdir, below=current)
    if target is None or current is None or target not in versions or target >= current:
        raise PublishError(f"{mdir.name}: no earlier version {'' if to is None else f'{to} '}to "
                           f"roll back to (versions on disk: {versions or 'none'}; serving "
                           f"{current}; an earlier one must have served, or be named with "
                           "--to)")
    if mdir.served(target) is False:
        progress(f"{mdir.name}: version {target} never served; rolling back to it as asked")
    retired = [v for v in versions if v > target]
    for v in reversed(retired):
        mdir.retire(v)
        progress(f"{mdir.name}: retired version {v}")
    result = {"model": mdir.name, "rolled_back": True, "version": target,
              "previous_version": current, "retired": retired, "serving": None,
              "switched": False}
    if options.triton and options.switch:
        try:
            _load_and_wait(mdir, target, options)
        except NotSwitched as exc:
            raise PublishError(f"rolled back on disk but Triton did not switch: {exc}"
                               ) from exc
        result.update(serving=target, switched=True)
    return result


def versions(model: str, options: Options = Options()) -> dict:
    """What ``inspect versions`` prints for one model: the version Triton serves (None
    when it does not answer or serves none), and each version on disk with its state:
    ``serving``, ``served`` (earlier), ``never served`` (published without a switch, or
    Triton did not answer), or ``served (before records)`` (a card older than the
    ``served_since`` record)."""
    mdir = _model_dir(model, options.repository)
    serving = None
    if options.triton:
        try:
            serving = ModelControl(options.triton, Settings.from_env()).serving_version(model)
        except ModelControlError as exc:
            progress(f"{model}: {exc}")
    rows = []
    for v in mdir.versions():
        card = mdir.version_dir(v) / CARD
        record = json.loads(card.read_text()) if card.exists() else {}
        served = mdir.served(v)
        state = ("serving" if v == serving else "served" if served
                 else "never served" if served is False else "served (before records)")
        rows.append({"version": v, "state": state,
                     "published_at": record.get("published_at"),
                     "served_since": record.get("served_since")})
    return {"serving": serving, "newest_on_disk": mdir.newest(), "versions": rows}


class NotSwitched(Exception):
    """The version is on disk but Triton was not made to serve it; the message says why
    and how to switch later."""


def _reference(mdir: ModelDir, options: Options) -> Reference:
    """Ask Triton (when given) which version it serves; fall back to the newest on disk."""
    on_disk = mdir.newest()
    if not options.triton:
        return Reference(on_disk, "disk")
    control = ModelControl(options.triton, Settings.from_env())
    try:
        served = control.serving_version(mdir.name)
    except ModelControlError as exc:
        progress(f"{mdir.name}: {exc}; the reference is the newest version on disk, "
                 f"{on_disk}")
        return Reference(on_disk, "disk")
    if served is None or served not in mdir.versions():
        progress(f"{mdir.name}: Triton at {options.triton} serves "
                 f"{'no version' if served is None else f'version {served}'} of this "
                 f"repository; the reference is the newest version on disk, {on_disk}")
        return Reference(on_disk, "disk")
    mdir.mark_served(served, now())
    if served != on_disk:
        progress(f"{mdir.name}: Triton serves version {served}; newer on disk, never "
                 f"switched to: {[v for v in mdir.versions() if v > served]}")
    return Reference(served, "triton")


def _last_served(mdir: ModelDir, below: int | None) -> int | None:
    """The newest version under ``below`` that served (or predates the served record)."""
    if below is None:
        return None
    earlier = [v for v in mdir.versions() if v < below and mdir.served(v) is not False]
    return earlier[-1] if earlier else None


# Steps ------------------------------------------------------------------------------------
def _spec(model: str) -> ModelSpec:
    if model not in registry.MODELS:
        raise PublishError(f"unknown model {model!r}; choose from {', '.join(registry.MODELS)}")
    return spec(model)


def _model_dir(model: str, repository: Path) -> ModelDir:
    try:
        return ModelDir.of(model, repository)
    except FileNotFoundError as exc:
        raise PublishError(str(exc)) from exc


def _gate_scores(spec: ModelSpec, candidate: Checkpoint, checkpoint: Path,
                 served: Path | None, options: Options) -> dict:
    sets = [GateSet(s.name, s.path, s.option or candidate.lang or "")
            for s in options.gate_data] or spec.sets(candidate.lang, "dev")
    if candidate.holdout:  # adapted: its newsroom first, then the generic (or given) sets
        sets = [GateSet(NEWSROOM_SET, candidate.holdout, candidate.lang or ""), *sets]
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
    if serving is not None and not (mdir.version_dir(serving) / "model.py").exists():
        raise PublishError(f"{mdir.path} version {serving} has no model.py to build the new "
                           "version from")
    version = mdir.next_version()
    staging = mdir.stage(version)
    if serving is None:  # the model's first version: its model.py from the registry
        progress(f"{spec.name}: staging its first version {version} in {staging.name}")
        (staging / "model.py").write_text(registry.MODELS[spec.name].model_py())
    else:
        progress(f"{spec.name}: staging version {version} in {staging.name} from version "
                 f"{serving}")
        for item in mdir.version_dir(serving).iterdir():
            if item.is_file() and item.name not in (filename, CARD, SERVING_CODE):
                shutil.copy2(item, staging / item.name)
    shutil.copy2(checkpoint, staging / filename)
    bundle_serving_code(staging)  # the code the gate just ran, frozen with the weights
    card = _card(spec, mdir, serving, version, checkpoint, filename, result, options)
    (staging / CARD).write_text(json.dumps(card, indent=1, ensure_ascii=False) + "\n")
    target = mdir.commit(staging, version)
    progress(f"{spec.name}: version {version} is in place ({target})")
    return version


def _card(spec: ModelSpec, mdir: ModelDir, serving: int | None, version: int,
          checkpoint: Path, filename: str, result: dict, options: Options) -> dict:
    """Provenance and quality of every weights file of the new version: the new file's
    entry is built here, the others' are carried over from the serving version's card."""
    previous = mdir.version_dir(serving) / CARD if serving is not None else None
    files = (json.loads(previous.read_text()).get("files", {})
             if previous is not None and previous.exists() else {})
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
        **({"decoding_rules": result["decoding_rules"]} if "decoding_rules" in result else {}),
        "metrics": {"dev": {n: s["candidate"] for n, s in result["gate"]["sets"].items()},
                    "test": {n: s["candidate"] for n, s in test.items()}},
    }
    return {"model": spec.name, "version": version, "previous_version": serving,
            "published_at": now(), "command": options.command,
            "code": git_commit(),
            "forced": options.force and not result["gate"]["passed"],
            "gate": {k: v for k, v in result["gate"].items() if k != "sets"},
            "served_since": None,  # set when Triton first confirms this version serving
            "files": files}


def _switch(mdir: ModelDir, version: int, options: Options) -> None:
    """Load through Triton. If Triton is unreachable the version stays staged (NotSwitched
    says how to switch later); if it fails to load, it is retired so disk matches what
    serves."""
    try:
        _load_and_wait(mdir, version, options)
    except ModelControlError as exc:
        mdir.retire(version)
        raise PublishError(f"version {version} was written but did not start serving "
                           f"({exc}); it is retired and the previous version still serves"
                           ) from exc


def _load_and_wait(mdir: ModelDir, version: int, options: Options) -> None:
    """Ask Triton to load ``mdir``'s model, wait until ``version`` alone serves, record it."""
    control = ModelControl(options.triton or "", Settings.from_env())
    progress(f"{mdir.name}: asking Triton at {options.triton} to load version {version}")
    try:
        control.load(mdir.name)
    except TritonUnreachable as exc:
        raise NotSwitched(f"{exc}: version {version} is on disk but not serving; Triton "
                          f"loads it when asked (python -m training switch {mdir.name} "
                          f"--triton {options.triton}) or when it restarts") from exc
    control.wait_serving(mdir.name, str(version))
    mdir.mark_served(version, now())
    progress(f"{mdir.name}: Triton serves version {version}")
