"""Stage ``headline_articles``: articles.raw -> validate -> Triton headline generators
-> articles.headlines (the skeleton is ``services.stream.stage``).

Per batch, the full generator gets every article and the constrained generator every
(article, required phrase) pair, both at the same time (``gather``). Phrases that cannot
be served become issues on the EnrichedArticle (``services.stream.articles``); if Triton fails a
whole batch, articles are retried one by one so only the culprit is dead-lettered.
"""

from __future__ import annotations

import asyncio
from collections.abc import Sequence
from datetime import datetime

from nlp_models.contract import HeadlineResult
from services.config import PipelineConfig
from services.dlq import Origin
from services.pb import messages_pb2 as pb
from services.stream.articles import (
    Generated,
    PreparedArticle,
    build_enriched_article,
    headline_language,
    prepare_article,
)
from services.stream.stage import Item, Stage
from services.triton import Batch, ConstrainedHeadlineClient, HeadlineClient


class Generators:
    """The headline models every article goes through; either may be switched off."""

    def __init__(self, full: HeadlineClient | None,
                 constrained: ConstrainedHeadlineClient | None) -> None:
        self.full, self.constrained = full, constrained

    async def run(self, articles: Sequence[PreparedArticle]) -> list[list[Generated]]:
        """Per article, the answers of every model call made for it."""
        bodies = [a.article.body for a in articles]
        langs = [headline_language(a.article) for a in articles]
        pairs = [(i, phrase) for i, a in enumerate(articles) for phrase in a.phrases()[0]]
        calls = []
        if self.full is not None:
            calls.append(self.full.generate(bodies, langs))
        if self.constrained is not None and pairs:
            calls.append(self.constrained.generate(
                [bodies[i] for i, _ in pairs], [langs[i] for i, _ in pairs],
                [p for _, p in pairs], [""] * len(pairs)))
        batches: list[Batch[HeadlineResult]] = list(await asyncio.gather(*calls))
        out: list[list[Generated]] = [[] for _ in articles]
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


class HeadlineArticles(Stage[PreparedArticle, list[Generated]]):
    name = "headline_articles"

    def __init__(self, cfg: PipelineConfig, generators: Generators) -> None:
        self.cfg, self.generators = cfg, generators

    @classmethod
    def connect(cls, cfg: PipelineConfig) -> HeadlineArticles:
        url = cfg.servers.triton_grpc_url
        return cls(cfg, Generators(
            HeadlineClient(url, cfg.headline_model, cfg.retry, cfg.triton_timeout)
            if cfg.headline_model else None,
            ConstrainedHeadlineClient(url, cfg.constrained_model, cfg.retry, cfg.triton_timeout)
            if cfg.constrained_model else None,
        ))

    def prepare(self, origin: Origin) -> PreparedArticle:
        return prepare_article(origin.value, max_bytes=self.cfg.max_raw_bytes,
                               max_chars=self.cfg.max_article_chars, key=origin.key)

    async def infer(self, items: Sequence[Item[PreparedArticle]]) -> list[list[Generated]]:
        return await self.generators.run([it.prepared for it in items])

    def build(self, item: Item[PreparedArticle], result: list[Generated], now: datetime
              ) -> tuple[bytes, bytes]:
        enriched = build_enriched_article(item.prepared, result, now)
        return item.prepared.article.id.encode("utf-8"), enriched.SerializeToString()

    async def close(self) -> None:
        await self.generators.close()
