"""Settings of the headline API server, from the environment (secrets never from the repo).

    NLP_HEADLINE_API_HOST       bind address (default 127.0.0.1: loopback only)
    NLP_HEADLINE_API_PORT       gRPC port (default 50051; --port overrides)
    NLP_HEADLINE_API_KEY        if set, every call needs metadata `x-api-key: <key>`
    NLP_HEADLINE_TLS_CERT       PEM certificate chain and
    NLP_HEADLINE_TLS_KEY        PEM private key: both set = TLS, neither = plaintext
    NLP_HEADLINE_TLS_CLIENT_CA  PEM CA certificates: clients must present a certificate it
                                signed (mutual TLS; needs TLS on)
    NLP_HEADLINE_ALLOW_INSECURE_KEY  1 = accept an API key over plaintext (tests, loopback
                                experiments); without it an API key without TLS refuses to start
    NLP_HEADLINE_MAX_CONCURRENT requests served at once (8)
    NLP_HEADLINE_QUEUE_SIZE     requests that may wait for a slot (16); 0 = no queue
    NLP_HEADLINE_QUEUE_WAIT     seconds a request waits for a slot at most (5); then, or
                                when the queue is full, RESOURCE_EXHAUSTED with retry-after-ms
    NLP_HEADLINE_METRICS_PORT   Prometheus /metrics on the bind address (default 9464; 0 off)
    NLP_HEADLINE_TIMEOUT        seconds a request may take without a client deadline (30)
    NLP_HEADLINE_MAX_TIMEOUT    longer client deadlines are cut to this many seconds (60)
    NLP_TRITON_HOST / NLP_TRITON_GRPC_PORT   the Triton server (services.settings)
    NLP_HEADLINE_MODEL / NLP_CONSTRAINED_MODEL  Triton model names
"""

from __future__ import annotations

import os
from collections.abc import Mapping
from dataclasses import dataclass, field

from nlp_models import registry
from services.settings import Settings

MAX_MESSAGE_BYTES = 1024 * 1024  # a 100,000-character article is at most ~400 KB of UTF-8
TRUE = ("1", "true", "yes")


class ConfigError(SystemExit):
    """A setting that must not be run with; the message says which and what to do."""


@dataclass(frozen=True)
class ApiConfig:
    servers: Settings = field(default_factory=Settings)
    host: str = "127.0.0.1"
    port: int = 50051
    api_key: str = ""
    tls_cert: str = ""
    tls_key: str = ""
    tls_client_ca: str = ""
    max_concurrent: int = 8
    queue_size: int = 16
    queue_wait: float = 5.0
    metrics_port: int = 9464
    default_timeout: float = 30.0
    max_timeout: float = 60.0
    headline_model: str = registry.HEADLINE.name
    constrained_model: str = registry.CONSTRAINED.name

    @classmethod
    def from_env(cls, env: Mapping[str, str] | None = None) -> ApiConfig:
        e = os.environ if env is None else env
        d = cls()  # the defaults are the fields' own: written once
        cert, key = e.get("NLP_HEADLINE_TLS_CERT", ""), e.get("NLP_HEADLINE_TLS_KEY", "")
        client_ca = e.get("NLP_HEADLINE_TLS_CLIENT_CA", "")
        api_key = e.get("NLP_HEADLINE_API_KEY", "")
        insecure_key = e.get("NLP_HEADLINE_ALLOW_INSECURE_KEY", "").lower() in TRUE
        check_security(api_key, bool(cert), bool(key), bool(client_ca), insecure_key)
        default_timeout = float(e.get("NLP_HEADLINE_TIMEOUT", d.default_timeout))
        max_timeout = float(e.get("NLP_HEADLINE_MAX_TIMEOUT", d.max_timeout))
        if not 0 < default_timeout <= max_timeout:
            raise ConfigError(f"NLP_HEADLINE_TIMEOUT ({default_timeout:g}) must be above 0 and "
                              f"at most NLP_HEADLINE_MAX_TIMEOUT ({max_timeout:g})")
        return cls(
            servers=Settings.from_env(e),
            host=e.get("NLP_HEADLINE_API_HOST", d.host),
            port=int(e.get("NLP_HEADLINE_API_PORT", d.port)),
            api_key=api_key,
            tls_cert=cert,
            tls_key=key,
            tls_client_ca=client_ca,
            max_concurrent=max(1, int(e.get("NLP_HEADLINE_MAX_CONCURRENT", d.max_concurrent))),
            queue_size=max(0, int(e.get("NLP_HEADLINE_QUEUE_SIZE", d.queue_size))),
            queue_wait=max(0.0, float(e.get("NLP_HEADLINE_QUEUE_WAIT", d.queue_wait))),
            metrics_port=int(e.get("NLP_HEADLINE_METRICS_PORT", d.metrics_port)),
            default_timeout=default_timeout,
            max_timeout=max_timeout,
            headline_model=e.get("NLP_HEADLINE_MODEL", d.headline_model),
            constrained_model=e.get("NLP_CONSTRAINED_MODEL", d.constrained_model),
        )


def check_security(api_key: str, cert: bool, key: bool, client_ca: bool,
                   insecure_key: bool) -> None:
    """Refuse settings that would leak secrets or silently not do what they say: an API key
    over plaintext is readable by anyone on the path, so it needs TLS or an explicit
    override; half a TLS configuration is an error, not plaintext."""
    if cert != key:
        raise ConfigError("set both NLP_HEADLINE_TLS_CERT and NLP_HEADLINE_TLS_KEY, or neither")
    if client_ca and not cert:
        raise ConfigError("NLP_HEADLINE_TLS_CLIENT_CA (mutual TLS) needs NLP_HEADLINE_TLS_CERT "
                          "and NLP_HEADLINE_TLS_KEY")
    if api_key and not cert and not insecure_key:
        raise ConfigError("NLP_HEADLINE_API_KEY is set but TLS is off, so the key would cross "
                          "the network in plaintext: set NLP_HEADLINE_TLS_CERT and "
                          "NLP_HEADLINE_TLS_KEY, or NLP_HEADLINE_ALLOW_INSECURE_KEY=1 to accept "
                          "that (loopback tests only)")
