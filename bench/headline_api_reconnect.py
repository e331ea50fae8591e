"""Headline API after a Triton restart: how long until the API reaches Triton again, with
gRPC's default reconnect backoff and with the Triton clients' channel options
(`services.triton.CHANNEL_ARGS`), measured in one run.

    python -m bench headline-api-reconnect [--down 40]

Per variant: start `python -m services.headline_api`, check a request is served, stop
Triton, keep calling the API every 0.5 s for `down` seconds (each call ends UNAVAILABLE),
start Triton again and, from the moment Triton reports ready, call the API every 0.1 s
until a request is served. Reported: seconds from Triton ready to the first served request,
and the failed calls in between. The "grpc_defaults" variant runs the same server with
`CHANNEL_ARGS = None` (tritonclient's defaults: gRPC's reconnect backoff from 1 s growing
1.6 times per attempt up to 120 s).
"""

from __future__ import annotations

import os
import subprocess
import sys
import time
from pathlib import Path

from deploy.testing import free_ports
from services.settings import REPO_ROOT, Settings

ARTICLE = ("Toyota Motor Corp said on Tuesday it would recall about 1.2 million vehicles in "
           "Japan and the United States to fix faulty brake pedals. " * 4)
DEFAULTS = ("import runpy, services.triton as t; t.CHANNEL_ARGS = None; "
            "runpy.run_module('services.headline_api', run_name='__main__')")


def start(settings: Settings, log: Path, defaults: bool) -> tuple[subprocess.Popen, int]:
    port = free_ports(1)[0]
    env = {k: v for k, v in os.environ.items() if not k.startswith("NLP_HEADLINE_")}
    env.update(NLP_TRITON_GRPC_PORT=str(settings.triton_grpc_port), NLP_HEADLINE_METRICS_PORT="0")
    head = ["-c", DEFAULTS] if defaults else ["-m", "services.headline_api"]
    proc = subprocess.Popen([sys.executable, *head, "--port", str(port)], cwd=REPO_ROOT,
                            env=env, stdout=log.open("wb"), stderr=subprocess.STDOUT)
    deadline = time.monotonic() + 60
    while '"event": "started"' not in log.read_text(errors="replace"):
        if proc.poll() is not None or time.monotonic() > deadline:
            proc.kill()
            raise SystemExit(f"headline API did not start:\n{log.read_text()[-3000:]}")
        time.sleep(0.2)
    return proc, port


def served(stub, api) -> bool:
    import grpc

    try:
        stub.Suggest(api.SuggestRequest(article=ARTICLE, num_candidates=1), timeout=30)
        return True
    except grpc.RpcError:
        return False


def measure(settings: Settings, triton, log: Path, defaults: bool, down: float) -> dict:
    import grpc

    from services.pb import headline_api_pb2 as api
    from services.pb import headline_api_pb2_grpc as api_grpc

    proc, port = start(settings, log, defaults)
    try:
        with grpc.insecure_channel(f"127.0.0.1:{port}") as channel:
            stub = api_grpc.HeadlineServiceStub(channel)
            assert served(stub, api), "not served before the restart"
            triton.stop()
            until = time.monotonic() + down
            while time.monotonic() < until:
                served(stub, api)
                time.sleep(0.5)
            triton.start(timeout=300)
            ready, failed = time.monotonic(), 0
            while not served(stub, api):
                failed += 1
                if time.monotonic() - ready > 300:
                    break
                time.sleep(0.1)
            return {"seconds_from_triton_ready_to_first_served": round(
                time.monotonic() - ready, 2), "failed_calls_after_ready": failed}
    finally:
        proc.terminate()
        proc.wait(20)


def run(down: float) -> dict:
    from deploy.stack import servers

    settings = Settings.from_env()
    (triton,) = servers(["triton"], settings)
    triton.start(timeout=300)
    log = settings.state_dir / "logs" / "bench-headline-api-reconnect.log"
    log.parent.mkdir(parents=True, exist_ok=True)
    return {"benchmark": "headline-api-reconnect", "triton_down_seconds": down,
            "grpc_defaults": measure(settings, triton, log, True, down),
            "channel_args": measure(settings, triton, log, False, down)}
