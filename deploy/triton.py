"""NVIDIA Triton Inference Server from the ``nvidia-pytriton`` wheel, on CPU.

The wheel ships ``tritonserver``, its shared libraries (``nvidia_pytriton.libs``), the
Python backend and one ``triton_python_backend_stub`` per Python version. The stub must sit
next to ``libtriton_python.so`` in ``backends/python/``; instead of writing into the
installed wheel we copy its small ``backends`` dir (about 2 MB) into the state dir and add
the stub there, so the venv stays as pip left it and several state dirs can coexist.

The stub embeds libpython in *isolated* mode: it ignores PYTHONPATH and PYTHONHOME, but it
still finds "its" executable by looking up ``python3`` on PATH and honours a ``pyvenv.cfg``
beside it. ``prepare`` therefore creates a venv under the state dir with the serving
requirements only (``nlp_models/requirements.txt``, what the Triton image installs); each
model version brings its own code (``nlp_models.zip``). The server runs with that venv's
``bin`` first on PATH and the base Python's libpython first on LD_LIBRARY_PATH, so the stub
runs the same interpreter build. No ``EXECUTION_ENV_PATH`` in model configs is needed.
"""

from __future__ import annotations

import fcntl
import filecmp
import importlib.util
import os
import shutil
import sys
import sysconfig
import urllib.error
import urllib.request
from pathlib import Path

from deploy import clusters
from deploy.base import Port, Server
from deploy.process import DeployError, run
from services.model_control import ADMIN_APIS, ADMIN_HEADER, admin_key
from services.settings import REPO_ROOT, Settings

SERVING_REQUIREMENTS = REPO_ROOT / "nlp_models" / "requirements.txt"


def serving_venv(settings: Settings | None = None) -> Path:
    """The serving-only venv the stub runs (see the module docstring): one per checkout,
    `.serving-venv` beside `.venv` (about 3 GB with torch), shared by every state dir, so
    test stacks with their own state dirs do not install it again."""
    return REPO_ROOT / ".serving-venv"


def wheel_dir() -> Path:
    """``site-packages/pytriton/tritonserver`` of the installed nvidia-pytriton wheel."""
    spec = importlib.util.find_spec("pytriton")
    if spec is None or not spec.submodule_search_locations:
        raise DeployError(
            "nvidia-pytriton is not installed in this Python "
            f"({sys.executable}); run: .venv/bin/pip install nvidia-pytriton"
        )
    path = Path(list(spec.submodule_search_locations)[0]) / "tritonserver"
    if not (path / "bin" / "tritonserver").exists():
        raise DeployError(f"{path}/bin/tritonserver missing; reinstall nvidia-pytriton")
    return path


def _sync_file(src: Path, dst: Path) -> None:
    """Copy ``src`` to ``dst`` unless identical; replace via rename, never in place."""
    if dst.exists() and filecmp.cmp(src, dst, shallow=False):
        return
    dst.parent.mkdir(parents=True, exist_ok=True)
    tmp = dst.with_name(dst.name + ".tmp")
    shutil.copy2(src, tmp)
    os.replace(tmp, dst)


class Triton(Server):
    """tritonserver in explicit model-control mode serving NLP_MODEL_REPOSITORY."""

    name = "triton"

    def ports(self) -> list[Port]:
        s = self.settings
        return [
            Port("http", s.triton_http_port, "NLP_TRITON_HTTP_PORT"),
            Port("grpc", s.triton_grpc_port, "NLP_TRITON_GRPC_PORT"),
            Port("metrics", s.triton_metrics_port, "NLP_TRITON_METRICS_PORT"),
        ]

    def install(self) -> None:
        self.wheel = wheel_dir()
        self.backends = self._install_backends()
        self.stub_python = self._write_stub_venv()
        # the POS tagger's ARK word clusters, from Maven Central (deploy/clusters.py)
        self.cluster_file = clusters.resolve(self.settings)

    def prepare(self) -> None:
        repo = self.settings.model_repository
        if not repo.is_dir():
            raise DeployError(
                f"model repository {repo} does not exist; create it or set NLP_MODEL_REPOSITORY"
            )
        self.install()

    def _install_backends(self) -> Path:
        """Copy the wheel's backends into the state dir and add this Python's stub.

        Files are replaced only when they differ, and atomically (new inode), so running
        ``prepare`` while a server uses the same state dir does not touch mapped libraries.
        """
        version = f"{sys.version_info.major}.{sys.version_info.minor}"
        stub = self.wheel / "python_backend_stubs" / version / "triton_python_backend_stub"
        if not stub.exists():
            raise DeployError(
                f"nvidia-pytriton has no Python backend stub for Python {version} ({stub}); "
                "use a venv with a Python version listed in "
                f"{self.wheel / 'python_backend_stubs'}"
            )
        target = self.home / "backends"
        source = self.wheel / "backends"
        for src in source.rglob("*"):
            if src.is_file() and "__pycache__" not in src.parts:
                _sync_file(src, target / src.relative_to(source))
        _sync_file(stub, target / "python" / "triton_python_backend_stub")
        return target

    def _write_stub_venv(self) -> Path:
        """The stub's interpreter: a venv of this Python with the serving requirements only
        (nlp_models/requirements.txt, as the Triton image), not our repository or .venv, so a
        model that imports anything else fails here as it would in production. Each model
        version brings its own code (nlp_models.zip). Installed once (pip's cache makes it a
        copy of the wheels .venv already has); reinstalled when the requirements change."""
        venv = serving_venv()
        python = venv / "bin" / "python"
        stamp = venv / "requirements.txt"
        wanted = SERVING_REQUIREMENTS.read_text()
        venv.parent.mkdir(parents=True, exist_ok=True)
        with open(REPO_ROOT / ".serving-venv.lock", "w") as lock:
            fcntl.flock(lock, fcntl.LOCK_EX)  # stacks prepared at once install it once
            if python.exists() and stamp.exists() and stamp.read_text() == wanted:
                return venv / "bin"
            print(f"triton: installing the serving requirements into {venv} (once)", flush=True)
            run([sys._base_executable, "-m", "venv", "--clear", str(venv)],
                "create the serving venv")
            run([str(python), "-m", "pip", "install", "-q", "-r", str(SERVING_REQUIREMENTS)],
                "install nlp_models/requirements.txt into the serving venv")
            stamp.write_text(wanted)
        return venv / "bin"

    def environment(self) -> dict[str, str]:
        env = dict(os.environ)
        libs = self.wheel.parent.parent / "nvidia_pytriton.libs"
        libdir = sysconfig.get_config_var("LIBDIR") or ""
        ld_path = [p for p in (libdir, str(libs), env.get("LD_LIBRARY_PATH", "")) if p]
        env.update(
            LD_LIBRARY_PATH=os.pathsep.join(ld_path),
            PATH=os.pathsep.join([str(self.stub_python), env.get("PATH", "")]),
            PYTHONUNBUFFERED="1",
            NLP_POS_CLUSTERS=str(self.cluster_file),  # read by the pos_tagger model
            # the stack shares 2 cores: one intra-op thread per model instance (docs/design.md)
            OMP_NUM_THREADS="1",
            MKL_NUM_THREADS="1",
            # Models that ask for more threads (torch_threads) run side by side on the same
            # cores: idle OpenMP workers must sleep, not spin, or they starve the other model
            # (measured: the headline API's p99 went from 0.26 s to 5.5 s at 1 client).
            OMP_WAIT_POLICY=env.get("OMP_WAIT_POLICY", "PASSIVE"),
        )
        return env

    def command(self) -> list[str]:
        s = self.settings
        cmd = [
            str(self.wheel / "bin" / "tritonserver"),
            f"--model-repository={s.model_repository}",
            "--model-control-mode=explicit",
            "--load-model=*",
            f"--backend-directory={self.backends}",
            f"--http-address={s.host}",
            f"--http-port={s.triton_http_port}",
            f"--grpc-address={s.host}",
            f"--grpc-port={s.triton_grpc_port}",
            "--allow-metrics=true",
            "--allow-gpu-metrics=false",
            f"--metrics-address={s.host}",
            f"--metrics-port={s.triton_metrics_port}",
            "--strict-readiness=true",
            f"--http-restricted-api={ADMIN_APIS}:{ADMIN_HEADER}={admin_key(s)}",
            f"--grpc-restricted-protocol={ADMIN_APIS}:{ADMIN_HEADER}={admin_key(s)}",
            "--exit-on-error=true",
            "--exit-timeout-secs=15",
            # shared-memory names must not clash with another Triton on this machine
            f"--backend-config=python,shm-region-prefix-name={self.shm_prefix}",
        ]
        if not Path("/dev/nvidiactl").exists():
            cmd.append("--pinned-memory-pool-byte-size=0")
        return cmd

    def leftovers(self) -> list[Path]:
        """The Python backend's shared-memory regions of a killed server (same prefix)."""
        return sorted(Path("/dev/shm").glob(f"{self.shm_prefix}*"))

    @property
    def shm_prefix(self) -> str:
        return f"nlp{self.settings.triton_grpc_port}_"

    def healthy(self) -> bool:
        url = f"http://{self.settings.host}:{self.settings.triton_http_port}/v2/health/ready"
        try:
            with urllib.request.urlopen(url, timeout=3) as resp:
                return resp.status == 200
        except (OSError, urllib.error.URLError):
            return False

    def endpoints(self) -> dict[str, str]:
        s = self.settings
        return {
            "http": f"http://{s.host}:{s.triton_http_port}",
            "grpc": f"{s.host}:{s.triton_grpc_port}",
            "metrics": f"http://{s.host}:{s.triton_metrics_port}/metrics",
            "models": str(s.model_repository),
        }
