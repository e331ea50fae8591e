"""``python -m services.stream worker -l info``: create topics, then run the Faust worker."""

from __future__ import annotations

import logging

from services.kafka_topics import ensure_topics
from services.stream.app import app, config

log = logging.getLogger("services.stream")


def main() -> None:
    try:
        ensure_topics(config.servers.kafka_bootstrap, config.topics.all())
    except Exception as exc:  # the broker may be down; Faust will wait for it
        log.warning("could not create topics up front (%s); relying on auto-creation", exc)
    app.main()


if __name__ == "__main__":
    main()
