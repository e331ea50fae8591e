"""Run the headline suggestion server (gRPC), see proto/headline_api.proto.

    python -m services.headline_api [--port 50051] [--host 127.0.0.1]

Serves HeadlineService plus the standard health service (grpc.health.v1: "" and the
service name report SERVING once Triton's two headline models are ready) and server
reflection, and Prometheus metrics on http://HOST:METRICS_PORT/metrics. Settings come from
the environment: see services/headline_api/config.py (API key, TLS, limits, Triton).
Refuses to start (exit status 1, the reason on stderr) on unsafe settings, e.g. an API key
without TLS (see config.py). Stops gracefully on SIGTERM/SIGINT (in-flight requests get 5 s).
"""

from __future__ import annotations

import argparse
import asyncio
import json
import logging
import signal
import sys
from dataclasses import replace
from pathlib import Path

import grpc
from grpc_health.v1 import health_pb2, health_pb2_grpc
from grpc_health.v1.health import aio as health_aio
from grpc_reflection.v1alpha import reflection
from prometheus_client import start_http_server

from services.headline_api.config import MAX_MESSAGE_BYTES, ApiConfig
from services.headline_api.server import HeadlineApi
from services.pb import headline_api_pb2 as api
from services.pb import headline_api_pb2_grpc as api_grpc
from services.triton import CHANNEL_ARGS

SERVICE = api.DESCRIPTOR.services_by_name["HeadlineService"].full_name
log = logging.getLogger("headline_api")


def parse_args(argv: list[str] | None = None) -> argparse.Namespace:
    p = argparse.ArgumentParser(prog="python -m services.headline_api", description=__doc__,
                                formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("--port", type=int, help="gRPC port (default NLP_HEADLINE_API_PORT, 50051)")
    p.add_argument("--host", help="bind address (default NLP_HEADLINE_API_HOST, 127.0.0.1)")
    return p.parse_args(argv)


def build_server(cfg: ApiConfig, servicer: HeadlineApi,
                 health: health_aio.HealthServicer) -> tuple[grpc.aio.Server, int]:
    server = grpc.aio.server(options=[
        ("grpc.max_receive_message_length", MAX_MESSAGE_BYTES),
        ("grpc.max_send_message_length", MAX_MESSAGE_BYTES),
    ])
    api_grpc.add_HeadlineServiceServicer_to_server(servicer, server)
    health_pb2_grpc.add_HealthServicer_to_server(health, server)
    reflection.enable_server_reflection(
        (SERVICE, health_pb2.DESCRIPTOR.services_by_name["Health"].full_name,
         reflection.SERVICE_NAME), server)
    address = f"{cfg.host}:{cfg.port}"
    if cfg.tls_cert:
        port = server.add_secure_port(address, server_credentials(cfg))
    else:
        port = server.add_insecure_port(address)
    if port == 0:
        raise SystemExit(f"cannot listen on {address} (port in use?)")
    return server, port


def server_credentials(cfg: ApiConfig) -> grpc.ServerCredentials:
    """TLS; with a client CA, mutual TLS: clients without a certificate it signed are
    refused during the handshake, before any call reaches the servicer."""
    pair = [(Path(cfg.tls_key).read_bytes(), Path(cfg.tls_cert).read_bytes())]
    if not cfg.tls_client_ca:
        return grpc.ssl_server_credentials(pair)
    return grpc.ssl_server_credentials(pair, root_certificates=Path(cfg.tls_client_ca).read_bytes(),
                                       require_client_auth=True)


async def watch_models(cfg: ApiConfig, health: health_aio.HealthServicer) -> None:
    """Report SERVING while Triton's headline models are ready, NOT_SERVING otherwise."""
    import tritonclient.grpc.aio as triton

    client = triton.InferenceServerClient(cfg.servers.triton_grpc_url,
                                          channel_args=CHANNEL_ARGS)
    try:
        while True:
            try:
                ready = all([await client.is_model_ready(m) for m in
                             (cfg.headline_model, cfg.constrained_model)])
            except Exception:  # Triton down: not serving
                ready = False
            status = (health_pb2.HealthCheckResponse.SERVING if ready
                      else health_pb2.HealthCheckResponse.NOT_SERVING)
            for name in ("", SERVICE):
                await health.set(name, status)
            await asyncio.sleep(2.0)
    finally:
        await client.close()


async def serve(cfg: ApiConfig) -> None:
    servicer, health = HeadlineApi(cfg), health_aio.HealthServicer()
    await servicer.start()
    server, port = build_server(cfg, servicer, health)
    if cfg.metrics_port:
        start_http_server(cfg.metrics_port, addr=cfg.host)
    await server.start()
    watcher = asyncio.create_task(watch_models(cfg, health))
    log.info(json.dumps({"event": "started", "address": f"{cfg.host}:{port}",
                         "tls": bool(cfg.tls_cert), "mutual_tls": bool(cfg.tls_client_ca),
                         "api_key": bool(cfg.api_key), "max_concurrent": cfg.max_concurrent,
                         "queue_size": cfg.queue_size, "queue_wait": cfg.queue_wait,
                         "max_timeout": cfg.max_timeout, "metrics_port": cfg.metrics_port}))
    stop = asyncio.Event()
    loop = asyncio.get_running_loop()
    for sig in (signal.SIGTERM, signal.SIGINT):
        loop.add_signal_handler(sig, stop.set)
    await stop.wait()
    log.info('{"event": "stopping"}')
    watcher.cancel()
    await server.stop(grace=5)
    await servicer.stop()


def main(argv: list[str] | None = None) -> int:
    args = parse_args(argv)
    logging.basicConfig(level=logging.INFO, stream=sys.stderr, format="%(message)s")
    cfg = ApiConfig.from_env()
    cfg = replace(cfg, port=args.port or cfg.port, host=args.host or cfg.host)
    asyncio.run(serve(cfg))
    return 0


if __name__ == "__main__":
    sys.exit(main())
