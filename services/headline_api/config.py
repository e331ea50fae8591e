"""Settings of the headline API server, from the environment (secrets never from the repo).

Each field names its variable (``services.env``); the table is in docs/headline-api.md
(``python -m services.settings_docs``). The Triton server is ``services.settings``'.
"""

from __future__ import annotations

import os
from collections.abc import Mapping
from dataclasses import dataclass, field

from nlp_models import registry
from services.env import at_least, read, setting
from services.settings import Settings

MAX_MESSAGE_BYTES = 1024 * 1024  # a 100,000-character article is at most ~400 KB of UTF-8


class ConfigError(SystemExit):
    """A setting that must not be run with; the message says which and what to do."""


@dataclass(frozen=True)
class ApiConfig:
    servers: Settings = field(default_factory=Settings)
    host: str = setting("127.0.0.1", env="NLP_HEADLINE_API_HOST",
                        doc="bind address (`--host` overrides): loopback only by default")
    port: int = setting(50051, env="NLP_HEADLINE_API_PORT", doc="gRPC port (`--port` overrides)")
    api_key: str = setting("", env="NLP_HEADLINE_API_KEY", doc="if set, calls need metadata "
                           "`x-api-key` (else UNAUTHENTICATED); needs TLS, see below")
    tls_cert: str = setting("", env="NLP_HEADLINE_TLS_CERT",
                            doc="PEM certificate chain: with the key, TLS on (both or neither)")
    tls_key: str = setting("", env="NLP_HEADLINE_TLS_KEY", doc="PEM private key")
    tls_client_ca: str = setting("", env="NLP_HEADLINE_TLS_CLIENT_CA", doc="PEM CA "
                                 "certificates: mutual TLS, clients must present a certificate "
                                 "signed by one of them (needs TLS on)")
    allow_insecure_key: bool = setting(False, env="NLP_HEADLINE_ALLOW_INSECURE_KEY",
                                       doc="`1`: accept an API key without TLS (loopback "
                                       "tests); without it the server refuses to start")
    max_concurrent: int = setting(8, env="NLP_HEADLINE_MAX_CONCURRENT", parse=at_least(1),
                                  doc="requests in progress at once")
    queue_size: int = setting(16, env="NLP_HEADLINE_QUEUE_SIZE", parse=at_least(0),
                              doc="requests that may wait for a slot beyond those; 0: no queue")
    queue_wait: float = setting(5.0, env="NLP_HEADLINE_QUEUE_WAIT", parse=at_least(0, float),
                                doc="seconds a request waits for a slot at most (never past its "
                                "own deadline); then, or with the queue full, "
                                "RESOURCE_EXHAUSTED with a retry hint")
    metrics_port: int = setting(9464, env="NLP_HEADLINE_METRICS_PORT", doc="Prometheus "
                                "`/metrics` (`headline_api_requests_total{method,code}`, "
                                "`headline_api_request_seconds`, `headline_api_errors_total"
                                "{code}`, gauges `headline_api_in_progress`, "
                                "`headline_api_waiting`); 0: off")
    default_timeout: float = setting(30.0, env="NLP_HEADLINE_TIMEOUT", doc="seconds a request "
                                     "may take when the client sets no deadline (at most "
                                     "`NLP_HEADLINE_MAX_TIMEOUT`)")
    max_timeout: float = setting(60.0, env="NLP_HEADLINE_MAX_TIMEOUT", doc="cap on client "
                                 "deadlines: a longer deadline is cut to this many seconds")
    headline_model: str = setting(registry.HEADLINE.name, env="NLP_HEADLINE_MODEL",
                                  doc="the full headline generator's Triton name")
    constrained_model: str = setting(registry.CONSTRAINED.name, env="NLP_CONSTRAINED_MODEL",
                                     doc="the constrained one's")

    def __post_init__(self) -> None:
        check_security(self.api_key, bool(self.tls_cert), bool(self.tls_key),
                       bool(self.tls_client_ca), self.allow_insecure_key)
        if not 0 < self.default_timeout <= self.max_timeout:
            raise ConfigError(f"NLP_HEADLINE_TIMEOUT ({self.default_timeout:g}) must be above 0 "
                              f"and at most NLP_HEADLINE_MAX_TIMEOUT ({self.max_timeout:g})")

    @classmethod
    def from_env(cls, env: Mapping[str, str] | None = None) -> ApiConfig:
        e = os.environ if env is None else env
        return cls(servers=Settings.from_env(e), **read(cls, e))


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
