"""Stage ``headline_articles``: articles.raw -> validate -> Triton headline generators
-> articles.headlines (the skeleton is ``services.stream.stage``).

Per batch, the full generator gets every article and the constrained generator every
(article, required phrase) pair, both at the same time (``services.headlines``). Phrases that cannot
be served become issues on the EnrichedArticle (``services.stream.articles``); if Triton fails a
whole batch, articles are retried one by one so only the culprit is dead-lettered.
"""

from __future__ import annotations

from collections.abc import Sequence
from datetime import datetime

from services.config import PipelineConfig
from services.dlq import Origin
from services.headlines import Answer, HeadlineModels, Job
from services.stream.articles import (
    PreparedArticle,
    build_enriched_article,
    headline_language,
    prepare_article,
)
from services.stream.stage import Item, Stage


class HeadlineArticles(Stage[PreparedArticle, list[Answer]]):
    name = "headline_articles"

    def __init__(self, cfg: PipelineConfig, models: HeadlineModels) -> None:
        self.cfg, self.models = cfg, models

    @classmethod
    def connect(cls, cfg: PipelineConfig) -> HeadlineArticles:
        return cls(cfg, HeadlineModels.connect(cfg.servers.triton_grpc_url, cfg.headline_model,
                                               cfg.constrained_model, cfg.retry,
                                               cfg.triton_timeout))

    def prepare(self, origin: Origin) -> PreparedArticle:
        return prepare_article(origin.value, max_bytes=self.cfg.max_raw_bytes,
                               max_chars=self.cfg.max_article_chars, key=origin.key)

    async def infer(self, items: Sequence[Item[PreparedArticle]]) -> list[list[Answer]]:
        """Per article, the answers of every model call made for it."""
        articles = [it.prepared for it in items]
        jobs = [Job(a.article.body, headline_language(a.article), a.phrases()[0])
                for a in articles]
        out: list[list[Answer]] = [[] for _ in articles]
        for answer in await self.models.run(jobs):
            out[answer.job].append(answer)
        return out

    def build(self, item: Item[PreparedArticle], result: list[Answer], now: datetime
              ) -> tuple[bytes, bytes]:
        enriched = build_enriched_article(item.prepared, result, now)
        return item.prepared.article.id.encode("utf-8"), enriched.SerializeToString()

    async def close(self) -> None:
        await self.models.close()
