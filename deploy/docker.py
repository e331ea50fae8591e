"""What the Compose stack needs before ``docker-compose build`` on a machine without a registry.

    python -m deploy.docker base [--rebuild]

1. a Docker daemon: started (as root, ``dockerd`` in the background, log in
   ``$NLP_STATE_DIR/logs/dockerd.log``) when none answers;
2. ``nlp-debian:bookworm``: Debian's minimal bookworm from Debian's archive (``debootstrap``,
   then ``docker import``), the root of every image built here;
3. the certificate authorities this machine trusts beyond Debian's
   (``/usr/local/share/ca-certificates/*.crt``, e.g. a TLS-inspecting proxy's) copied to
   ``deploy/images/ca/`` (git-ignored), without which pip inside a build cannot reach PyPI;
4. ``nlp-python:3.11`` (``deploy/images/python.Dockerfile``), the base of the others.

Each step is skipped when already done. Then ``docker-compose -f docker-compose.yml -f
deploy/images/compose.yml build`` builds the rest (deploy/README.md).
"""

from __future__ import annotations

import argparse
import shutil
import subprocess
import sys
import tempfile
import time
from pathlib import Path

from deploy.process import DeployError, run
from services.settings import REPO_ROOT, Settings

DEBIAN = "nlp-debian:bookworm"
PYTHON = "nlp-python:3.11"
IMAGES = REPO_ROOT / "deploy" / "images"
HOST_CAS = Path("/usr/local/share/ca-certificates")
MIRROR = "http://deb.debian.org/debian"


def daemon_answers() -> bool:
    if shutil.which("docker") is None:
        return False
    return subprocess.run(["docker", "info"], capture_output=True, timeout=60).returncode == 0


def ensure_daemon(log_dir: Path, timeout: float = 60.0) -> None:
    """A Docker daemon that answers, started here if need be (root only)."""
    if daemon_answers():
        return
    dockerd = shutil.which("dockerd") or "/usr/sbin/dockerd"
    if not Path(dockerd).exists():
        raise DeployError("no Docker daemon answers and dockerd is not installed "
                          "(apt-get install -y docker.io)")
    log_dir.mkdir(parents=True, exist_ok=True)
    print(f"docker: starting dockerd (log: {log_dir / 'dockerd.log'})", flush=True)
    with open(log_dir / "dockerd.log", "ab") as log:
        subprocess.Popen([dockerd], stdout=log, stderr=log, start_new_session=True)
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        if daemon_answers():
            return
        time.sleep(1)
    raise DeployError(f"dockerd did not answer within {timeout:.0f}s; see "
                      f"{log_dir / 'dockerd.log'} (it needs root and cgroups)")


def image_exists(name: str) -> bool:
    return subprocess.run(["docker", "image", "inspect", name], capture_output=True,
                          timeout=60).returncode == 0


def step(cmd: list[str], what: str) -> None:
    """One setup step, with its duration."""
    print(f"docker: {what} ...", flush=True)
    began = time.monotonic()
    run(cmd, what)
    print(f"docker: {what}: {time.monotonic() - began:.0f}s", flush=True)


def ensure_debian(rebuild: bool) -> None:
    if image_exists(DEBIAN) and not rebuild:
        return
    if shutil.which("debootstrap") is None:
        raise DeployError("debootstrap is not installed (apt-get install -y debootstrap)")
    with tempfile.TemporaryDirectory(prefix="bookworm-") as root:
        step(["debootstrap", "--variant=minbase", "bookworm", root, MIRROR],
            f"debootstrap bookworm from {MIRROR}")
        print(f"docker: docker import {DEBIAN}", flush=True)
        tar = subprocess.Popen(["tar", "-C", root, "-c", "."], stdout=subprocess.PIPE)
        imported = subprocess.run(["docker", "import", "-", DEBIAN], stdin=tar.stdout,
                                  capture_output=True, text=True)
        tar.wait()
        if imported.returncode != 0 or tar.returncode != 0:
            raise DeployError(f"docker import {DEBIAN} failed: {imported.stderr}")


def copy_host_cas() -> list[str]:
    """The host's extra CAs into the build context of python.Dockerfile."""
    copied = []
    for crt in sorted(HOST_CAS.glob("*.crt")) if HOST_CAS.is_dir() else []:
        target = IMAGES / "ca" / crt.name
        if not target.exists() or target.read_bytes() != crt.read_bytes():
            shutil.copyfile(crt, target)
        copied.append(crt.name)
    return copied


def ensure_python(rebuild: bool) -> None:
    if image_exists(PYTHON) and not rebuild:
        return
    cas = copy_host_cas()
    if cas:
        print(f"docker: trusting this machine's extra CAs in the build: {', '.join(cas)}",
              flush=True)
    step(["docker", "build", "-q", "-f", str(IMAGES / "python.Dockerfile"), "-t", PYTHON,
         "--build-arg", f"DEBIAN_BASE={DEBIAN}", str(IMAGES)], f"build {PYTHON}")


def ensure_base(rebuild: bool = False) -> None:
    ensure_daemon(Settings.from_env().state_dir / "logs")
    ensure_debian(rebuild)
    ensure_python(rebuild)


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m deploy.docker", description=__doc__,
                                     formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("task", choices=["base"])
    parser.add_argument("--rebuild", action="store_true",
                        help="rebuild the Debian and Python bases even if they exist")
    args = parser.parse_args(argv)
    try:
        ensure_base(args.rebuild)
    except DeployError as exc:
        print(f"error: {exc}", file=sys.stderr)
        return 1
    print(f"docker: {DEBIAN} and {PYTHON} ready", flush=True)
    return 0


if __name__ == "__main__":
    sys.exit(main())
