"""One Triton model directory of the model repository, and the rules for changing it.

    model_repository/pos_tagger/
        config.pbtxt            version_policy: latest 1 -> the newest version serves
        2/                      the previous version, kept for a rollback
        3/                      the serving version: model.py, weights, card.json and
                                nlp_models.zip, the serving code it was published with
        retired-4/              rolled back from; ignored by Triton (not a number)
        .staging-3-12345/       a publish in progress (or a crashed one); ignored by Triton

Every change is a rename of a complete directory, so Triton (which reads version
directories when asked to load) never sees a half-written version and a crash at any
point leaves the repository servable. Version numbers are never reused: a document that
names version 4 was tagged by the one model ever published as 4.
"""

from __future__ import annotations

import fcntl
import json
import os
import shutil
import zipfile
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path

from training.paths import REPO_ROOT

REPOSITORY = REPO_ROOT / "model_repository"
SERVING_PACKAGE = REPO_ROOT / "nlp_models"
SERVING_CODE = "nlp_models.zip"  # in every version directory; model.py imports from it
RETIRED = "retired-"
STAGING = ".staging-"
LOCK = ".publish.lock"
CARD = "card.json"  # provenance and metrics of a version (training/publish.py writes it)


class Busy(RuntimeError):
    """Another publish or rollback holds the model directory."""


@dataclass(frozen=True)
class ModelDir:
    """``<repository>/<model>``: its numbered versions, retired versions and staging dirs."""

    path: Path

    @classmethod
    def of(cls, model: str, repository: str | Path = REPOSITORY) -> ModelDir:
        path = Path(repository) / model
        if not (path / "config.pbtxt").exists():
            raise FileNotFoundError(f"{path} is not a Triton model directory (no config.pbtxt)")
        return cls(path)

    @property
    def name(self) -> str:
        return self.path.name

    def versions(self) -> list[int]:
        """Numbered version directories, oldest first (what Triton can serve)."""
        return sorted(int(p.name) for p in self.path.iterdir() if p.is_dir() and p.name.isdigit())

    def retired(self) -> list[int]:
        return sorted(int(p.name[len(RETIRED):]) for p in self.path.iterdir()
                      if p.is_dir() and p.name.startswith(RETIRED)
                      and p.name[len(RETIRED):].isdigit())

    def newest(self) -> int | None:
        """The highest numbered version: the one Triton's ``latest: 1`` policy serves
        after its next load. Whether it serves now only Triton can say
        (services.model_control.ModelControl.serving_version)."""
        versions = self.versions()
        return versions[-1] if versions else None

    def served(self, version: int) -> bool | None:
        """Has ``version`` ever served? The card's ``served_since`` is set when Triton first
        confirms the version serving (publish, switch, rollback). True: it served; False:
        published but never confirmed serving; None: a card written before that record
        existed (such versions were shipped after serving, so callers count them as
        served)."""
        card = self.version_dir(version) / CARD
        if not card.exists():
            return None
        record = json.loads(card.read_text())
        return bool(record["served_since"]) if "served_since" in record else None

    def mark_served(self, version: int, when: str) -> None:
        """Record in the card that Triton confirmed ``version`` serving (first time only;
        cards without the record are left as they are). Written to a temporary file and
        renamed, so a reader never sees half a card."""
        card = self.version_dir(version) / CARD
        if self.served(version) is not False:
            return
        record = json.loads(card.read_text())
        record["served_since"] = when
        tmp = card.with_name(f".{CARD}.{os.getpid()}")
        tmp.write_text(json.dumps(record, indent=1, ensure_ascii=False) + "\n")
        os.replace(tmp, card)

    def version_dir(self, version: int) -> Path:
        return self.path / str(version)

    def file(self, filename: str) -> Path:
        """``filename`` in the serving version; FileNotFoundError names what is missing."""
        version = self.newest()
        if version is None:
            raise FileNotFoundError(f"{self.path} has no version directory")
        path = self.version_dir(version) / filename
        if not path.exists():
            raise FileNotFoundError(f"{path} does not exist (serving version {version})")
        return path

    def next_version(self) -> int:
        """One above every number ever used here, retired ones included."""
        return max(self.versions() + self.retired() + [0]) + 1

    # Changes ---------------------------------------------------------------------------
    @contextmanager
    def locked(self) -> Iterator[None]:
        """Exclusive right to change this model directory (an flock on ``.publish.lock``,
        released by the kernel if the holder dies), so two publishes cannot pick the same
        version number or delete each other's staging directory."""
        with open(self.path / LOCK, "a") as handle:
            try:
                fcntl.flock(handle, fcntl.LOCK_EX | fcntl.LOCK_NB)
            except BlockingIOError as exc:
                raise Busy(f"another publish or rollback of {self.name} is running") from exc
            yield

    def stage(self, version: int) -> Path:
        """An empty staging directory for ``version``; stale ones of crashed publishes
        are removed first."""
        self.remove_staging()
        staging = self.path / f"{STAGING}{version}-{os.getpid()}"
        staging.mkdir()
        return staging

    def commit(self, staging: Path, version: int) -> Path:
        """fsync every file of ``staging``, then rename it to ``<version>`` (atomic on
        one file system) and fsync the model directory, so the new version is either
        wholly there after a crash or not there at all."""
        for path in staging.rglob("*"):
            if path.is_file():
                _fsync(path)
        _fsync(staging)
        target = self.version_dir(version)
        if target.exists():
            raise FileExistsError(f"{target} appeared while publishing; nothing changed")
        os.rename(staging, target)
        _fsync(self.path)
        return target

    def retire(self, version: int) -> Path:
        """Rename ``<version>`` to ``retired-<version>``: Triton stops serving it at the
        next load, and its files stay on disk for inspection until the next publish."""
        target = self.path / f"{RETIRED}{version}"
        os.rename(self.version_dir(version), target)
        _fsync(self.path)
        return target

    def prune(self, keep: int, also_keep: frozenset[int] = frozenset()) -> list[str]:
        """Delete numbered versions beyond the newest ``keep`` (but never those in
        ``also_keep``: the one serving, the one a rollback returns to), retired versions
        and stale staging directories; returns what was removed."""
        old = self.versions()[:-keep] if keep > 0 else []
        gone = [self.version_dir(v) for v in old if v not in also_keep]
        gone += [self.path / f"{RETIRED}{v}" for v in self.retired()]
        for path in gone:
            shutil.rmtree(path)
        return [p.name for p in gone] + self.remove_staging()

    def remove_staging(self) -> list[str]:
        stale = [p for p in self.path.iterdir() if p.name.startswith(STAGING)]
        for path in stale:
            shutil.rmtree(path)
        return [p.name for p in stale]


def _fsync(path: Path) -> None:
    fd = os.open(path, os.O_RDONLY)
    try:
        os.fsync(fd)
    finally:
        os.close(fd)


def serving_dir(model: str, repository: str | Path = REPOSITORY) -> Path:
    """The version directory Triton serves for ``model`` (the shipped one by default)."""
    mdir = ModelDir.of(model, repository)
    version = mdir.newest()
    if version is None:
        raise SystemExit(f"{mdir.path} has no version; train a model and publish it")
    return mdir.version_dir(version)


def shipped(model: str, filename: str) -> Path:
    """``filename`` in the serving version of ``model``: what evaluation, benchmarks and
    tests use when no checkpoint is named."""
    try:
        return ModelDir.of(model).file(filename)
    except FileNotFoundError as exc:
        raise SystemExit(f"no shipped {filename} ({exc}); pass --model") from exc


def bundle_serving_code(version_dir: Path, package: Path = SERVING_PACKAGE) -> Path:
    """Write ``version_dir/nlp_models.zip``: the checkout's serving package (its ``.py``
    files and requirements.txt), which the version's model.py puts first on sys.path. A
    version thus runs the code it was published with, whatever the checkout holds later.
    Deterministic (sorted entries, fixed timestamps): identical code gives identical bytes."""
    files = sorted(p for p in package.rglob("*")
                   if p.is_file() and (p.suffix == ".py" or p.name == "requirements.txt")
                   and "__pycache__" not in p.parts)
    target = Path(version_dir) / SERVING_CODE
    with zipfile.ZipFile(target, "w", zipfile.ZIP_DEFLATED) as z:
        for path in files:
            info = zipfile.ZipInfo(str(path.relative_to(package.parent)), (1980, 1, 1, 0, 0, 0))
            info.compress_type, info.external_attr = zipfile.ZIP_DEFLATED, 0o644 << 16
            z.writestr(info, path.read_bytes())
    return target
