"""``python -m services.stream worker -l info``: create topics, then run the Faust worker."""

from __future__ import annotations

import logging
import os
import sys

import mode.loop

from services.kafka_topics import ensure_topics

log = logging.getLogger("services.stream")


def worker_argv(argv: list[str], web_port: int | None) -> list[str]:
    """Faust's ``worker`` command re-enables the web server unless told otherwise.

    Its ``--with-web/--without-web`` flag defaults to on and overrides the app setting,
    so ``NLP_STREAM_WEB_PORT=0`` must become ``--without-web`` here.
    """
    explicit = {"--with-web", "--without-web"} & set(argv)
    if "worker" in argv and web_port is None and not explicit:
        return [*argv, "--without-web"]
    return argv


def event_loop() -> str:
    """uvloop unless ``FAUST_LOOP`` names another (``aio``: asyncio's own). Measured in
    docs/benchmarks.md: the worker spends ~0.06 ms less CPU per post on it (~10 %). Faust
    reads ``FAUST_LOOP`` only when it is first imported, and declaring the app's agents makes
    the loop, so the choice is made before the app is imported."""
    return os.environ.get("FAUST_LOOP", "uvloop")


def main() -> None:
    mode.loop.use(event_loop())
    from services.stream.app import app, config  # after the loop's choice: see event_loop

    try:
        ensure_topics(config.servers.kafka_bootstrap, config.topics.all(),
                      dlq_retention_days=config.dlq_retention_days)
    except Exception as exc:  # the broker may be down; Faust will wait for it
        log.warning("could not create topics up front (%s); relying on auto-creation", exc)
    sys.argv = worker_argv(sys.argv, config.web_port)
    app.main()


if __name__ == "__main__":
    main()
