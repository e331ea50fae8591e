"""The memory under a burst. Its deadline counts from the POS tagger's answer, not from the
ask: Triton's queue is long, and a look-up that takes as long as the tagger is still in time.
Past the deadline the generator runs for the whole batch, and the memory's answer is still
taken while it runs. (Elasticsearch itself is in tests/integration/test_hashtag_memory.py;
here the look-up is a timed stand-in, since the deadline is what is tested.)"""

from __future__ import annotations

import asyncio
import time
from collections import Counter
from collections.abc import Sequence
from datetime import UTC, datetime

from elasticsearch import Elasticsearch

from services.stream.memory import HashtagMemory, Probe, Recall, Trend, no_shard_ready
from services.stream.tag_posts import recall_by_deadline

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


def batch(memory: HashtagMemory, models_seconds: float, generator_seconds: float = 0.0
          ) -> tuple[list[Recall] | None, bool]:
    """The batch's recalls (``tag_posts.recall_by_deadline``) with a tagger and a generator
    that take the seconds given, and whether the generator was started for the whole batch."""

    async def run() -> tuple[list[Recall] | None, bool]:
        tagging = asyncio.ensure_future(asyncio.sleep(models_seconds))
        recalls, generating = await recall_by_deadline(memory, PROBES, tagging,
                                                       lambda: asyncio.sleep(generator_seconds))
        if generating is not None:
            await generating
        return recalls, generating is not None

    return asyncio.run(run())


def test_a_look_up_as_slow_as_the_models_is_in_time() -> None:
    memory = SlowMemory(seconds=0.6, timeout=0.3)  # 0.6 s > the 0.3 s deadline from the ask
    began = time.monotonic()
    recalls, generated = batch(memory, models_seconds=0.5)
    assert recalls == [Recall(trending=[Trend("iranelection", 3, 1)])]
    assert not generated  # the caller asks the generator only where the memory lacks
    assert time.monotonic() - began < 0.8  # the batch waited for the models, barely more
    assert memory.counters["hashtag_memory.timeouts"] == 0


def test_a_look_up_past_its_deadline_is_taken_while_the_generator_answers_the_batch() -> None:
    memory = SlowMemory(seconds=0.8, timeout=0.3)  # past 0.2 s of tagger + 0.3 s
    recalls, generated = batch(memory, models_seconds=0.2, generator_seconds=1.0)
    assert recalls == [Recall(trending=[Trend("iranelection", 3, 1)])]
    assert generated
    assert memory.counters["hashtag_memory.late"] == 1
    assert memory.counters["hashtag_memory.timeouts"] == 0


def test_a_look_up_slower_than_the_models_the_timeout_and_the_generator_falls_back() -> None:
    memory = SlowMemory(seconds=2.0, timeout=0.3)
    began = time.monotonic()
    assert batch(memory, models_seconds=0.2, generator_seconds=0.3) == (None, True)
    assert time.monotonic() - began < 1.2  # 0.2 s of models + 0.3 + 0.3, not the 2 s look-up
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
