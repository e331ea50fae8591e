"""Agent ``tag_posts``: posts.raw -> validate -> Triton pos_tagger + hashtag_generator
-> posts.tagged.

Both models get each sub-batch at the same time (``gather``), so a post costs the slower
of the two, not their sum. Without a hashtag model configured (``NLP_HASHTAG_MODEL=``),
posts are tagged only.

Concurrency choice: the agent runs with concurrency 1 and takes up to ``tag_batch_size``
records (``stream.take_events(n, within=t)``); the batch is split into at most
``triton_concurrency`` sub-batches that are sent to Triton concurrently (``gather``), and
Triton's dynamic batcher merges them as it sees fit. The batch's offsets are acked only
after all sub-batches were tagged and every output record (posts.tagged and DLQ) was
delivered, so offsets never run ahead of downstream writes. Agent concurrency > 1 would
also overlap batches, but several actors then share one consumer and ack out of order;
Faust commits only gap-free offset ranges, yet a crash in one actor would leave the others'
work uncommitted and re-run, and ordering per key would be lost. Splitting within one
batch keeps "batch done => offsets committable" trivially true.

Bad input never crashes the agent: decode and validation errors and texts the model
refuses go to posts.raw.dlq with a DeadLetter envelope; the rest of the batch proceeds.
"""

from __future__ import annotations

import asyncio
import logging
import math
import time
from collections.abc import Sequence
from dataclasses import dataclass

import faust

from services import errors
from services.config import PipelineConfig
from services.dlq import Origin
from services.pb import messages_pb2 as pb
from services.posts import (
    PreparedPost,
    build_tagged_post,
    hashtag_language,
    pos_applies,
    prepare_post,
)
from services.stream.batching import (
    Outgoing,
    dlq_record,
    guarded,
    now_utc,
    output_or_dead_letter,
    publish,
)
from services.triton import (
    HashtagBatch,
    HashtagClient,
    HashtagResult,
    ModelError,
    PosTaggerClient,
    TagBatch,
    TagResult,
)

log = logging.getLogger(__name__)

#: Below this many texts per request, splitting costs more than it overlaps.
MIN_SUB_BATCH = 8


@dataclass(frozen=True)
class Item:
    """A valid post and where it came from."""

    origin: Origin
    prepared: PreparedPost


@dataclass(frozen=True)
class Tagged:
    item: Item
    result: TagResult | None  # None: the POS tagger does not apply to this post
    model: pb.ModelRef
    hashtags: HashtagResult | None = None
    hashtag_model: pb.ModelRef | None = None


class Models:
    """The Triton models every post goes through, called concurrently per batch."""

    def __init__(self, tagger: PosTaggerClient, hashtagger: HashtagClient | None) -> None:
        self.tagger, self.hashtagger = tagger, hashtagger

    async def run(
        self, items: Sequence[Item]
    ) -> tuple[list[TagResult | None], pb.ModelRef, HashtagBatch | None]:
        """Tags and hashtags of ``items``; ModelError names the model that refused.

        Posts the POS tagger does not apply to (see ``pos_applies``) get no tokens."""
        texts = [it.prepared.post.text for it in items]
        langs = [hashtag_language(it.prepared.post) for it in items]
        tagged = [i for i, it in enumerate(items) if pos_applies(it.prepared.post)]

        async def named(model: str, call):
            try:
                return await call
            except ModelError as exc:
                raise ModelError(f"{model}: {exc}") from exc

        calls = [named(self.tagger.model, self.tagger.tag([texts[i] for i in tagged]))]
        if self.hashtagger is not None:
            calls.append(named(self.hashtagger.model, self.hashtagger.generate(texts, langs)))
        results = await asyncio.gather(*calls)
        batch: TagBatch = results[0]
        pos: list[TagResult | None] = [None] * len(items)
        for i, result in zip(tagged, batch.results, strict=True):
            pos[i] = result
        model = pb.ModelRef(name=batch.model_name, version=batch.model_version)
        return pos, model, (results[1] if len(results) > 1 else None)

    async def close(self) -> None:
        await self.tagger.close()
        if self.hashtagger is not None:
            await self.hashtagger.close()


@dataclass(frozen=True)
class Failed:
    origin: Origin
    code: str
    reason: str


def split_valid(
    origins: Sequence[Origin], cfg: PipelineConfig
) -> tuple[list[Item], list[Failed]]:
    """Decode/validate/truncate each record; rejects become ``Failed``."""
    items: list[Item] = []
    failed: list[Failed] = []
    for origin in origins:
        try:
            prepared = prepare_post(
                origin.value, max_bytes=cfg.max_raw_bytes, max_chars=cfg.max_post_chars,
                key=origin.key,
            )
            items.append(Item(origin, prepared))
        except errors.Rejected as rej:
            failed.append(Failed(origin, rej.code, rej.reason))
    return items, failed


def sub_batches(items: Sequence[Item], concurrency: int) -> list[list[Item]]:
    """At most ``concurrency`` chunks of at least MIN_SUB_BATCH items (order kept)."""
    if not items:
        return []
    size = max(MIN_SUB_BATCH, math.ceil(len(items) / max(1, concurrency)))
    return [list(items[i : i + size]) for i in range(0, len(items), size)]


async def tag_chunk(chunk: list[Item], models: Models) -> tuple[list[Tagged], list[Failed]]:
    """Run one chunk through the models; if Triton refuses it, go item by item to isolate
    the culprit."""
    try:
        pos, model, hashtags = await models.run(chunk)
    except ModelError as exc:
        if len(chunk) == 1:
            return [], [Failed(chunk[0].origin, errors.MODEL_ERROR, str(exc))]
        log.warning("a model refused a batch of %d (%s); retrying one by one", len(chunk), exc)
        parts = await asyncio.gather(*(tag_chunk([it], models) for it in chunk))
        return [t for ok, _ in parts for t in ok], [f for _, bad in parts for f in bad]
    if hashtags is None:
        return [Tagged(it, res, model) for it, res in zip(chunk, pos, strict=True)], []
    hmodel = pb.ModelRef(name=hashtags.model_name, version=hashtags.model_version)
    return [
        Tagged(it, res, model, tags, hmodel)
        for it, res, tags in zip(chunk, pos, hashtags.results, strict=True)
    ], []


async def tag_all(
    items: Sequence[Item], models: Models, concurrency: int
) -> tuple[list[Tagged], list[Failed]]:
    parts = await asyncio.gather(*(tag_chunk(c, models) for c in sub_batches(items, concurrency)))
    return [t for ok, _ in parts for t in ok], [f for _, bad in parts for f in bad]


def output_records(
    tagged: Sequence[Tagged], failed: Sequence[Failed], out: faust.TopicT, dlq: faust.TopicT
) -> list[Outgoing]:
    now = now_utc()
    records = [
        output_or_dead_letter(
            out,
            t.item.prepared.post.id.encode("utf-8"),
            build_tagged_post(
                t.item.prepared, t.result, t.model, now, t.hashtags, t.hashtag_model
            ).SerializeToString(),
            t.item.origin,
            dlq,
        )
        for t in tagged
    ]
    records += [dlq_record(dlq, f.origin, f.code, f.reason) for f in failed]
    return records


async def handle_batch(
    origins: Sequence[Origin],
    models: Models,
    cfg: PipelineConfig,
    out: faust.TopicT,
    dlq: faust.TopicT,
) -> None:
    """One batch end to end; returns after every output record was delivered."""
    started = time.monotonic()
    items, rejected = split_valid(origins, cfg)
    tagged, refused = await tag_all(items, models, cfg.triton_concurrency)
    await publish(output_records(tagged, rejected + refused, out, dlq), cfg.retry, "tag_posts")
    version = tagged[0].model.version if tagged else "-"
    log.info(
        "tag_posts: %d records -> %d tagged, %d dead-lettered in %.2fs (pos model v%s)",
        len(origins), len(tagged), len(rejected) + len(refused),
        time.monotonic() - started, version,
    )


def register(
    app: faust.App,
    cfg: PipelineConfig,
    source: faust.TopicT,
    out: faust.TopicT,
    dlq: faust.TopicT,
) -> None:
    """Attach the agent to ``app``."""

    @app.agent(source, name="tag_posts")
    async def tag_posts(stream: faust.StreamT) -> None:
        url = cfg.servers.triton_grpc_url
        models = Models(
            PosTaggerClient(url, cfg.pos_model, cfg.retry, cfg.triton_timeout),
            HashtagClient(url, cfg.hashtag_model, cfg.retry, cfg.triton_timeout)
            if cfg.hashtag_model else None,
        )
        try:
            batches = stream.take_events(cfg.tag_batch_size, within=cfg.tag_batch_within)
            async for events in batches:
                await guarded(
                    events,
                    lambda origins: handle_batch(origins, models, cfg, out, dlq),
                    dlq, cfg.retry, "tag_posts",
                )
        finally:
            await models.close()
