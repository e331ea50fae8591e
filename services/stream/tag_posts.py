"""Stage ``tag_posts``: posts.raw -> validate -> Triton pos_tagger + hashtag_generator
(+ the hashtag memory in Elasticsearch) -> posts.tagged (the skeleton is
``services.stream.stage``).

Both models and the memory get each sub-batch at the same time, so a post costs the
slowest of them, not their sum; the memory's answer is awaited once the models have
answered, ``timeout`` seconds at most (``memory.HashtagMemory.answer``). Hashtags are
suggested from the text as if the author had written none (``services.hashtags``), and the
scorer merges the generator's with the memory's (``hashtag_scorer``); a memory that does
not answer in time leaves the generator alone. Without a hashtag model configured
(``NLP_HASHTAG_MODEL=``), posts are tagged only. A batch is split into at most
``triton_concurrency`` sub-batches sent to Triton concurrently; Triton's dynamic batcher
merges them as it sees fit.
"""

from __future__ import annotations

import asyncio
from collections.abc import Sequence
from dataclasses import dataclass
from datetime import UTC, datetime, timedelta
from functools import lru_cache

from nlp_models.contract import HashtagResult, TagResult
from nlp_models.hashtag.blocklist import Blocklist
from services.config import MemoryConfig, PipelineConfig
from services.dlq import Origin
from services.es.bulk import make_client
from services.es.documents import agreement
from services.hashtags import Suggestion, is_chinese, memory_language, without_edge_hashtags
from services.pb import messages_pb2 as pb
from services.stream.hashtag_scorer import Weights, merge
from services.stream.memory import HashtagMemory, Probe, Recall
from services.stream.metrics import record_agreement
from services.stream.posts import (
    PreparedPost,
    build_tagged_post,
    hashtag_language,
    pos_applies,
    prepare_post,
)
from services.stream.stage import Item, Stage
from services.triton import Batch, HashtagClient, ModelError, PosTaggerClient


@dataclass(frozen=True)
class Tags:
    """What the models made of one post."""

    pos: TagResult | None  # None: the POS tagger does not apply to this post
    pos_model: pb.ModelRef
    hashtags: HashtagResult | None = None
    hashtag_model: pb.ModelRef | None = None
    suggestions: tuple[Suggestion, ...] | None = None  # None: the generator's own


class Models:
    """The Triton models (and the hashtag memory) every post goes through, called
    concurrently per batch."""

    def __init__(self, tagger: PosTaggerClient, hashtagger: HashtagClient | None,
                 memory: HashtagMemory | None = None, weights: Weights | None = None,
                 blocklist: Blocklist | None = None) -> None:
        self.tagger, self.hashtagger = tagger, hashtagger
        self.memory, self.weights = memory, weights or Weights()
        # Every post of a batch recalls the same trending list and neighbours repeat:
        # remember each hashtag's verdict instead of matching it again.
        self.blocked = lru_cache(maxsize=100_000)(blocklist.blocks) if blocklist else None

    async def run(self, posts: Sequence[pb.Post]) -> list[Tags]:
        """Tags and hashtags of ``posts``; ModelError names the model that refused.

        Posts the POS tagger does not apply to (see ``pos_applies``) get no tokens."""
        texts = [p.text for p in posts]
        langs = [hashtag_language(p) for p in posts]
        asked = [without_edge_hashtags(p.text, is_chinese(p)) or p.text for p in posts]
        tagged = [i for i, p in enumerate(posts) if pos_applies(p)]

        async def named(model: str, call):
            try:
                return await call
            except ModelError as exc:
                raise ModelError(f"{model}: {exc}") from exc

        calls = [named(self.tagger.model, self.tagger.tag([texts[i] for i in tagged]))]
        lookup = None
        if self.hashtagger is not None:
            calls.append(named(self.hashtagger.model, self.hashtagger.generate(asked, langs)))
            if self.memory is not None:
                lookup = self.memory.ask(probes(posts, asked))
        try:
            results = await asyncio.gather(*calls)
        except BaseException:
            if lookup is not None:
                lookup.future.cancel()
            raise
        if lookup is not None:
            results.append(await self.memory.answer(lookup))  # type: ignore[union-attr]
        batch: Batch[TagResult] = results[0]
        pos: list[TagResult | None] = [None] * len(posts)
        for i, result in zip(tagged, batch.results, strict=True):
            pos[i] = result
        model = pb.ModelRef(name=batch.model_name, version=batch.model_version)
        if len(results) == 1:
            return [Tags(r, model) for r in pos]
        hashtags = results[1]
        hmodel = pb.ModelRef(name=hashtags.model_name, version=hashtags.model_version)
        if self.memory is None:
            return [Tags(r, model, h, hmodel) for r, h in zip(pos, hashtags.results,
                                                               strict=True)]
        recalls: list[Recall | None] = results[2] or [None] * len(posts)
        return [Tags(r, model, h, hmodel, self._suggest(h, recall))
                for r, h, recall in zip(pos, hashtags.results, recalls, strict=True)]

    def _suggest(self, generated: HashtagResult, recall: Recall | None
                 ) -> tuple[Suggestion, ...]:
        """The scorer's hashtags; none for a post the generator could not serve."""
        if generated.status != "ok":
            return ()
        if recall is not None and self.blocked is not None:
            recall = Recall([(score, [t for t in tags if not self.blocked(t)])
                             for score, tags in recall.neighbours],
                            [(t, n) for t, n in recall.trending if not self.blocked(t)])
        return tuple(merge(generated.hashtags, recall, self.weights))

    async def close(self) -> None:
        await self.tagger.close()
        if self.hashtagger is not None:
            await self.hashtagger.close()
        if self.memory is not None:
            self.memory.close()


def probes(posts: Sequence[pb.Post], texts: Sequence[str]) -> list[Probe]:
    """What the memory is asked per post: its text as if without hashtags, its language
    and event time (the time it is processed when the producer gave none)."""
    now = datetime.now(UTC)
    return [Probe(p.id, text, memory_language(p),
                  p.created_at.ToDatetime(tzinfo=UTC) if p.HasField("created_at") else now)
            for p, text in zip(posts, texts, strict=True)]


def open_memory(cfg: PipelineConfig) -> HashtagMemory | None:
    """The posts indices as hashtag memory, or None when switched off."""
    mem: MemoryConfig = cfg.hashtag_memory
    if not mem.enabled:
        return None
    return HashtagMemory(make_client(cfg.servers.es_url, timeout=30.0),
                         cfg.index_pattern, window=timedelta(hours=mem.window_hours),
                         neighbours=mem.neighbours, trending_ttl=mem.trending_ttl,
                         timeout=mem.timeout)


class TagPosts(Stage[PreparedPost, Tags]):
    name = "tag_posts"

    def __init__(self, cfg: PipelineConfig, models: Models) -> None:
        self.cfg, self.models = cfg, models
        self.concurrency = cfg.triton_concurrency

    @classmethod
    def connect(cls, cfg: PipelineConfig) -> TagPosts:
        url = cfg.servers.triton_grpc_url
        mem = cfg.hashtag_memory
        return cls(cfg, Models(
            PosTaggerClient(url, cfg.pos_model, cfg.retry, cfg.triton_timeout),
            HashtagClient(url, cfg.hashtag_model, cfg.retry, cfg.triton_timeout)
            if cfg.hashtag_model else None,
            open_memory(cfg) if cfg.hashtag_model else None,
            Weights(mem.generated, mem.similar, mem.trending, mem.threshold),
            Blocklist.load(mem.blocklist) if mem.blocklist else None,
        ))

    def prepare(self, origin: Origin) -> PreparedPost:
        return prepare_post(origin.value, max_bytes=self.cfg.max_raw_bytes,
                            max_chars=self.cfg.max_post_chars, key=origin.key)

    async def infer(self, items: Sequence[Item[PreparedPost]]) -> list[Tags]:
        return await self.models.run([it.prepared.post for it in items])

    def build(self, item: Item[PreparedPost], result: Tags, now: datetime
              ) -> tuple[bytes, bytes]:
        post = build_tagged_post(item.prepared, result.pos, result.pos_model, now,
                                 result.hashtags, result.hashtag_model, result.suggestions)
        record_agreement(memory_language(post.post), agreement(post))
        return item.prepared.post.id.encode("utf-8"), post.SerializeToString()

    def summary(self, results: Sequence[Tags]) -> str:
        return f"(pos model v{results[0].pos_model.version})" if results else ""

    async def close(self) -> None:
        await self.models.close()
