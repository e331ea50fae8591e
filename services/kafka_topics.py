"""Create the pipeline's topics up front and keep their configs (idempotent): the one place
topics are made.

The local broker auto-creates topics, but with whatever defaults it has; creating them
explicitly gives every topic the same partition count (parallelism for agents) and makes a
fresh cluster usable before the first message arrives. Two configs are set again on every
run, on new and existing topics alike, so a changed setting applies to old topics too:

- ``message.timestamp.type=LogAppendTime`` on every topic: the broker stamps each record
  with its arrival, whatever the producer sent. Retention deletes a segment once its newest
  timestamp is older than ``retention.ms``, so with the producer's clock (``CreateTime``) a
  backfill stamped with its posts' creation times would be deleted minutes after it was
  written, before any worker read it, and a record stamped in the future would hold its
  segment forever. The posts' and articles' own times travel in the messages
  (``created_at``, ``published_at``).
- ``retention.ms`` on the dead-letter topics (``*.dlq``): ``retention_days`` (default
  ``DLQ_RETENTION_DAYS``) instead of the broker's default, as they are an operator's
  worklist (``python -m services.dlq``) and a reason to look at them may come days later.

Any other override a topic carries (an operator's raised ``retention.ms`` on
``posts.raw`` for a backfill, say) is kept: Kafka's AlterConfigs replaces a topic's whole
set of overrides, so the current ones are read and merged first.
"""

from __future__ import annotations

import logging
from collections.abc import Iterable, Mapping

from kafka.admin import ConfigResource, ConfigResourceType, KafkaAdminClient, NewTopic
from kafka.errors import TopicAlreadyExistsError

from services.credentials import KafkaSecurity
from services.limits import DLQ_RETENTION_DAYS

log = logging.getLogger(__name__)

DLQ_SUFFIX = ".dlq"
#: DescribeConfigs' (v1+) ``config_source`` of an override set on the topic itself
#: (DYNAMIC_TOPIC_CONFIG); an entry is (name, value, read_only, config_source, ...)
TOPIC_OVERRIDE = 1


def retention_ms(days: float) -> str:
    return str(int(days * 24 * 3600 * 1000))


def topic_configs(name: str, dlq_retention_days: float) -> dict[str, str]:
    """The configs this module keeps on topic ``name`` (see the module docstring)."""
    configs = {"message.timestamp.type": "LogAppendTime"}
    if name.endswith(DLQ_SUFFIX):
        configs["retention.ms"] = retention_ms(dlq_retention_days)
    return configs


def _admin(bootstrap: str) -> KafkaAdminClient:
    return KafkaAdminClient(bootstrap_servers=bootstrap, client_id="nlp-topics",
                            **KafkaSecurity.from_env().kafka_options())


def ensure_topics(bootstrap: str, topics: Iterable[str], partitions: int = 4,
                  dlq_retention_days: float = DLQ_RETENTION_DAYS) -> list[str]:
    """Create the missing topics, set the configs this module keeps on all of them (see the
    module docstring); return the topics created."""
    admin = _admin(bootstrap)
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
        _set_configs(admin, {name: topic_configs(name, dlq_retention_days)
                             for name in wanted if name not in created})
        return created
    finally:
        admin.close()


def alter_topic_configs(bootstrap: str, topic: str, configs: Mapping[str, str]) -> None:
    """Set ``configs`` on ``topic``, keeping its other overrides (e.g. ``retention.ms``
    raised for a backfill, docs/operations.md#backfills-and-retention)."""
    admin = _admin(bootstrap)
    try:
        _set_configs(admin, {topic: dict(configs)})
    finally:
        admin.close()


def _set_configs(admin: KafkaAdminClient, wanted: Mapping[str, Mapping[str, str]]) -> None:
    """Merge ``wanted`` (topic -> configs) into each topic's current overrides and write
    those topics whose overrides change."""
    if not wanted:
        return
    current = _overrides(admin, list(wanted))
    changed = []
    for name, configs in wanted.items():
        merged = {**current.get(name, {}), **configs}
        if merged != current.get(name):
            changed.append(ConfigResource(ConfigResourceType.TOPIC, name, configs=merged))
    if changed:
        response = admin.alter_configs(changed)
        refused = [(r[2], r[1]) for r in response.resources if r[0] != 0]
        if refused:
            raise RuntimeError(f"the broker refused topic configs: {refused}")


def _overrides(admin: KafkaAdminClient, topics: list[str]) -> dict[str, dict[str, str]]:
    """Each topic's own overrides (not the broker's defaults)."""
    responses = admin.describe_configs([ConfigResource(ConfigResourceType.TOPIC, name)
                                        for name in topics])
    overrides: dict[str, dict[str, str]] = {}
    for response in responses:
        for _code, _message, _type, name, entries in response.resources:
            overrides[name] = {entry[0]: entry[1] for entry in entries
                               if entry[3] == TOPIC_OVERRIDE and entry[1] is not None}
    return overrides


def configs_in_force(admin: KafkaAdminClient, topics: Iterable[str], key: str) -> dict[str, str]:
    """Topic -> the value of ``key`` in force (its own, or the broker's default)."""
    responses = admin.describe_configs([ConfigResource(ConfigResourceType.TOPIC, name,
                                                       configs={key: None}) for name in topics])
    return {name: str(entry[1]) for response in responses
            for _code, _message, _type, name, entries in response.resources
            for entry in entries if entry[0] == key and entry[1] is not None}


def topic_config(bootstrap: str, topic: str, key: str) -> str:
    """The value of ``key`` in force for ``topic`` (its own, or the broker's default)."""
    admin = _admin(bootstrap)
    try:
        return configs_in_force(admin, [topic], key)[topic]
    finally:
        admin.close()


def topic_retention_ms(bootstrap: str, topic: str) -> int:
    """The ``retention.ms`` in force for ``topic`` (its own, or the broker's default)."""
    return int(topic_config(bootstrap, topic, "retention.ms"))
