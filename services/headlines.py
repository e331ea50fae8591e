"""The two headline models, called together: one arrangement for the stream and the API.

Per request the full generator gets every article and the constrained generator every
(article, phrase) pair, one Triton call each, both in flight at once. The stream
(``headline_articles``) sends a batch of articles; the API one article with its phrases,
and streams each call's answers as that call completes (``calls``).
"""

from __future__ import annotations

import asyncio
from collections.abc import Awaitable, Sequence
from dataclasses import dataclass

from nlp_models.contract import HeadlineResult
from services.config import RetryPolicy
from services.triton import Batch, ConstrainedHeadlineClient, HeadlineClient

FULL, CONSTRAINED = "full", "constrained"


@dataclass(frozen=True)
class Job:
    """One article: its text, its language and the phrases its headlines must contain."""

    article: str
    lang: str
    phrases: Sequence[str] = ()


@dataclass(frozen=True)
class Answer:
    """One model's result for one job (and one phrase, for the constrained model)."""

    kind: str  # FULL or CONSTRAINED
    job: int  # index into the jobs
    phrase: str  # "" for FULL
    result: HeadlineResult
    model: str
    version: str


class HeadlineModels:
    """The full and the constrained generator; either may be switched off (None)."""

    def __init__(self, full: HeadlineClient | None,
                 constrained: ConstrainedHeadlineClient | None) -> None:
        self.full, self.constrained = full, constrained

    @classmethod
    def connect(cls, url: str, full: str, constrained: str, retry: RetryPolicy,
                timeout: float = 120.0) -> HeadlineModels:
        """Clients of the named Triton models; an empty name switches that model off."""
        return cls(HeadlineClient(url, full, retry, timeout) if full else None,
                   ConstrainedHeadlineClient(url, constrained, retry, timeout)
                   if constrained else None)

    def calls(self, jobs: Sequence[Job], *, full: bool = True, order: str = "",
              timeout: float | None = None, candidates: int = 0
              ) -> list[Awaitable[list[Answer]]]:
        """The model calls for ``jobs``, not yet awaited: at most one per model.

        ``full=False`` skips the full generator; ``order`` is the constrained generation
        order ("" = the model's default); ``candidates`` per answer (0 = the model's n_best).
        """
        articles, langs = [j.article for j in jobs], [j.lang for j in jobs]
        pairs = [(i, phrase) for i, j in enumerate(jobs) for phrase in j.phrases]
        out: list[Awaitable[list[Answer]]] = []
        if full and self.full is not None and jobs:
            out.append(self._answers(FULL, [(i, "") for i in range(len(jobs))],
                                     self.full.generate(articles, langs, timeout, candidates)))
        if self.constrained is not None and pairs:
            out.append(self._answers(CONSTRAINED, pairs, self.constrained.generate(
                [articles[i] for i, _ in pairs], [langs[i] for i, _ in pairs],
                [p for _, p in pairs], [order] * len(pairs), timeout, candidates)))
        return out

    async def run(self, jobs: Sequence[Job], *, order: str = "") -> list[Answer]:
        """Every answer for ``jobs``, full ones first (the stream's use: no deadline, the
        models' own number of candidates)."""
        answers = await asyncio.gather(*self.calls(jobs, order=order))
        return [a for call in answers for a in call]

    @staticmethod
    async def _answers(kind: str, rows: list[tuple[int, str]],
                       call: Awaitable[Batch[HeadlineResult]]) -> list[Answer]:
        batch = await call
        return [Answer(kind, job, phrase, result, batch.model_name, batch.model_version)
                for (job, phrase), result in zip(rows, batch.results, strict=True)]

    async def close(self) -> None:
        for client in (self.full, self.constrained):
            if client is not None:
                await client.close()
