"""Retry with exponential backoff, logging every attempt.

Used wherever the pipeline waits for a dependency to come back (Triton while a model
loads, Elasticsearch during a restart, Kafka during a broker outage). Each retry is
logged at WARNING so an operator sees why processing is stalled; nothing gives up
silently. Only a finite ``RetryPolicy.max_wait`` (tests) ends in ``RetryGaveUp``.
"""

from __future__ import annotations

import asyncio
import itertools
import logging
import random
import time
from collections.abc import Awaitable, Callable, Iterator
from typing import TypeVar

from services.config import RetryPolicy

T = TypeVar("T")


#: Operations waiting on a dependency right now (what, how long, attempts, last error),
#: served by the worker's ``/health/`` page; empty when nothing waits.
WAITING: dict[int, dict[str, object]] = {}
_tokens = itertools.count()


class RetryGaveUp(RuntimeError):
    """The dependency stayed unavailable longer than ``RetryPolicy.max_wait``."""


def delays(policy: RetryPolicy, jitter: float = 0.1) -> Iterator[float]:
    """Backoff delays: initial, initial*factor, ... capped at max_delay, +-jitter."""
    delay = policy.initial
    while True:
        yield delay * (1.0 + random.uniform(-jitter, jitter))
        delay = min(delay * policy.factor, policy.max_delay)


async def retry_async(
    op: Callable[[], Awaitable[T]],
    *,
    policy: RetryPolicy,
    is_transient: Callable[[BaseException], bool],
    what: str,
    log: logging.Logger,
) -> T:
    """Await ``op()`` until it succeeds; retry transient errors, re-raise the others.

    While it waits, ``WAITING`` shows it (the worker's ``/health/`` page); the first
    failure and the recovery are the state changes an operator reads in the log."""
    started = time.monotonic()
    token = next(_tokens)
    try:
        for attempt, delay in enumerate(delays(policy), start=1):
            try:
                result = await op()
            except Exception as exc:
                if not is_transient(exc):
                    raise
                waited = time.monotonic() - started
                WAITING[token] = {"what": what, "waited_s": round(waited, 1),
                                  "attempts": attempt, "error": _brief(exc)}
                if policy.max_wait is not None and waited + delay > policy.max_wait:
                    raise RetryGaveUp(
                        f"{what}: still failing after {waited:.1f}s: {exc}") from exc
                log.log(
                    logging.WARNING if loud(attempt) else logging.DEBUG,
                    "%s failed (attempt %d, %.1fs so far): %s; retrying in %.2fs",
                    what, attempt, waited, _brief(exc), delay,
                )
                await asyncio.sleep(delay)
                continue
            if attempt > 1:
                log.warning("%s recovered after %d attempts in %.1fs", what, attempt,
                            time.monotonic() - started)
            return result
        raise AssertionError("unreachable")  # delays() never ends
    finally:
        WAITING.pop(token, None)


def loud(attempt: int) -> bool:
    """Which failed attempts are logged as warnings: the first three, then every tenth
    (about every 50 s at the 5 s cap), so a long outage stays visible without flooding
    the log; the recovery is always logged."""
    return attempt <= 3 or attempt % 10 == 0


def _brief(exc: BaseException) -> str:
    text = str(exc).splitlines()[0] if str(exc) else ""
    return f"{type(exc).__name__}: {text[:300]}"
