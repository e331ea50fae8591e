"""Create the pipeline's topics up front (idempotent).

The local broker auto-creates topics, but with whatever defaults it has; creating them
explicitly gives every topic the same partition count (parallelism for agents) and makes a
fresh cluster usable before the first message arrives.
"""

from __future__ import annotations

import logging
from collections.abc import Iterable

from kafka.admin import KafkaAdminClient, NewTopic
from kafka.errors import TopicAlreadyExistsError

log = logging.getLogger(__name__)


def ensure_topics(bootstrap: str, topics: Iterable[str], partitions: int = 4) -> list[str]:
    """Create the missing topics; return the ones created."""
    admin = KafkaAdminClient(bootstrap_servers=bootstrap, client_id="nlp-topics")
    try:
        existing = set(admin.list_topics())
        missing = [t for t in topics if t not in existing]
        created = []
        for name in missing:
            try:
                admin.create_topics([NewTopic(name, partitions, replication_factor=1)])
                created.append(name)
            except TopicAlreadyExistsError:
                pass  # another process won the race
        if created:
            log.info("created topics %s (%d partitions)", created, partitions)
        return created
    finally:
        admin.close()
