"""What every local server has in common: ports, prepare, command, health; and start/stop.

A subclass only describes its server. ``start`` and ``stop`` here implement the rules
the CLI and the pytest fixtures share: reuse a server we already run, refuse ports owned
by someone else, show the log tail when a server dies while starting, and never leave
processes behind.
"""

from __future__ import annotations

import os
import sys
import time
from abc import ABC, abstractmethod
from dataclasses import dataclass
from pathlib import Path

from deploy.process import (
    DeployError,
    ProcessStore,
    Record,
    failure_report,
    is_alive,
    members,
    port_bindable,
    stop_group,
)
from services.settings import REPO_ROOT, Settings


@dataclass(frozen=True)
class Port:
    """One TCP port a server listens on, and the variable that moves it."""

    label: str
    number: int
    env_var: str


class Server(ABC):
    """A local server process described by its ports, files, command line and health."""

    name: str = ""

    def __init__(self, settings: Settings) -> None:
        self.settings = settings
        self.store = ProcessStore(settings.state_dir)
        self.home = settings.state_dir / self.name

    # What a subclass describes ------------------------------------------------------
    @abstractmethod
    def ports(self) -> list[Port]:
        """The ports this server binds on 127.0.0.1."""

    @abstractmethod
    def install(self) -> None:
        """Find the runtime and resolve binaries/jars; slow the first time only."""

    @abstractmethod
    def prepare(self) -> None:
        """``install``, then write config files and initialise storage before a start."""

    @abstractmethod
    def command(self) -> list[str]:
        """The command line that runs the server in the foreground."""

    @abstractmethod
    def healthy(self) -> bool:
        """True once the server answers requests; must return quickly."""

    def environment(self) -> dict[str, str]:
        """Environment of the server process."""
        return dict(os.environ)

    def endpoints(self) -> dict[str, str]:
        """Human-readable addresses for ``status``."""
        return {p.label: f"{self.settings.host}:{p.number}" for p in self.ports()}

    # Shared behaviour ---------------------------------------------------------------
    @property
    def log_path(self) -> Path:
        return self.store.log_path(self.name)

    def record(self) -> Record | None:
        """The record of our running server, if any."""
        return self.store.load(self.name)

    def as_started(self, record: Record) -> Server:
        """This server as configured when ``record`` was started (its real ports).

        A server started with other NLP_* values than the current environment's must be
        probed and reported where it really listens.
        """
        if not record.settings:
            return self
        return type(self)(Settings.from_dict(record.settings))

    def start(
        self, timeout: float | None = None, owner: str = "cli", lease: int | None = None
    ) -> tuple[Record, bool]:
        """Start the server unless we already run it; wait until healthy.

        Returns the record and whether this call started the process. A server that is
        already running is reused as it is, even if the environment now asks for other
        ports: run ``down`` first to apply new settings. ``owner="cli"`` adopts a server a
        test session started, so that session will not stop it. ``lease`` (a pid) marks a
        user of the server; see ``release``. Concurrent calls are serialised by a lock.
        """
        timeout = self.settings.start_timeout if timeout is None else timeout
        with self.store.lock(self.name):
            running = self.record()
            if running is not None and not is_alive(running.pid, running.start_ticks):
                self._clean_after_crash(running)
                running = None
            if running is not None:
                self.as_started(running)._await_health(running, timeout)
                if owner == "cli" and running.owner != "cli":
                    running.owner = "cli"
                    self.store.save(running)
                record, started = running, False
            else:
                record, started = self._spawn(timeout, owner), True
            if lease is not None:
                self.store.add_lease(self.name, lease)
            return record, started

    def release(self, lease: int) -> bool:
        """Drop ``lease``; stop the server if a test session started it and no live session
        still holds a lease on it. Returns True if it stopped the server."""
        with self.store.lock(self.name):
            others = self.store.drop_lease(self.name, lease)
            record = self.record()
            if record is None or record.owner == "cli" or others:
                return False
            return self._stop_locked()

    def stop(self, timeout: float = 30.0) -> bool:
        """Stop our server (and all its child processes). Returns False if none ran."""
        with self.store.lock(self.name):
            return self._stop_locked(timeout)

    def _clean_after_crash(self, record: Record) -> None:
        """The server died without ``down`` (``kill -9``, OOM): stop what it left running
        (Triton's Python-backend stubs outlive their server and keep its shared memory),
        remove what it left on disk (``leftovers``), forget it, so ``start`` starts anew."""
        orphans = members(record)
        print(f"{self.name}: the server (pid {record.pid}) is gone"
              + (f"; stopping {len(orphans)} processes it left" if orphans else ""),
              file=sys.stderr, flush=True)
        stop_group(record, timeout=10.0)
        for path in self.leftovers():
            path.unlink(missing_ok=True)
        self.store.forget(self.name)

    def leftovers(self) -> list[Path]:
        """Files a crashed server leaves that would stop a new one from starting."""
        return []

    def _stop_locked(self, timeout: float = 30.0) -> bool:
        record = self.record()
        if record is None:
            return False
        stop_group(record, timeout)
        self.store.forget(self.name)
        return True

    def _spawn(self, timeout: float, owner: str) -> Record:
        self._check_ports()
        self.prepare()
        ports = {p.label: p.number for p in self.ports()}
        record = self.store.spawn(
            self.name,
            self.command(),
            self.environment(),
            REPO_ROOT,
            ports,
            self.settings.to_dict(),
            owner,
        )
        try:
            self._await_health(record, timeout)
        except BaseException:
            self._stop_locked()
            raise
        return record

    def _check_ports(self) -> None:
        for port in self.ports():
            if not port_bindable(self.settings.host, port.number):
                raise DeployError(
                    f"port {port.number} ({self.name} {port.label}) in use by another process; "
                    f"set {port.env_var} to a free port (or stop what listens there: "
                    f"ss -ltnp 'sport = :{port.number}')"
                )

    def _await_health(self, record: Record, timeout: float) -> None:
        deadline = time.monotonic() + timeout
        while time.monotonic() < deadline:
            if not members(record):
                raise DeployError(
                    f"{self.name} exited during start-up; from {self.log_path}:\n"
                    f"{failure_report(self.log_path)}"
                )
            if self.healthy():
                return
            time.sleep(1.0)
        raise DeployError(
            f"{self.name} not healthy after {timeout:.0f}s (raise NLP_START_TIMEOUT if the "
            f"machine is busy); from {self.log_path}:\n{failure_report(self.log_path)}"
        )
