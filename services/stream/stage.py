"""The enrichment stage skeleton: raw topic -> prepare -> infer (Triton) -> build -> output.

``tag_posts`` and ``headline_articles`` are stage definitions: each says how to prepare one
raw record (decode and validate; ``errors.Rejected`` for bad input), how to run a list of
prepared items through its models (``ModelError`` when a model refuses them), and how to
build one output record. Everything else is here, once:

- batching: the agent takes up to ``batch_size`` records (``stream.take_events``) and
  splits the valid ones into at most ``concurrency`` sub-batches sent to Triton at once
  (Triton's dynamic batcher merges them); up to ``in_flight`` batches run at once in one
  actor and their offsets are released in the order taken (``delivery.InOrder``: Faust
  itself commits past a gap when actors ack out of order). Outputs of batches in flight
  may reach the output topic out of order; every post is its own key, and indexing is
  idempotent by ``_id``;
- isolation: when a model refuses a sub-batch, its items are retried one by one so only
  the culprit is dead-lettered (``MODEL_ERROR``); anything else that fails a batch is
  isolated by ``delivery.guarded``;
- output: one record per item on the output topic, or a dead letter (``TOO_LARGE`` when
  the built record would exceed the broker's limit); offsets are acked only after every
  record was delivered (``delivery.publish``);
- logging: one line per batch with counts and time.
"""

from __future__ import annotations

import asyncio
import logging
import math
import time
from abc import ABC, abstractmethod
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from datetime import datetime
from typing import Generic, TypeVar

import faust

from services import errors
from services.config import RetryPolicy
from services.dlq import Origin
from services.stream.delivery import (
    Outgoing,
    consume_batches,
    dlq_record,
    now_utc,
    output_or_dead_letter,
    publish,
)
from services.stream.metrics import RECORDS
from services.triton import ModelError

log = logging.getLogger(__name__)

P = TypeVar("P")  # a prepared input (a valid post, an article)
R = TypeVar("R")  # what the models made of one item

#: Below this many items per request, splitting costs more than it overlaps.
MIN_SUB_BATCH = 8


@dataclass(frozen=True)
class Item(Generic[P]):
    """A valid input and the record it came from."""

    origin: Origin
    prepared: P


@dataclass(frozen=True)
class Failed:
    """A record that goes to the dead-letter topic, and why."""

    origin: Origin
    code: str
    reason: str


class Stage(ABC, Generic[P, R]):
    """What one enrichment agent does with one item; see the module docstring."""

    #: the Faust agent's name
    name: str
    #: sub-batches sent to the models at once
    concurrency: int = 1

    @abstractmethod
    def prepare(self, origin: Origin) -> P:
        """Decode and validate one raw record; raise ``errors.Rejected``."""

    @abstractmethod
    async def infer(self, items: Sequence[Item[P]]) -> list[R]:
        """The models' results for ``items``, in order; ``ModelError`` if refused."""

    @abstractmethod
    def build(self, item: Item[P], result: R, now: datetime) -> tuple[bytes, bytes]:
        """The output record (key, value) of one item."""

    def summary(self, results: Sequence[R]) -> str:
        """Extra words for the batch's log line (e.g. the model version)."""
        return ""

    async def close(self) -> None:
        """Release clients (called when the agent stops)."""


def split_valid(stage: Stage[P, R], origins: Sequence[Origin]) -> tuple[list[Item[P]],
                                                                         list[Failed]]:
    """Prepare each record; rejects become ``Failed``."""
    items: list[Item[P]] = []
    failed: list[Failed] = []
    for origin in origins:
        try:
            items.append(Item(origin, stage.prepare(origin)))
        except errors.Rejected as rej:
            failed.append(Failed(origin, rej.code, rej.reason))
    return items, failed


def sub_batches(items: Sequence[Item[P]], concurrency: int) -> list[list[Item[P]]]:
    """At most ``concurrency`` chunks of at least MIN_SUB_BATCH items (order kept)."""
    if not items:
        return []
    size = max(MIN_SUB_BATCH, math.ceil(len(items) / max(1, concurrency)))
    return [list(items[i : i + size]) for i in range(0, len(items), size)]


async def infer_isolating(stage: Stage[P, R], chunk: list[Item[P]]
                          ) -> tuple[list[tuple[Item[P], R]], list[Failed]]:
    """Run one chunk; if a model refuses it, go item by item to isolate the culprit."""
    try:
        results = await stage.infer(chunk)
    except ModelError as exc:
        if len(chunk) == 1:
            return [], [Failed(chunk[0].origin, errors.MODEL_ERROR, str(exc))]
        log.warning("%s: a model refused a batch of %d (%s); retrying one by one",
                    stage.name, len(chunk), exc)
        parts = await asyncio.gather(*(infer_isolating(stage, [it]) for it in chunk))
        return [d for ok, _ in parts for d in ok], [f for _, bad in parts for f in bad]
    return list(zip(chunk, results, strict=True)), []


async def infer_all(stage: Stage[P, R], items: Sequence[Item[P]]
                    ) -> tuple[list[tuple[Item[P], R]], list[Failed]]:
    chunks = sub_batches(items, stage.concurrency)
    parts = await asyncio.gather(*(infer_isolating(stage, c) for c in chunks))
    return [d for ok, _ in parts for d in ok], [f for _, bad in parts for f in bad]


def output_records(stage: Stage[P, R], done: Sequence[tuple[Item[P], R]],
                   failed: Sequence[Failed], out: faust.TopicT,
                   dlq: faust.TopicT) -> list[Outgoing]:
    now = now_utc()
    records = [output_or_dead_letter(out, *stage.build(item, result, now), item.origin, dlq)
               for item, result in done]
    records += [dlq_record(dlq, f.origin, f.code, f.reason) for f in failed]
    return records


async def handle_batch(stage: Stage[P, R], origins: Sequence[Origin], out: faust.TopicT,
                       dlq: faust.TopicT, retry: RetryPolicy) -> None:
    """One batch end to end; returns after every output record was delivered."""
    started = time.monotonic()
    items, rejected = split_valid(stage, origins)
    done, refused = await infer_all(stage, items)
    await publish(output_records(stage, done, rejected + refused, out, dlq), retry, stage.name)
    RECORDS.labels(stage.name, "done").inc(len(done))
    RECORDS.labels(stage.name, "dead_lettered").inc(len(rejected) + len(refused))
    log.info("%s: %d records -> %d done, %d dead-lettered in %.2fs %s", stage.name,
             len(origins), len(done), len(rejected) + len(refused),
             time.monotonic() - started, stage.summary([r for _, r in done]))


def register(app: faust.App, make_stage: Callable[[], Stage[P, R]], name: str,
             source: faust.TopicT, out: faust.TopicT, dlq: faust.TopicT, batch_size: int,
             within: float, retry: RetryPolicy, in_flight: int = 1) -> None:
    """Attach the agent ``name`` running the stage ``make_stage()`` to ``app``, with up to
    ``in_flight`` batches at once. The stage is made inside the agent: its Triton clients
    need the running event loop."""

    @app.agent(source, name=name)
    async def run_stage(stream: faust.StreamT) -> None:
        stage = make_stage()
        try:
            await consume_batches(
                stream, batch_size, within, in_flight,
                lambda origins: handle_batch(stage, origins, out, dlq, retry),
                dlq, retry, stage.name,
            )
        finally:
            await stage.close()
