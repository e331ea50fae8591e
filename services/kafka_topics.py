"""Create the pipeline's topics up front (idempotent), the one place topics are made.

The local broker auto-creates topics, but with whatever defaults it has; creating them
explicitly gives every topic the same partition count (parallelism for agents) and makes a
fresh cluster usable before the first message arrives. Dead-letter topics (``*.dlq``) keep
their records for ``retention_days`` (default ``DLQ_RETENTION_DAYS``) instead of the
broker's default: they are an operator's worklist (``python -m services.dlq``), and a
reason to look at them may come days later. Their retention is set again on every run, so
changing ``NLP_DLQ_RETENTION_DAYS`` applies to existing topics too.
"""

from __future__ import annotations

import logging
from collections.abc import Iterable

from kafka.admin import ConfigResource, ConfigResourceType, KafkaAdminClient, NewTopic
from kafka.errors import TopicAlreadyExistsError

from services.credentials import KafkaSecurity
from services.limits import DLQ_RETENTION_DAYS

log = logging.getLogger(__name__)

DLQ_SUFFIX = ".dlq"


def retention_ms(days: float) -> str:
    return str(int(days * 24 * 3600 * 1000))


def topic_configs(name: str, dlq_retention_days: float) -> dict[str, str]:
    if name.endswith(DLQ_SUFFIX):
        return {"retention.ms": retention_ms(dlq_retention_days)}
    return {}


def ensure_topics(bootstrap: str, topics: Iterable[str], partitions: int = 4,
                  dlq_retention_days: float = DLQ_RETENTION_DAYS) -> list[str]:
    """Create the missing topics and set the dead-letter topics' retention; return the
    topics created."""
    admin = KafkaAdminClient(bootstrap_servers=bootstrap, client_id="nlp-topics",
                             **KafkaSecurity.from_env().kafka_options())
    try:
        wanted = list(dict.fromkeys(topics))
        existing = set(admin.list_topics())
        created = []
        for name in (t for t in wanted if t not in existing):
            try:
                admin.create_topics([NewTopic(name, partitions, replication_factor=1,
                                              topic_configs=topic_configs(name,
                                                                          dlq_retention_days))])
                created.append(name)
            except TopicAlreadyExistsError:
                pass  # another process won the race
        if created:
            log.info("created topics %s (%d partitions)", created, partitions)
        dlqs = [t for t in wanted if t.endswith(DLQ_SUFFIX) and t not in created]
        if dlqs:
            admin.alter_configs([ConfigResource(ConfigResourceType.TOPIC, name,
                                                configs=topic_configs(name, dlq_retention_days))
                                 for name in dlqs])
        return created
    finally:
        admin.close()


def topic_retention_ms(bootstrap: str, topic: str) -> int:
    """The ``retention.ms`` in force for ``topic`` (its own, or the broker's default)."""
    admin = KafkaAdminClient(bootstrap_servers=bootstrap, client_id="nlp-topics",
                             **KafkaSecurity.from_env().kafka_options())
    try:
        [response] = admin.describe_configs([ConfigResource(ConfigResourceType.TOPIC, topic,
                                                            configs={"retention.ms": None})])
        entries = [e for resource in response.resources for e in resource[4]]
        return next(int(e[1]) for e in entries if e[0] == "retention.ms")
    finally:
        admin.close()
