"""Credentials for secured Kafka and Elasticsearch deployments, read from the environment.

The local stack runs both without security on loopback; a deployment that has them sets:

    NLP_KAFKA_SECURITY_PROTOCOL   PLAINTEXT (default), SSL, SASL_PLAINTEXT or SASL_SSL
    NLP_KAFKA_SASL_MECHANISM      PLAIN (default), SCRAM-SHA-256 or SCRAM-SHA-512
    NLP_KAFKA_USERNAME / NLP_KAFKA_PASSWORD
    NLP_KAFKA_CA_FILE             CA bundle for SSL / SASL_SSL (default: the system's)
    NLP_ES_USERNAME / NLP_ES_PASSWORD
    NLP_ES_CA_FILE                CA bundle when NLP_ES_SCHEME=https

Secrets never come from files in the repository; ``repr`` never shows a password. Every
Kafka client (Faust worker, producers, admin, the DLQ tool) and every Elasticsearch client
goes through ``kafka_options``/``faust_credentials`` and ``elasticsearch_options``.
"""

from __future__ import annotations

import logging
import os
import ssl
from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any

log = logging.getLogger(__name__)

KAFKA_PROTOCOLS = ("PLAINTEXT", "SSL", "SASL_PLAINTEXT", "SASL_SSL")
SASL_MECHANISMS = ("PLAIN", "SCRAM-SHA-256", "SCRAM-SHA-512")


class CredentialsError(ValueError):
    """The NLP_* security settings contradict each other; the message says how."""


@dataclass(frozen=True)
class KafkaSecurity:
    protocol: str = "PLAINTEXT"
    mechanism: str = "PLAIN"
    username: str = ""
    password: str = field(default="", repr=False)
    ca_file: str = ""

    @classmethod
    def from_env(cls, env: Mapping[str, str] | None = None) -> KafkaSecurity:
        e = os.environ if env is None else env
        sec = cls(
            protocol=e.get("NLP_KAFKA_SECURITY_PROTOCOL", "").strip().upper() or "PLAINTEXT",
            mechanism=e.get("NLP_KAFKA_SASL_MECHANISM", "").strip().upper() or "PLAIN",
            username=e.get("NLP_KAFKA_USERNAME", ""),
            password=e.get("NLP_KAFKA_PASSWORD", ""),
            ca_file=e.get("NLP_KAFKA_CA_FILE", "").strip(),
        )
        sec.check()
        return sec

    @property
    def sasl(self) -> bool:
        return self.protocol.startswith("SASL_")

    @property
    def tls(self) -> bool:
        return self.protocol.endswith("SSL")

    def check(self) -> None:
        if self.protocol not in KAFKA_PROTOCOLS:
            raise CredentialsError(f"NLP_KAFKA_SECURITY_PROTOCOL={self.protocol!r}: use one "
                                   f"of {', '.join(KAFKA_PROTOCOLS)}")
        if self.mechanism not in SASL_MECHANISMS:
            raise CredentialsError(f"NLP_KAFKA_SASL_MECHANISM={self.mechanism!r}: use one "
                                   f"of {', '.join(SASL_MECHANISMS)}")
        if self.sasl and not (self.username and self.password):
            raise CredentialsError(f"NLP_KAFKA_SECURITY_PROTOCOL={self.protocol} needs "
                                   "NLP_KAFKA_USERNAME and NLP_KAFKA_PASSWORD")
        if (self.username or self.password) and not self.sasl:
            raise CredentialsError("NLP_KAFKA_USERNAME/PASSWORD are set but "
                                   f"NLP_KAFKA_SECURITY_PROTOCOL is {self.protocol}: set "
                                   "SASL_SSL (or SASL_PLAINTEXT on a trusted network)")
        if self.sasl and not self.tls:
            log.warning("Kafka SASL credentials go over plaintext "
                        "(NLP_KAFKA_SECURITY_PROTOCOL=SASL_PLAINTEXT); use SASL_SSL unless "
                        "the network is trusted")

    def ssl_context(self) -> ssl.SSLContext | None:
        if not self.tls:
            return None
        return ssl.create_default_context(cafile=self.ca_file or None)

    def kafka_options(self) -> dict[str, Any]:
        """Keyword arguments for kafka-python's KafkaProducer/KafkaConsumer/KafkaAdminClient."""
        options: dict[str, Any] = {"security_protocol": self.protocol}
        if self.tls:
            options["ssl_context"] = self.ssl_context()
        if self.sasl:
            options.update(sasl_mechanism=self.mechanism, sasl_plain_username=self.username,
                           sasl_plain_password=self.password)
        return options

    def faust_credentials(self) -> Any:
        """Faust's ``broker_credentials`` (None: plaintext, no authentication)."""
        import faust

        if self.sasl:
            return faust.SASLCredentials(username=self.username, password=self.password,
                                         mechanism=self.mechanism,
                                         ssl_context=self.ssl_context())
        if self.tls:
            return faust.SSLCredentials(self.ssl_context())
        return None


@dataclass(frozen=True)
class ElasticsearchAuth:
    username: str = ""
    password: str = field(default="", repr=False)
    ca_file: str = ""

    @classmethod
    def from_env(cls, env: Mapping[str, str] | None = None) -> ElasticsearchAuth:
        e = os.environ if env is None else env
        auth = cls(e.get("NLP_ES_USERNAME", ""), e.get("NLP_ES_PASSWORD", ""),
                   e.get("NLP_ES_CA_FILE", "").strip())
        if bool(auth.username) != bool(auth.password):
            raise CredentialsError("set both NLP_ES_USERNAME and NLP_ES_PASSWORD, or neither")
        return auth

    def client_options(self, url: str) -> dict[str, Any]:
        """Keyword arguments for the Elasticsearch client of ``url``."""
        options: dict[str, Any] = {}
        if self.username:
            if not url.startswith("https://"):
                log.warning("Elasticsearch credentials go over plaintext (%s); set "
                            "NLP_ES_SCHEME=https unless the network is trusted", url)
            options["http_auth"] = (self.username, self.password)
        if url.startswith("https://") and self.ca_file:
            options["ca_certs"] = self.ca_file
        return options
