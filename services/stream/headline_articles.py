"""Agent ``headline_articles``: articles.raw -> validate -> Triton headline generators
-> articles.headlines.

Per batch, the full generator gets every article and the constrained generator every
(article, required phrase) pair, both at the same time (``gather``). The batch's offsets
are acked only after every output record (articles.headlines and DLQ) was delivered, as in
``tag_posts``. Bad input never crashes the agent: undecodable or invalid articles go to
articles.raw.dlq; phrases that cannot be served become issues on the EnrichedArticle
(``services.articles``). If Triton fails a whole batch, articles are retried one by one so
only the culprit is dead-lettered.
"""

from __future__ import annotations

import asyncio
import logging
import time
from collections.abc import Sequence
from dataclasses import dataclass

import faust

from services import errors
from services.articles import (
    Generated,
    PreparedArticle,
    build_enriched_article,
    headline_language,
    prepare_article,
)
from services.config import PipelineConfig
from services.dlq import Origin
from services.pb import messages_pb2 as pb
from services.stream.batching import (
    dlq_record,
    guarded,
    now_utc,
    output_or_dead_letter,
    publish,
)
from services.triton import ConstrainedHeadlineClient, HeadlineBatch, HeadlineClient, ModelError

log = logging.getLogger(__name__)


@dataclass(frozen=True)
class Item:
    origin: Origin
    prepared: PreparedArticle


@dataclass(frozen=True)
class Failed:
    origin: Origin
    code: str
    reason: str


class Generators:
    """The headline models every article goes through; either may be switched off."""

    def __init__(self, full: HeadlineClient | None,
                 constrained: ConstrainedHeadlineClient | None) -> None:
        self.full, self.constrained = full, constrained

    async def run(self, items: Sequence[Item]) -> list[list[Generated]]:
        """Per item, the answers of every model call made for it."""
        bodies = [it.prepared.article.body for it in items]
        langs = [headline_language(it.prepared.article) for it in items]
        pairs = [(i, phrase) for i, it in enumerate(items) for phrase in it.prepared.phrases()[0]]
        calls = []
        if self.full is not None:
            calls.append(self.full.generate(bodies, langs))
        if self.constrained is not None and pairs:
            calls.append(self.constrained.generate(
                [bodies[i] for i, _ in pairs], [langs[i] for i, _ in pairs],
                [p for _, p in pairs], [""] * len(pairs)))
        batches: list[HeadlineBatch] = list(await asyncio.gather(*calls))
        out: list[list[Generated]] = [[] for _ in items]
        if self.full is not None:
            full = batches.pop(0)
            ref = pb.ModelRef(name=full.model_name, version=full.model_version)
            for i, result in enumerate(full.results):
                out[i].append(Generated(pb.FULL, result, ref))
        if batches:
            constrained = batches.pop(0)
            ref = pb.ModelRef(name=constrained.model_name, version=constrained.model_version)
            for (i, _), result in zip(pairs, constrained.results, strict=True):
                out[i].append(Generated(pb.CONSTRAINED, result, ref))
        return out

    async def close(self) -> None:
        for client in (self.full, self.constrained):
            if client is not None:
                await client.close()


def split_valid(origins: Sequence[Origin], cfg: PipelineConfig) -> tuple[list[Item], list[Failed]]:
    items: list[Item] = []
    failed: list[Failed] = []
    for origin in origins:
        try:
            prepared = prepare_article(origin.value, max_bytes=cfg.max_raw_bytes,
                                       max_chars=cfg.max_article_chars, key=origin.key)
            items.append(Item(origin, prepared))
        except errors.Rejected as rej:
            failed.append(Failed(origin, rej.code, rej.reason))
    return items, failed


async def generate_all(items: list[Item], generators: Generators
                       ) -> tuple[list[tuple[Item, list[Generated]]], list[Failed]]:
    if not items:
        return [], []
    try:
        answers = await generators.run(items)
    except ModelError as exc:
        if len(items) == 1:
            return [], [Failed(items[0].origin, errors.MODEL_ERROR, str(exc))]
        log.warning("a headline model refused a batch of %d (%s); retrying one by one",
                    len(items), exc)
        parts = await asyncio.gather(*(generate_all([it], generators) for it in items))
        return [d for ok, _ in parts for d in ok], [f for _, bad in parts for f in bad]
    return list(zip(items, answers, strict=True)), []


async def handle_batch(origins: Sequence[Origin], generators: Generators, cfg: PipelineConfig,
                       out: faust.TopicT, dlq: faust.TopicT) -> None:
    started = time.monotonic()
    items, rejected = split_valid(origins, cfg)
    done, refused = await generate_all(items, generators)
    now = now_utc()
    records = [
        output_or_dead_letter(
            out, it.prepared.article.id.encode("utf-8"),
            build_enriched_article(it.prepared, answers, now).SerializeToString(),
            it.origin, dlq)
        for it, answers in done
    ]
    records += [dlq_record(dlq, f.origin, f.code, f.reason) for f in rejected + refused]
    await publish(records, cfg.retry, "headline_articles")
    log.info("headline_articles: %d records -> %d with headlines, %d dead-lettered in %.2fs",
             len(origins), len(done), len(rejected) + len(refused), time.monotonic() - started)


def register(app: faust.App, cfg: PipelineConfig, source: faust.TopicT, out: faust.TopicT,
             dlq: faust.TopicT) -> None:
    """Attach the agent to ``app``."""

    @app.agent(source, name="headline_articles")
    async def headline_articles(stream: faust.StreamT) -> None:
        url = cfg.servers.triton_grpc_url
        generators = Generators(
            HeadlineClient(url, cfg.headline_model, cfg.retry, cfg.triton_timeout)
            if cfg.headline_model else None,
            ConstrainedHeadlineClient(url, cfg.constrained_model, cfg.retry, cfg.triton_timeout)
            if cfg.constrained_model else None,
        )
        try:
            batches = stream.take_events(cfg.headline_batch_size,
                                         within=cfg.headline_batch_within)
            async for events in batches:
                await guarded(
                    events,
                    lambda origins: handle_batch(origins, generators, cfg, out, dlq),
                    dlq, cfg.retry, "headline_articles",
                )
        finally:
            await generators.close()
