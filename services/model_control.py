"""Triton's model-control API behind its admin key: load a model, see which versions serve.

Triton runs with ``--http-restricted-api`` / ``--grpc-restricted-protocol`` for the APIs
that change the server (load/unload, shared memory, tracing, logging): a request must carry
the header ``triton-admin-key: <key>``. The key is ``NLP_TRITON_ADMIN_KEY`` or, for the
local stack, a random key created once in ``<state>/triton/admin.key`` (mode 0600), so
only the stack's user can switch models. The server (deploy/triton.py), the refresh path
(training/publish.py) and the benches read it from here.
"""

from __future__ import annotations

import os
import secrets
import time
from dataclasses import dataclass

from services.settings import Settings

#: Triton APIs that change or expose the server answer only requests carrying the key.
ADMIN_APIS = "model-repository,shared-memory,trace,logging"
ADMIN_HEADER = "triton-admin-key"


def admin_key(settings: Settings) -> str:
    """``NLP_TRITON_ADMIN_KEY``, or a random key kept in ``<state>/triton/admin.key``
    (created once, mode 0600: only the stack's user can read it).

    Caveat: Triton takes the key on its command line, which other local users can read
    in the process list unless /proc is mounted with ``hidepid``; on a shared host run
    Triton in its container (docker-compose.yml), where they cannot."""
    key = os.environ.get("NLP_TRITON_ADMIN_KEY", "").strip()
    if key:
        return key
    path = settings.state_dir / "triton" / "admin.key"
    if not path.exists():
        path.parent.mkdir(parents=True, exist_ok=True)
        try:
            fd = os.open(path, os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o600)
        except FileExistsError:  # another process made it first
            return path.read_text().strip()
        with os.fdopen(fd, "w") as out:
            out.write(secrets.token_urlsafe(32) + "\n")
    return path.read_text().strip()


def admin_headers(settings: Settings, grpc: bool = False) -> dict[str, str]:
    """HTTP headers (or gRPC metadata: Triton expects the name prefixed) for Triton's
    restricted admin APIs."""
    name = f"triton-grpc-protocol-{ADMIN_HEADER}" if grpc else ADMIN_HEADER
    return {name: admin_key(settings)}


class ModelControlError(RuntimeError):
    """Triton refused or failed a model-control request; the message says what it said."""


class TritonUnreachable(ModelControlError):
    """No Triton answered at the address (refused, timed out): nothing was asked of it."""


@dataclass
class ModelControl:
    """Load requests and version readiness over Triton's HTTP API (``url`` is host:port)."""

    url: str
    settings: Settings

    def _client(self):
        import tritonclient.http as httpclient

        return httpclient.InferenceServerClient(self.url, network_timeout=600.0,
                                                connection_timeout=10.0)

    def load(self, model: str) -> None:
        """Ask Triton to (re)load ``model`` from the repository. Triton loads the versions
        its version policy selects next to the serving ones and switches when they are
        ready; requests in flight finish on the old version. If the load fails, the old
        version keeps serving and this raises with Triton's message."""
        from tritonclient.utils import InferenceServerException

        client = self._client()
        try:
            client.load_model(model, headers=admin_headers(self.settings))
        except InferenceServerException as exc:
            raise ModelControlError(f"Triton at {self.url} did not load {model}: "
                                    f"{exc.message()}") from exc
        except OSError as exc:
            raise TritonUnreachable(f"no Triton answers at {self.url} ({exc})") from exc
        finally:
            client.close()

    def ready_versions(self, model: str) -> list[str]:
        """Versions of ``model`` Triton reports READY (the repository index API)."""
        from tritonclient.utils import InferenceServerException

        client = self._client()
        try:
            index = client.get_model_repository_index(headers=admin_headers(self.settings))
        except InferenceServerException as exc:
            raise ModelControlError(f"Triton at {self.url}: {exc.message()}") from exc
        except OSError as exc:
            raise TritonUnreachable(f"no Triton answers at {self.url} ({exc})") from exc
        finally:
            client.close()
        return sorted((str(row.get("version", "")) for row in index
                       if row.get("name") == model and row.get("state") == "READY"), key=_num)

    def serving_version(self, model: str) -> int | None:
        """The version of ``model`` Triton serves now: the highest READY one (during a
        switch the new version is READY before the old one is unloaded), None if none is
        ready. Raises TritonUnreachable when no server answers."""
        ready = [int(v) for v in self.ready_versions(model) if v.isdigit()]
        return max(ready) if ready else None

    def wait_serving(self, model: str, version: str, timeout: float = 300.0) -> None:
        """Block until ``version`` is the only READY version of ``model``: the switch is
        done (the old version finished its requests and was unloaded)."""
        deadline = time.monotonic() + timeout
        seen: list[str] = []
        while time.monotonic() < deadline:
            seen = self.ready_versions(model)
            if seen == [version]:
                return
            time.sleep(0.2)
        raise ModelControlError(f"{model} version {version} not the one serving after "
                                f"{timeout:.0f}s (ready: {seen or 'none'})")


def _num(version: str) -> int:
    return int(version) if version.isdigit() else -1
