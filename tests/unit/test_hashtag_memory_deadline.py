"""The memory under a burst. Its deadline counts from the POS tagger's answer, not from the
ask: Triton's queue is long, and a look-up that takes as long as the tagger is still in time.
(Elasticsearch itself is in tests/integration/test_hashtag_memory.py; here the look-up is
a timed stand-in, since the deadline is what is tested.)"""

from __future__ import annotations

import asyncio
import time
from collections import Counter
from collections.abc import Sequence
from datetime import UTC, datetime

from elasticsearch import Elasticsearch

from services.stream.memory import HashtagMemory, Probe, Recall, Trend, no_shard_ready

PROBES = [Probe("p", "Tehran election", "en", datetime(2009, 6, 13, tzinfo=UTC))]


class SlowMemory(HashtagMemory):
    """A memory whose look-up takes ``seconds``."""

    def __init__(self, seconds: float, timeout: float) -> None:
        super().__init__(Elasticsearch("http://127.0.0.1:9"), "posts-*", timeout=timeout,
                         counters=Counter())
        self.seconds = seconds

    def lookup(self, probes: Sequence[Probe]) -> list[Recall]:
        time.sleep(self.seconds)
        return [Recall(trending=[Trend("iranelection", 3, 1)]) for _ in probes]


def batch(memory: HashtagMemory, models_seconds: float) -> list[Recall] | None:
    """What ``Models._recall`` does: ask, let the tagger answer, then wait for the memory."""

    async def run() -> list[Recall] | None:
        lookup = memory.ask(PROBES)
        await asyncio.sleep(models_seconds)
        return await memory.answer(lookup)

    return asyncio.run(run())


def test_a_look_up_as_slow_as_the_models_is_in_time() -> None:
    memory = SlowMemory(seconds=0.6, timeout=0.3)  # 0.6 s > the 0.3 s deadline from the ask
    began = time.monotonic()
    recalls = batch(memory, models_seconds=0.5)
    assert recalls == [Recall(trending=[Trend("iranelection", 3, 1)])]
    assert time.monotonic() - began < 0.8  # the batch waited for the models, barely more
    assert memory.counters["hashtag_memory.timeouts"] == 0


def test_a_look_up_slower_than_the_models_by_more_than_the_timeout_falls_back() -> None:
    memory = SlowMemory(seconds=2.0, timeout=0.3)
    began = time.monotonic()
    assert batch(memory, models_seconds=0.2) is None
    assert time.monotonic() - began < 1.0  # 0.2 s of models + 0.3 s, not the 2 s look-up
    assert memory.counters["hashtag_memory.timeouts"] == 1
    memory.close()


def test_an_index_without_a_started_shard_is_an_empty_answer_not_a_failure() -> None:
    """What Elasticsearch 7.17 answered the demo's burst while the indexer created the
    run's first monthly index; a shard that failed for a reason is still a failure."""
    just_created = {"root_cause": [], "type": "search_phase_execution_exception",
                    "reason": "all shards failed", "phase": "query", "grouped": True,
                    "failed_shards": []}
    broken = {**just_created, "root_cause": [{"type": "query_shard_exception"}],
              "failed_shards": [{"shard": 0, "reason": {"type": "query_shard_exception"}}]}
    assert no_shard_ready(just_created)
    assert not no_shard_ready(broken)
    assert not no_shard_ready({"type": "index_not_found_exception", "root_cause": []})
