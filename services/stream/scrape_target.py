"""A worker announces its own Prometheus scrape target, and withdraws it on a clean stop.

Prometheus finds the local stack's workers by file discovery
(``deploy/monitoring.py``): each file in ``$NLP_STATE_DIR/prometheus/targets/`` lists
targets of the ``worker`` job. A worker writes its file once its web server answers
``/metrics`` and deletes it when it stops cleanly (SIGTERM or Ctrl-C: the demo's end, a
scale-down), so a planned stop leaves no ``WorkerDown`` behind. A worker that is killed,
hangs or crashes leaves its file: Prometheus keeps scraping the dead port and
``WorkerDown`` fires until the worker is back on that port or an operator deletes the
file. Why this and not "leave the demo's worker running": every planned stop, not only
the demo's, must stay silent, and a fixed target list pages for each of them.
"""

from __future__ import annotations

import json
import logging
import os
from pathlib import Path

import mode

log = logging.getLogger(__name__)

#: Addresses a server binds to that Prometheus cannot scrape as written.
WILDCARDS = {"", "0.0.0.0", "::"}


def targets_dir(state_dir: Path) -> Path:
    """The folder Prometheus's file discovery reads (``deploy.monitoring.Prometheus``)."""
    return state_dir / "prometheus" / "targets"


def target_address(bind: str, port: int) -> str:
    """``host:port`` Prometheus scrapes for a web server bound to ``bind``."""
    host = "127.0.0.1" if bind in WILDCARDS else bind
    return f"[{host}]:{port}" if ":" in host else f"{host}:{port}"


def target_file(state_dir: Path, address: str) -> Path:
    """One file per worker address: a worker restarted on its port rewrites its own."""
    safe = address.replace("[", "").replace("]", "").replace(":", "-")
    return targets_dir(state_dir) / f"worker-{safe}.json"


def announce(path: Path, address: str) -> None:
    """Write ``path`` atomically: Prometheus never reads half a file."""
    path.parent.mkdir(parents=True, exist_ok=True)
    partial = path.with_suffix(f".json.{os.getpid()}.tmp")  # not matched by *.json
    partial.write_text(json.dumps([{"targets": [address]}]))
    partial.replace(path)


def withdraw(path: Path) -> None:
    path.unlink(missing_ok=True)


class ScrapeTarget(mode.Service):
    """Started with the app after its web server (``app.service``): announces the
    worker's address; on a stop that is not a crash, withdraws it."""

    def __init__(self, app: mode.ServiceT, path: Path, address: str) -> None:
        super().__init__()
        self.app, self.path, self.address = app, path, address

    async def on_started(self) -> None:
        try:
            announce(self.path, self.address)
        except OSError as exc:  # monitoring must never stop the stream
            log.warning("could not announce scrape target %s in %s (%s): Prometheus finds "
                        "this worker only through NLP_WORKER_TARGETS", self.address,
                        self.path, exc)
            return
        log.info("scrape target %s announced in %s", self.address, self.path)

    async def on_stop(self) -> None:
        if self.app.crashed or self.crashed:
            log.warning("worker crashed: scrape target %s kept, so WorkerDown fires",
                        self.address)
            return
        try:
            withdraw(self.path)
        except OSError as exc:
            log.warning("could not withdraw scrape target %s (%s)", self.path, exc)
            return
        log.info("scrape target %s withdrawn (clean stop)", self.address)
