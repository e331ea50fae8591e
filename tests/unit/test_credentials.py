"""Kafka and Elasticsearch credentials: from the environment, checked, never printed."""

from __future__ import annotations

import logging

import faust
import pytest

from services.credentials import CredentialsError, ElasticsearchAuth, KafkaSecurity


def test_nothing_set_means_plaintext_without_authentication() -> None:
    sec = KafkaSecurity.from_env({})
    assert sec.kafka_options() == {"security_protocol": "PLAINTEXT"}
    assert sec.faust_credentials() is None
    assert ElasticsearchAuth.from_env({}).client_options("http://127.0.0.1:9200") == {}


def test_sasl_ssl_reaches_every_kafka_client_and_faust() -> None:
    env = {"NLP_KAFKA_SECURITY_PROTOCOL": "sasl_ssl", "NLP_KAFKA_SASL_MECHANISM": "SCRAM-SHA-512",
           "NLP_KAFKA_USERNAME": "worker", "NLP_KAFKA_PASSWORD": "s3cret"}
    sec = KafkaSecurity.from_env(env)
    options = sec.kafka_options()
    assert options["security_protocol"] == "SASL_SSL"
    assert options["sasl_mechanism"] == "SCRAM-SHA-512"
    assert (options["sasl_plain_username"], options["sasl_plain_password"]) == ("worker", "s3cret")
    assert options["ssl_context"] is not None
    creds = sec.faust_credentials()
    assert isinstance(creds, faust.SASLCredentials) and creds.username == "worker"
    assert "s3cret" not in repr(sec)


@pytest.mark.parametrize(
    ("env", "fragment"),
    [
        ({"NLP_KAFKA_SECURITY_PROTOCOL": "SASL_SSL"}, "needs NLP_KAFKA_USERNAME"),
        ({"NLP_KAFKA_USERNAME": "u", "NLP_KAFKA_PASSWORD": "p"}, "set SASL_SSL"),
        ({"NLP_KAFKA_SECURITY_PROTOCOL": "TLS"}, "use one of"),
        ({"NLP_KAFKA_SECURITY_PROTOCOL": "SASL_SSL", "NLP_KAFKA_SASL_MECHANISM": "GSSAPI",
          "NLP_KAFKA_USERNAME": "u", "NLP_KAFKA_PASSWORD": "p"}, "use one of"),
    ],
)
def test_contradicting_kafka_settings_are_refused_with_what_to_set(
    env: dict[str, str], fragment: str
) -> None:
    with pytest.raises(CredentialsError, match=fragment):
        KafkaSecurity.from_env(env)


def test_credentials_over_plaintext_are_warned_about(caplog: pytest.LogCaptureFixture) -> None:
    with caplog.at_level(logging.WARNING):
        KafkaSecurity.from_env({"NLP_KAFKA_SECURITY_PROTOCOL": "SASL_PLAINTEXT",
                                "NLP_KAFKA_USERNAME": "u", "NLP_KAFKA_PASSWORD": "p"})
        auth = ElasticsearchAuth.from_env({"NLP_ES_USERNAME": "elastic", "NLP_ES_PASSWORD": "pw"})
        assert auth.client_options("http://es:9200")["http_auth"] == ("elastic", "pw")
    assert sum("plaintext" in r.message for r in caplog.records) == 2
    assert "pw" not in repr(auth)


def test_elasticsearch_needs_both_user_and_password() -> None:
    with pytest.raises(CredentialsError, match="both"):
        ElasticsearchAuth.from_env({"NLP_ES_USERNAME": "elastic"})
