"""A Compose project the compose tests start, inspect and remove (marker ``compose``).

Where no image registry is reachable (this machine) the images come from
deploy/images/compose.yml (Debian's archive, PyPI, Maven Central); set
``NLP_COMPOSE_FILES=docker-compose.yml`` to test the official images instead. Ports are
published on another loopback address than the local stack's, so both run side by side.
"""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
import time
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass, field
from pathlib import Path

from deploy.docker import daemon_answers, ensure_base
from deploy.process import DeployError, port_in_use
from services.settings import REPO_ROOT

FILES = os.environ.get("NLP_COMPOSE_FILES", "docker-compose.yml:deploy/images/compose.yml")
HOST_PORTS = {9092: "kafka", 9200: "elasticsearch", 8000: "triton", 8001: "triton",
              8002: "triton", 50051: "headline-api"}


@dataclass
class ComposeProject:
    name: str
    address: str  # NLP_PUBLISH_ADDRESS
    env: dict[str, str]
    overrides: list[str] = field(default_factory=list)  # more files, after FILES
    profiles: list[str] = field(default_factory=list)

    def command(self, *args: str) -> list[str]:
        files = [a for f in [*FILES.split(":"), *self.overrides]
                 for a in ("-f", str(REPO_ROOT / f))]
        profiles = [a for p in self.profiles for a in ("--profile", p)]
        return ["docker-compose", "-p", self.name, *files, *profiles, *args]

    def run(self, *args: str, timeout: float = 600) -> str:
        proc = subprocess.run(self.command(*args), cwd=REPO_ROOT, env=self.env,
                              capture_output=True, text=True, timeout=timeout)
        if proc.returncode != 0:
            raise AssertionError(f"docker-compose {' '.join(args)} failed ({proc.returncode}):"
                                 f"\n{proc.stdout[-3000:]}\n{proc.stderr[-3000:]}")
        return proc.stdout

    def containers(self, service: str) -> list[str]:
        return self.run("ps", "-q", service).split()

    def wait_healthy(self, services: list[str], timeout: float) -> float:
        began = time.monotonic()
        while time.monotonic() - began < timeout:
            states = {s: [health(c) for c in self.containers(s)] for s in services}
            if all(states[s] and all(h in ("healthy", "none") for h in states[s])
                   for s in services):
                return time.monotonic() - began
            time.sleep(3)
        raise AssertionError(f"not healthy after {timeout:.0f}s: {states}")

    def logs(self, service: str, tail: int = 60) -> str:
        return subprocess.run(self.command("logs", "--no-color", "--tail", str(tail), service),
                              cwd=REPO_ROOT, env=self.env, capture_output=True,
                              text=True).stdout

    def replay(self, path: Path, topic: str, kind: str,
               rate: float = 0) -> subprocess.Popen[str]:
        """The producer CLI feeding ``path`` to the project's Kafka from the host."""
        cmd = [sys.executable, "-m", "services.producer", "--file", str(path), "--topic",
               topic, "--kind", kind, "--bootstrap", f"{self.address}:9092", "--quiet"]
        if rate:
            cmd += ["--rate", str(rate)]
        return subprocess.Popen(cmd, cwd=REPO_ROOT, env=self.env, stdout=subprocess.PIPE,
                                stderr=subprocess.STDOUT, text=True)

    def down(self) -> None:
        self.run("down", "-v", "--remove-orphans", timeout=300)

    @contextmanager
    def running(self, services: list[str], healthy: list[str], up_options: tuple[str, ...] = (),
                logs_of: str = "worker") -> Iterator[ComposeProject]:
        """Build ``services``, start them, wait until ``healthy`` are; print the build and
        start times, and at the end the last log lines of ``logs_of``; then remove it all."""
        began = time.monotonic()
        self.run("build", *services, timeout=3600)
        print(f"build: {time.monotonic() - began:.0f}s")
        try:
            began = time.monotonic()
            self.run("up", "-d", *up_options, *services, timeout=900)
            took = self.wait_healthy(healthy, timeout=900)
            print(f"up and healthy: {time.monotonic() - began:.0f}s (health {took:.0f}s)")
            yield self
        finally:
            print(self.logs(logs_of)[-6000:])
            self.down()


def health(container: str) -> str:
    out = subprocess.run(["docker", "inspect", "--format",
                          "{{if .State.Health}}{{.State.Health.Status}}{{else}}none{{end}}",
                          container], capture_output=True, text=True, timeout=30)
    return out.stdout.strip()


def finish(proc: subprocess.Popen[str]) -> None:
    out, _ = proc.communicate(timeout=300)
    assert proc.returncode == 0, out


def count(es, pattern: str) -> int:  # type: ignore[no-untyped-def]
    """Documents in the indices of ``pattern`` after a refresh (0 before they exist)."""
    try:
        es.indices.refresh(index=pattern)
        return int(es.count(index=pattern)["count"])
    except Exception:  # the index does not exist yet
        return 0


def why_not_runnable(address: str) -> str | None:
    """Why the compose tests cannot run here (None: they can)."""
    if shutil.which("docker-compose") is None or shutil.which("docker") is None:
        return "docker and docker-compose are not installed (apt-get install docker.io " \
            "docker-compose)"
    if FILES.endswith("deploy/images/compose.yml"):
        try:  # a daemon (started if need be) and the Debian and Python bases built here
            ensure_base()
        except DeployError as exc:
            return f"no Docker to build the images with: {exc}"
    elif not daemon_answers():
        return "no Docker daemon answers (python -m deploy.docker base starts one)"
    busy = [f"{port} ({name})" for port, name in HOST_PORTS.items()
            if port_in_use(address, port)]
    if busy:
        return f"ports in use on {address}: {', '.join(busy)}; the Compose file publishes them"
    return None
