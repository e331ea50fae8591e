"""Stage ``tag_posts``: posts.raw -> validate -> Triton pos_tagger + hashtag_generator
(+ the hashtag memory in Elasticsearch) -> posts.tagged (the skeleton is
``services.stream.stage``).

The POS tagger and the hashtags of each sub-batch run at the same time. Hashtags are
suggested from the text as if the author had written none (``services.hashtags``): the
memory is asked first, the generator only for the posts the memory has nothing probable
for, and the learned merge (``hashtag_merge``) shows the candidates it finds probable
enough. The memory's answer is awaited until ``timeout`` seconds after the tagger's
answer, then while the generator answers for the whole batch (``recall_by_deadline``); a
memory that has not answered by then leaves the generator alone. Without a hashtag model
configured (``NLP_HASHTAG_MODEL=``), posts are tagged only. A batch is split into at most
``triton_concurrency`` sub-batches sent to Triton concurrently; Triton's dynamic batcher
merges them as it sees fit.
"""

from __future__ import annotations

import asyncio
from collections.abc import Awaitable, Callable, Sequence
from dataclasses import dataclass, replace
from datetime import UTC, datetime, timedelta
from functools import lru_cache
from typing import TypeVar

from nlp_models.contract import HashtagResult, TagResult
from nlp_models.hashtag.blocklist import Blocklist
from services.config import MemoryConfig, PipelineConfig
from services.dlq import Origin
from services.es.bulk import make_client
from services.es.documents import agreement
from services.hashtags import Suggestion, is_chinese, memory_language, without_edge_hashtags
from services.pb import messages_pb2 as pb
from services.stream.hashtag_merge import (
    Candidate,
    GeneratorTally,
    MergeModel,
    candidates,
    merge,
    ranked,
    show,
)
from services.stream.memory import HashtagMemory, Probe, Recall
from services.stream.metrics import GENERATOR_SKIPPED, record_agreement
from services.stream.posts import (
    PreparedPost,
    build_tagged_post,
    hashtag_language,
    pos_applies,
    prepare_post,
)
from services.stream.stage import Item, Stage
from services.triton import Batch, HashtagClient, ModelError, PosTaggerClient

T = TypeVar("T")


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
                 memory: HashtagMemory | None = None, merger: MergeModel | None = None,
                 blocklist: Blocklist | None = None) -> None:
        self.tagger, self.hashtagger = tagger, hashtagger
        self.memory, self.merger = memory, merger or MergeModel.load()
        self.tally = GeneratorTally()  # the generator's favourites, for the merge
        self.generator_version = ""  # the version that answered last
        # Every post of a batch recalls the same trending list and neighbours repeat:
        # remember each hashtag's verdict instead of matching it again.
        self.blocked = lru_cache(maxsize=100_000)(blocklist.blocks) if blocklist else None

    async def run(self, posts: Sequence[pb.Post]) -> list[Tags]:
        """Tags and hashtags of ``posts``; ModelError names the model that refused.

        Posts the POS tagger does not apply to (see ``pos_applies``) get no tokens."""
        tagged = [i for i, p in enumerate(posts) if pos_applies(p)]
        tagging = asyncio.ensure_future(
            _named(self.tagger.model, self.tagger.tag([posts[i].text for i in tagged])))
        if self.hashtagger is None:
            results = [await tagging]
        else:
            hashtags = asyncio.ensure_future(self._hashtags(posts, tagging))
            try:
                results = list(await asyncio.gather(tagging, hashtags))
            except BaseException:
                tagging.cancel()
                hashtags.cancel()
                raise
        batch: Batch[TagResult] = results[0]
        pos: list[TagResult | None] = [None] * len(posts)
        for i, result in zip(tagged, batch.results, strict=True):
            pos[i] = result
        model = pb.ModelRef(name=batch.model_name, version=batch.model_version)
        if len(results) == 1:
            return [Tags(r, model) for r in pos]
        hashtags, hmodel, suggestions = results[1]
        return [Tags(r, model, h, hmodel, s)
                for r, h, s in zip(pos, hashtags, suggestions, strict=True)]

    async def _hashtags(self, posts: Sequence[pb.Post], tagging: asyncio.Future) -> tuple[
            list[HashtagResult], pb.ModelRef, list[tuple[Suggestion, ...] | None]]:
        """The generator's hashtags and, with a memory, the merge's suggestions.

        The memory answers first, by ``timeout`` seconds after the tagger's answer
        (``tagging``) at most; the generator is asked only for the posts whose memory
        candidates all fall below the first floor (where the memory alone would show
        nothing), or all posts when the memory did not answer or holds too little to judge
        by (``MergeModel.judges``: the generator alone then). Measured on the dev
        streams, the generator adds no ROUGE where the memory has a candidate above it
        (docs/models/hashtag.md)."""
        langs = [hashtag_language(p) for p in posts]
        asked = [without_edge_hashtags(p.text, is_chinese(p)) or p.text for p in posts]
        generate = self.hashtagger.generate  # type: ignore[union-attr]
        name = self.hashtagger.model  # type: ignore[union-attr]
        if self.memory is None:
            batch = await _named(name, generate(asked, langs))
            return (batch.results, pb.ModelRef(name=name, version=batch.model_version),
                    [None] * len(posts))
        merged = [memory_language(p) for p in posts]
        recalls, generating = await recall_by_deadline(
            self.memory, probes(posts, asked), tagging,
            lambda: _named(name, generate(asked, langs)))
        recalls = [self._unblocked(r) if self.merger.judges(r, lang) else None
                   for r, lang in zip(recalls or [None] * len(posts), merged, strict=True)]
        alone = [ranked(self.merger, candidates((), r, t, lang), lang) if r is not None else []
                 for r, t, lang in zip(recalls, asked, merged, strict=True)]
        need = [i for i, (r, scored, lang) in enumerate(zip(recalls, alone, merged, strict=True))
                if r is None or not self._confident(scored, lang)]
        if generating is None:
            batch = await _named(name, generate([asked[i] for i in need],
                                                [langs[i] for i in need]))
            generated = dict(zip(need, batch.results, strict=True))
            GENERATOR_SKIPPED.inc(len(posts) - len(need))
        else:  # asked for every post at the memory's deadline: used where it is needed
            batch = await generating
            generated = {i: batch.results[i] for i in need}
        results = [generated.get(i, HashtagResult((), lang, "ok", False))
                   for i, lang in enumerate(langs)]
        suggestions: list[tuple[Suggestion, ...] | None] = []
        for i, (result, recall) in enumerate(zip(results, recalls, strict=True)):
            if result.status != "ok":
                suggestions.append(())
            elif i in generated:
                suggestions.append(tuple(merge(self.merger, result.hashtags, recall, asked[i],
                                               merged[i], self.tally)))
                self.tally.add(merged[i], [t for t, _ in result.hashtags])
            else:
                suggestions.append(tuple(show(self.merger, alone[i], merged[i])))
        # a sub-batch the memory answered alone: the version that answered last
        self.generator_version = batch.model_version or self.generator_version
        return results, pb.ModelRef(name=name, version=self.generator_version), suggestions

    def _confident(self, scored: Sequence[tuple[float, Candidate]], lang: str) -> bool:
        """Whether the memory alone (its candidates ``ranked``) would show a hashtag."""
        return bool(scored) and scored[0][0] >= self.merger.floor(lang).first

    def _unblocked(self, recall: Recall | None) -> Recall | None:
        """The recall without blocklisted hashtags (authors write slurs too)."""
        if recall is None or self.blocked is None:
            return recall
        return replace(recall,
                       neighbours=[n._replace(tags=[t for t in n.tags if not self.blocked(t)])
                                   for n in recall.neighbours],
                       trending=[t for t in recall.trending if not self.blocked(t.tag)])

    async def close(self) -> None:
        await self.tagger.close()
        if self.hashtagger is not None:
            await self.hashtagger.close()
        if self.memory is not None:
            self.memory.close()


async def _named(model: str, call: Awaitable[T]) -> T:
    """``call``'s result; a ModelError names ``model``."""
    try:
        return await call
    except ModelError as exc:
        raise ModelError(f"{model}: {exc}") from exc


async def recall_by_deadline(memory: HashtagMemory, asked: list[Probe],
                             tagging: asyncio.Future, generate_all: Callable[[], Awaitable[T]]
                             ) -> tuple[list[Recall] | None, asyncio.Future[T] | None]:
    """The memory's answer for a batch, and the generator's for every post when it was
    started at the memory's deadline (else None: the caller asks it where it is needed).

    The memory is awaited until ``timeout`` seconds after the tagger's answer. Past that
    deadline the batch needs the generator for every post, so ``generate_all`` starts, and
    the memory's answer is still taken if it comes before the generator's: a look-up is
    never cut shorter than the batch's models take. (With the deadline at the tagger's
    answer alone, 7 to 16 of 42-44 look-ups of the demo's burst fell back on a fresh
    Elasticsearch, where the generator, run beside the tagger before the learned merge,
    had given them its time: tests/integration/test_alerts.py.)"""
    lookup = memory.ask(asked)
    generating: asyncio.Future[T] | None = None
    try:
        await asyncio.wait([lookup.future, tagging], return_when=asyncio.FIRST_COMPLETED)
        if not await memory.answered(lookup):
            generating = asyncio.ensure_future(generate_all())
            await asyncio.wait([lookup.future, generating],
                               return_when=asyncio.FIRST_COMPLETED)
        return memory.settle(lookup, late=generating is not None), generating
    except BaseException:
        lookup.future.cancel()
        if generating is not None:
            generating.cancel()
        raise


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
            MergeModel.load(mem.merge_model),
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
