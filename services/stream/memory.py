"""The hashtag memory: the posts index, read as the stream's memory of its own hashtags.

Every indexed post carries its author's hashtags (``user_hashtags``). Before hashtags are
suggested for a batch, one ``_msearch`` asks Elasticsearch

- for each post, its most similar earlier posts that carry author hashtags: BM25 on the
  text analysed for the post's language (``text.en``: English with stemming;
  ``text.cjk``: the built-in ``cjk`` analyser's bigrams), only posts whose ``created_at``
  lies in the event-time window ``[t - window, t)`` before the post's own, never the post
  itself (a redelivered post is already in the index);
- per language, for the window's trending author hashtags: a terms aggregation over
  ``[t0 - window, t0)``, ``t0`` the batch's earliest post of that language, so no post of
  the batch counts. It is cached for ``trending_ttl`` seconds of wall time (and as long
  as the stream's event time has not moved past a twentieth of the window), not asked
  per post.

The memory lives in Elasticsearch, so every worker shares it and a restart loses
nothing. A look-up is asked (``ask``) when the batch goes to the models and answered
(``answer``) once they have answered: it has the models' time, and ``timeout`` seconds
more at most. Under a burst the models' queue is long and so is Elasticsearch's (bulk
indexing shares its CPU); a deadline counted from the ask, not from the models' answer,
failed 26 of 55 look-ups of the demo's burst although the batches waited for the models
anyway. A look-up that fails or is not answered by then gives None and is counted: the
caller answers with the generator alone, so the memory never stalls, drops or
dead-letters a post. Look-ups run in the memory's own threads, so they never queue behind
bulk indexing's (``asyncio.to_thread``). An empty index is today's behaviour: nothing
recalled.
"""

from __future__ import annotations

import asyncio
import logging
import re
import time
from collections import Counter
from collections.abc import Sequence
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass, field
from datetime import datetime, timedelta
from typing import Any, NamedTuple

from elasticsearch import Elasticsearch

from services.stream.delivery import COUNTS
from services.stream.metrics import MEMORY_FALLBACKS, MEMORY_SECONDS

log = logging.getLogger(__name__)

_WORD = re.compile(r"[^\W_]+")

#: The text sub-field queried per language (services/es/posts_template.json).
TEXT_FIELD = {"en": "text.en", "zh": "text.cjk"}


@dataclass(frozen=True)
class Probe:
    """What the memory is asked about one post."""

    id: str
    text: str  # as if the author had written no hashtag: without its edge hashtags
    lang: str  # "en" or "zh"; other languages recall nothing
    created_at: datetime


class Neighbour(NamedTuple):
    """A similar earlier post."""

    score: float  # BM25
    tags: list[str]  # its author's hashtags, as written
    age_hours: float  # how long before the asking post it was written
    overlap: float  # share of the asking post's words it contains (``overlap``)


class Trend(NamedTuple):
    """A hashtag authors used in the window before the batch."""

    tag: str  # lowercased (the index's normalizer)
    posts: int  # posts using it in the window
    recent: int  # of them in the window's last quarter (a flat trend: a quarter)


@dataclass(frozen=True)
class Recall:
    """What the memory holds for one post."""

    #: the most similar earlier posts with author hashtags, best first
    neighbours: list[Neighbour] = field(default_factory=list)
    #: the window's most used author hashtags, most used first
    trending: list[Trend] = field(default_factory=list)
    #: posts with author hashtags in the language's window: how much the memory holds
    window_posts: int = 0


@dataclass(frozen=True)
class Lookup:
    """A look-up under way (``HashtagMemory.ask``)."""

    future: asyncio.Future[tuple[list[Recall], float]]  # recalls, when finished
    posts: int
    started: float  # time.monotonic()


@dataclass
class _Trending:
    until: datetime  # event time the window ends at
    fetched: float  # time.monotonic() when asked
    tags: list[Trend]
    posts: int  # posts with author hashtags in the window


class HashtagMemory:
    """Look-ups in the posts indices ``index`` (a pattern such as ``posts-*``)."""

    def __init__(self, es: Elasticsearch, index: str, window: timedelta = timedelta(hours=24),
                 neighbours: int = 10, trending_size: int = 20, trending_ttl: float = 5.0,
                 timeout: float = 0.5, counters: Counter[str] = COUNTS,
                 lookups_at_once: int = 4, request_timeout: float = 30.0) -> None:
        self.es, self.index, self.window = es, index, window
        self.neighbours, self.trending_size = neighbours, trending_size
        self.trending_ttl, self.timeout = trending_ttl, timeout
        #: how long one ``_msearch`` may take before the client gives up on it: far
        #: above ``timeout``, which is counted from the models' answer, not the ask
        self.request_timeout = request_timeout
        #: ``hashtag_memory.lookups`` / ``.timeouts`` / ``.failures`` / ``.ms`` (the
        #: worker's /health/ page shows the shared counters)
        self.counters = counters
        self._trending: dict[str, _Trending] = {}
        self._threads = ThreadPoolExecutor(lookups_at_once, thread_name_prefix="memory")

    def ask(self, probes: Sequence[Probe]) -> Lookup:
        """Start looking ``probes`` up in the memory's own threads."""
        self.counters["hashtag_memory.lookups"] += 1
        future = asyncio.get_running_loop().run_in_executor(self._threads, self._finished,
                                                            probes)
        return Lookup(future, len(probes), time.monotonic())

    def _finished(self, probes: Sequence[Probe]) -> tuple[list[Recall], float]:
        """``lookup``'s recalls and when it finished: the look-up's own latency is measured
        to then, not to when the batch's models let ``answer`` read it."""
        return self.lookup(probes), time.monotonic()

    async def answer(self, lookup: Lookup) -> list[Recall] | None:
        """One Recall per probe, waiting ``timeout`` seconds at most from now; None when
        the memory did not answer by then or failed (the caller falls back to the
        generator alone). Call it once the models have answered."""
        await self.answered(lookup)
        return self.settle(lookup)

    async def answered(self, lookup: Lookup) -> bool:
        """Whether the look-up is done ``timeout`` seconds from now at most."""
        done, _ = await asyncio.wait([lookup.future], timeout=self.timeout)
        return bool(done)

    def settle(self, lookup: Lookup, late: bool = False) -> list[Recall] | None:
        """The look-up's recalls if it is done; else None, the look-up given up on. A
        timeout or failure is counted and logged; ``late``: it was answered past the
        deadline while the generator ran for the batch (``hashtag_memory.late``)."""
        finished = None
        try:
            if not lookup.future.done():
                lookup.future.cancel()
                self.counters["hashtag_memory.timeouts"] += 1
                MEMORY_FALLBACKS.labels("timeout").inc()
                log.warning("hashtag memory: no answer %.1f s after the ask (deadline %.0f "
                            "ms after the models); generator alone for %d posts",
                            time.monotonic() - lookup.started, self.timeout * 1000,
                            lookup.posts)
                return None
            recalls, finished = lookup.future.result()
            self.counters["hashtag_memory.late"] += late
            return recalls
        except Exception as exc:  # noqa: BLE001 - any failure degrades, never stalls
            self.counters["hashtag_memory.failures"] += 1
            MEMORY_FALLBACKS.labels("failure").inc()
            log.warning("hashtag memory failed (%s); generator alone for %d posts", exc,
                        lookup.posts)
            return None
        finally:
            took = (finished or time.monotonic()) - lookup.started
            self.counters["hashtag_memory.ms"] += round(took * 1000)
            MEMORY_SECONDS.observe(took)

    async def recall(self, probes: Sequence[Probe]) -> list[Recall] | None:
        """``ask`` and ``answer`` at once: ``timeout`` seconds from the ask."""
        return await self.answer(self.ask(probes))

    def close(self) -> None:
        self._threads.shutdown(wait=False, cancel_futures=True)
        self.es.close()

    def lookup(self, probes: Sequence[Probe]) -> list[Recall]:
        """The blocking look-up behind ``ask`` (which runs it in the memory's threads);
        raises what the client raises."""
        asked = [p for p in probes if p.lang in TEXT_FIELD and p.text.strip()]
        stale = self._stale_languages(probes)
        body: list[dict[str, Any]] = []
        for p in asked:
            body += [{"index": self.index}, self.neighbour_query(p)]
        for lang, until in stale:
            body += [{"index": self.index}, self.trending_query(lang, until)]
        responses = self._msearch(body) if body else []
        hits = dict(zip((p.id for p in asked), responses[:len(asked)], strict=False))
        for (lang, until), response in zip(stale, responses[len(asked):], strict=True):
            self._trending[lang] = _Trending(until, time.monotonic(), _buckets(response),
                                             _total(response))
        empty = _Trending(datetime.min, 0.0, [], 0)
        return [Recall(_neighbours(hits[p.id], p) if p.id in hits else [], window.tags,
                       window.posts)
                for p in probes for window in [self._trending.get(p.lang, empty)]]

    def _msearch(self, body: list[dict[str, Any]]) -> list[dict[str, Any]]:
        result = self.es.msearch(body=body, request_timeout=self.request_timeout)
        responses = result["responses"]
        errors = [r["error"] for r in responses if "error" in r and not no_shard_ready(r["error"])]
        if errors and len(errors) == len(responses):
            raise RuntimeError(f"every memory query failed, e.g. {errors[0]}")
        return responses

    def _stale_languages(self, probes: Sequence[Probe]) -> list[tuple[str, datetime]]:
        """(language, window end) whose cached trending list must be asked again."""
        earliest: dict[str, datetime] = {}
        for p in probes:
            if p.lang in TEXT_FIELD:
                earliest[p.lang] = min(earliest.get(p.lang, p.created_at), p.created_at)
        stale = []
        for lang, until in earliest.items():
            cached = self._trending.get(lang)
            if (cached is None or time.monotonic() - cached.fetched > self.trending_ttl
                    or abs(until - cached.until) > self.window / 20):
                stale.append((lang, until))
        return stale

    # The queries -----------------------------------------------------------------------
    def _window(self, lang: str, until: datetime) -> list[dict[str, Any]]:
        return [{"term": {"hashtag_lang": lang}},
                {"exists": {"field": "user_hashtags"}},
                {"range": {"created_at": {"gte": (until - self.window).isoformat(),
                                          "lt": until.isoformat()}}}]

    def neighbour_query(self, probe: Probe) -> dict[str, Any]:
        """The most similar earlier posts with author hashtags, never the post itself."""
        return {"size": self.neighbours, "_source": ["user_hashtags", "created_at", "text"],
                "track_total_hits": False,  # lets Lucene skip posts that cannot rank
                "query": {"bool": {
                    "must": [{"match": {TEXT_FIELD[probe.lang]: probe.text}}],
                    "filter": self._window(probe.lang, probe.created_at),
                    "must_not": [{"ids": {"values": [probe.id]}}]}}}

    def trending_query(self, lang: str, until: datetime) -> dict[str, Any]:
        """The window's most used author hashtags (counted in posts), and how many of
        those posts fall in the window's last quarter (is it rising?)."""
        recent = {"range": {"created_at": {"gte": (until - self.window / 4).isoformat()}}}
        return {"size": 0, "query": {"bool": {"filter": self._window(lang, until)}},
                "aggs": {"trending": {"terms": {"field": "user_hashtags",
                                                "size": self.trending_size},
                                      "aggs": {"recent": {"filter": recent}}}}}


def no_shard_ready(error: dict[str, Any]) -> bool:
    """The error of a search whose only index was created a moment ago (a new month's,
    by the indexer) and has no started shard yet: seen as ``all shards failed`` with no
    failed shard and no cause. It holds nothing to recall yet: an empty answer, not a
    failure (the demo's burst met it on its first look-ups)."""
    return (error.get("type") == "search_phase_execution_exception"
            and not error.get("failed_shards") and not error.get("root_cause"))


def _neighbours(response: dict[str, Any], probe: Probe) -> list[Neighbour]:
    if "error" in response:
        return []
    asked = words(probe.text, probe.lang)
    return [Neighbour(float(h["_score"]), list(h["_source"].get("user_hashtags") or []),
                      _age_hours(h["_source"].get("created_at"), probe.created_at),
                      overlap(asked, h["_source"].get("text") or "", probe.lang))
            for h in response["hits"]["hits"]]


def words(text: str, lang: str) -> set[str]:
    """What two posts are compared on: Chinese character bigrams; else lowercased words of
    three letters or more (hashtags' words included)."""
    if lang == "zh":
        chars = [c for c in text if c.isalnum()]
        return {a + b for a, b in zip(chars, chars[1:], strict=False)}
    return {w for w in _WORD.findall(text.lower()) if len(w) >= 3}


def overlap(asked: set[str], text: str, lang: str) -> float:
    """The share of the asking post's words (``words``) that ``text`` contains: unlike
    BM25, it does not change with the index's size and term statistics."""
    return len(asked & words(text, lang)) / len(asked) if asked else 0.0


def _age_hours(created_at: str | None, asked_at: datetime) -> float:
    if not created_at:
        return 0.0
    written = datetime.fromisoformat(created_at.replace("Z", "+00:00"))
    if written.tzinfo is None:
        written = written.replace(tzinfo=asked_at.tzinfo)
    return max(0.0, (asked_at - written).total_seconds() / 3600)


def _total(response: dict[str, Any]) -> int:
    """The posts a trending query counted (Elasticsearch counts exactly to 10,000)."""
    total = response.get("hits", {}).get("total", 0)  # no index yet: none
    return int(total.get("value", 0) if isinstance(total, dict) else total)


def _buckets(response: dict[str, Any]) -> list[Trend]:
    if "error" in response:
        return []
    buckets = response.get("aggregations", {}).get("trending", {}).get("buckets", [])
    return [Trend(b["key"], int(b["doc_count"]), int(b.get("recent", {}).get("doc_count", 0)))
            for b in buckets]  # no index yet: no buckets
