"""Settings of the headline API server, from the environment (secrets never from the repo).

    NLP_HEADLINE_API_HOST       bind address (default 127.0.0.1: loopback only)
    NLP_HEADLINE_API_PORT       gRPC port (default 50051; --port overrides)
    NLP_HEADLINE_API_KEY        if set, every call needs metadata `x-api-key: <key>`
    NLP_HEADLINE_TLS_CERT       PEM certificate chain and
    NLP_HEADLINE_TLS_KEY        PEM private key: both set = TLS, neither = plaintext
    NLP_HEADLINE_MAX_CONCURRENT requests served at once; more get RESOURCE_EXHAUSTED (8)
    NLP_HEADLINE_METRICS_PORT   Prometheus /metrics on the bind address (default 9464; 0 off)
    NLP_HEADLINE_TIMEOUT        seconds a request may take without a client deadline (30)
    NLP_TRITON_HOST / NLP_TRITON_GRPC_PORT   the Triton server (deploy.settings)
    NLP_HEADLINE_MODEL / NLP_CONSTRAINED_MODEL  Triton model names
"""

from __future__ import annotations

import os
from collections.abc import Mapping
from dataclasses import dataclass, field

from deploy.settings import Settings

MAX_MESSAGE_BYTES = 1024 * 1024  # a 100,000-character article is at most ~400 KB of UTF-8


@dataclass(frozen=True)
class ApiConfig:
    servers: Settings = field(default_factory=Settings)
    host: str = "127.0.0.1"
    port: int = 50051
    api_key: str = ""
    tls_cert: str = ""
    tls_key: str = ""
    max_concurrent: int = 8
    metrics_port: int = 9464
    default_timeout: float = 30.0
    headline_model: str = "headline_generator"
    constrained_model: str = "constrained_headline_generator"

    @classmethod
    def from_env(cls, env: Mapping[str, str] | None = None) -> ApiConfig:
        e = os.environ if env is None else env
        cert, key = e.get("NLP_HEADLINE_TLS_CERT", ""), e.get("NLP_HEADLINE_TLS_KEY", "")
        if bool(cert) != bool(key):
            raise SystemExit("set both NLP_HEADLINE_TLS_CERT and NLP_HEADLINE_TLS_KEY, or neither")
        return cls(
            servers=Settings.from_env(e),
            host=e.get("NLP_HEADLINE_API_HOST", "127.0.0.1"),
            port=int(e.get("NLP_HEADLINE_API_PORT", 50051)),
            api_key=e.get("NLP_HEADLINE_API_KEY", ""),
            tls_cert=cert,
            tls_key=key,
            max_concurrent=max(1, int(e.get("NLP_HEADLINE_MAX_CONCURRENT", 8))),
            metrics_port=int(e.get("NLP_HEADLINE_METRICS_PORT", 9464)),
            default_timeout=float(e.get("NLP_HEADLINE_TIMEOUT", 30)),
            headline_model=e.get("NLP_HEADLINE_MODEL", "headline_generator"),
            constrained_model=e.get("NLP_CONSTRAINED_MODEL", "constrained_headline_generator"),
        )
