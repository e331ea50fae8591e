"""Start, find and stop one server process, remembered in a JSON file in the state dir.

Each server runs in its own session (``start_new_session``) so that stopping it can signal
the whole process group: Triton's Python-backend stubs and any JVM helper go down with it.
A record holds the pid *and* the process start time, so a recycled pid is never mistaken
for our server (and never killed).
"""

from __future__ import annotations

import fcntl
import json
import os
import shutil
import signal
import socket
import subprocess
import time
from collections import deque
from collections.abc import Iterator, Mapping, Sequence
from contextlib import contextmanager
from dataclasses import asdict, dataclass, field
from pathlib import Path

_CLK_TCK = os.sysconf("SC_CLK_TCK")
_PAGE = os.sysconf("SC_PAGE_SIZE")


class DeployError(RuntimeError):
    """A failure the user can act on; the message says what is wrong and what to do."""


@dataclass
class Record:
    """What ``up`` remembers about a server it started."""

    name: str
    pid: int
    start_ticks: int
    cmd: list[str]
    log: str
    ports: dict[str, int]
    started_at: float
    settings: dict = field(default_factory=dict)
    #: "cli" (python -m deploy.local up) or "fixture" (pytest); fixtures stop only their own
    owner: str = "cli"


def _stat_fields(pid: int) -> list[str] | None:
    """Fields of /proc/<pid>/stat after the command name (which may contain spaces)."""
    try:
        raw = Path(f"/proc/{pid}/stat").read_text()
    except OSError:
        return None
    return raw[raw.rindex(")") + 2 :].split()


def start_ticks(pid: int) -> int | None:
    """Process start time in clock ticks since boot, or None if the pid is gone."""
    fields = _stat_fields(pid)
    return int(fields[19]) if fields else None


def is_alive(pid: int, ticks: int) -> bool:
    """True if ``pid`` is still the process we started (not a zombie, not a reused pid)."""
    fields = _stat_fields(pid)
    return bool(fields) and fields[0] != "Z" and int(fields[19]) == ticks


def members(record: Record) -> list[int]:
    """Live processes of the server's process group (leader first if alive).

    A member that started before the leader cannot belong to our server, so a group id
    recycled by an unrelated session is ignored.
    """
    pids = [p for p in group_pids(record.pid) if (start_ticks(p) or 0) >= record.start_ticks]
    return sorted(pids, key=lambda p: p != record.pid)


def group_pids(pgid: int) -> list[int]:
    """All live processes in process group ``pgid``."""
    pids = []
    for entry in Path("/proc").iterdir():
        if not entry.name.isdigit():
            continue
        fields = _stat_fields(int(entry.name))
        if fields and fields[0] != "Z" and int(fields[2]) == pgid:
            pids.append(int(entry.name))
    return pids


def rss_bytes(pids: Sequence[int]) -> int:
    """Summed resident set size of ``pids`` (shared pages counted once per process)."""
    total = 0
    for pid in pids:
        fields = _stat_fields(pid)
        if fields:
            total += int(fields[21]) * _PAGE
    return total


def pss_bytes(pids: Sequence[int]) -> int:
    """Summed proportional set size: shared pages (libtorch, JVM libs) split among sharers.

    Closer than RSS to what the processes really cost when several stubs load torch.
    """
    total = 0
    for pid in pids:
        try:
            text = Path(f"/proc/{pid}/smaps_rollup").read_text()
        except OSError:
            continue
        for line in text.splitlines():
            if line.startswith("Pss:"):
                total += int(line.split()[1]) * 1024
                break
    return total


def run(cmd: list[str], what: str) -> None:
    """Run a setup step quietly; raise DeployError with its output's tail if it fails."""
    done = subprocess.run(cmd, capture_output=True, text=True)
    if done.returncode != 0:
        tail = (done.stdout + done.stderr)[-2000:]
        raise DeployError(f"could not {what}: {' '.join(cmd)}\n{tail}")


def port_in_use(host: str, port: int) -> bool:
    """True if something accepts TCP connections on host:port."""
    with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as sock:
        sock.settimeout(0.5)
        return sock.connect_ex((host, port)) == 0


def port_bindable(host: str, port: int) -> bool:
    """True if we could listen on host:port right now."""
    with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as sock:
        sock.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
        try:
            sock.bind((host, port))
        except OSError:
            return False
        return True


def tail(path: Path, lines: int = 30) -> str:
    """The last ``lines`` lines of a log file ('' if it does not exist)."""
    try:
        with path.open("r", errors="replace") as fh:
            return "".join(deque(fh, maxlen=lines))
    except OSError:
        return ""


_ERROR_MARKERS = ("ERROR", "Exception", "error:", "Error:", "FATAL", "Caused by")


def failure_report(path: Path, lines: int = 30) -> str:
    """Error-looking lines of the latest run (up to 10) plus the last ``lines`` lines.

    Triton prints a long options table after the real error and Java servers print stack
    traces; the error lines are what tell the user what to fix.
    """
    text = tail(path, 5000)
    run = text.rsplit("\n===== ", 1)[-1].splitlines()[1:]  # drop our "starting <cmd>" line
    run = [ln if len(ln) <= 400 else ln[:400] + " ..." for ln in run]
    last = run[-lines:]
    errors = [ln for ln in run[:-lines] if ln[:1] == "E" and ln[1:5].isdigit()]
    errors += [ln for ln in run[:-lines] if any(m in ln for m in _ERROR_MARKERS)]
    report = "\n".join(last)
    if errors:
        report = "error lines:\n" + "\n".join(errors[:10]) + "\n... last lines:\n" + report
    return report


class ProcessStore:
    """The pid records of one state dir: ``<state>/run/<name>.json``."""

    def __init__(self, state_dir: Path) -> None:
        self.run_dir = state_dir / "run"
        self.log_dir = state_dir / "logs"

    def path(self, name: str) -> Path:
        return self.run_dir / f"{name}.json"

    def log_path(self, name: str) -> Path:
        return self.log_dir / f"{name}.log"

    def load(self, name: str) -> Record | None:
        """The record of a live server, or None (a stale record is removed)."""
        try:
            record = Record(**json.loads(self.path(name).read_text()))
        except (OSError, ValueError, TypeError):
            return None
        reap(record.pid)
        if members(record):
            return record
        self.path(name).unlink(missing_ok=True)
        return None

    def save(self, record: Record) -> None:
        self.run_dir.mkdir(parents=True, exist_ok=True)
        tmp = self.path(record.name).with_suffix(".tmp")
        tmp.write_text(json.dumps(asdict(record), indent=2))
        tmp.replace(self.path(record.name))

    def forget(self, name: str) -> None:
        self.path(name).unlink(missing_ok=True)
        shutil.rmtree(self._lease_dir(name), ignore_errors=True)

    @contextmanager
    def lock(self, name: str) -> Iterator[None]:
        """Serialise start/stop/lease changes of one server across processes."""
        self.run_dir.mkdir(parents=True, exist_ok=True)
        with (self.run_dir / f"{name}.lock").open("w") as fh:
            fcntl.flock(fh, fcntl.LOCK_EX)
            try:
                yield
            finally:
                fcntl.flock(fh, fcntl.LOCK_UN)

    # Leases: which live processes (pytest sessions) use a fixture-started server.
    def _lease_dir(self, name: str) -> Path:
        return self.run_dir / f"{name}.leases"

    def add_lease(self, name: str, pid: int) -> None:
        self._lease_dir(name).mkdir(parents=True, exist_ok=True)
        (self._lease_dir(name) / f"{pid}-{start_ticks(pid)}").touch()

    def drop_lease(self, name: str, pid: int) -> list[int]:
        """Remove ``pid``'s lease; return the pids of other leases still alive."""
        (self._lease_dir(name) / f"{pid}-{start_ticks(pid)}").unlink(missing_ok=True)
        alive = []
        for lease in self._lease_dir(name).glob("*-*"):
            other, ticks = (int(x) for x in lease.name.split("-"))
            if is_alive(other, ticks):
                alive.append(other)
            else:
                lease.unlink(missing_ok=True)  # a session that died without cleaning up
        return alive

    def spawn(
        self,
        name: str,
        cmd: Sequence[str],
        env: Mapping[str, str],
        cwd: Path,
        ports: dict[str, int],
        settings: dict | None = None,
        owner: str = "cli",
    ) -> Record:
        """Start ``cmd`` in a new session with stdout+stderr appended to its log."""
        self.log_dir.mkdir(parents=True, exist_ok=True)
        log = self.log_path(name)
        with log.open("ab") as out:
            out.write(
                f"\n===== {time.strftime('%F %T')} starting {name}: {' '.join(cmd)}\n".encode()
            )
            out.flush()
            proc = subprocess.Popen(
                list(cmd),
                cwd=cwd,
                env=dict(env),
                stdin=subprocess.DEVNULL,
                stdout=out,
                stderr=subprocess.STDOUT,
                start_new_session=True,
            )
        ticks = start_ticks(proc.pid) or 0
        record = Record(
            name, proc.pid, ticks, list(cmd), str(log), ports, time.time(), settings or {}, owner
        )
        self.save(record)
        # The Popen object is dropped on purpose: the server outlives this process.
        # Reap it if it exits while we are still around, so it does not linger as a zombie.
        _reapers[proc.pid] = proc
        return record


_reapers: dict[int, subprocess.Popen[bytes]] = {}


def reap(pid: int) -> None:
    """Collect the exit status of a child we started, if it has exited."""
    proc = _reapers.get(pid)
    if proc is not None and proc.poll() is not None:
        _reapers.pop(pid, None)


def stop_group(record: Record, timeout: float = 30.0) -> bool:
    """SIGTERM the server's process group, wait, then SIGKILL what is left.

    Returns True if it had to use SIGKILL. Signals only processes that ``members`` accepts
    as ours, so a reused pid is never touched.
    """
    if not members(record):
        return False
    _signal(record, signal.SIGTERM)
    if _wait_gone(record, timeout):
        return False
    _signal(record, signal.SIGKILL)
    if not _wait_gone(record, 10.0):
        raise DeployError(
            f"{record.name}: processes {members(record)} survived SIGKILL; "
            f"check `ps -g {record.pid}`"
        )
    return True


def _signal(record: Record, sig: int) -> None:
    if is_alive(record.pid, record.start_ticks):
        try:
            os.killpg(record.pid, sig)  # start_new_session: the server leads its own group
        except ProcessLookupError:
            pass
        return
    for pid in members(record):  # leader gone, orphans left: signal them one by one
        try:
            os.kill(pid, sig)
        except ProcessLookupError:
            pass


def _wait_gone(record: Record, timeout: float) -> bool:
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        reap(record.pid)
        if not members(record):
            return True
        time.sleep(0.2)
    reap(record.pid)
    return not members(record)


def stop_child(proc: subprocess.Popen, timeout: float = 60.0) -> int:
    """SIGTERM a child process we started (a Faust worker shuts down cleanly on it) and
    SIGKILL it if it has not exited after ``timeout`` seconds; returns its exit code."""
    if proc.poll() is None:
        proc.send_signal(signal.SIGTERM)
        try:
            proc.wait(timeout=timeout)
        except subprocess.TimeoutExpired:
            proc.kill()
            proc.wait()
    return proc.returncode
