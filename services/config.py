"""Pipeline configuration: topic names, index naming, limits, batching and retry knobs.

Server addresses come from ``services.settings`` (one place for ports, shared with the local
stack and the test fixtures); this module adds only what the services decide themselves.
Every value can be overridden through an ``NLP_*`` environment variable so a test session
can run the worker against its own topics, index prefix and consumer group without
touching the defaults.
"""

from __future__ import annotations

import os
from collections.abc import Mapping
from dataclasses import dataclass, field
from pathlib import Path

from nlp_models import registry
from nlp_models.limits import MAX_ARTICLE_CHARS, MAX_POST_CHARS
from services.env import at_least, read, repo_path, setting
from services.limits import DLQ_RETENTION_DAYS, MAX_RAW_BYTES
from services.settings import Settings


@dataclass(frozen=True)
class Topics:
    """Kafka topic names of the posts flow and the articles flow."""

    posts_raw: str = "posts.raw"
    posts_tagged: str = "posts.tagged"
    posts_raw_dlq: str = "posts.raw.dlq"
    posts_tagged_dlq: str = "posts.tagged.dlq"
    articles_raw: str = "articles.raw"
    articles_headlines: str = "articles.headlines"
    articles_raw_dlq: str = "articles.raw.dlq"
    articles_headlines_dlq: str = "articles.headlines.dlq"

    @classmethod
    def with_prefix(cls, prefix: str) -> Topics:
        """Same names behind ``prefix`` (tests use a unique prefix per session)."""
        base = cls()
        return cls(*(prefix + getattr(base, name) for name in base.__dataclass_fields__))

    def all(self) -> list[str]:
        return [getattr(self, name) for name in self.__dataclass_fields__]


@dataclass(frozen=True)
class RetryPolicy:
    """Exponential backoff while a dependency (Triton, Elasticsearch, Kafka) is unavailable.

    ``max_wait=None`` retries forever, which is what a worker wants: a model reload or an
    Elasticsearch restart must delay processing, not lose it. Tests set a finite value so a
    broken setup fails instead of hanging.

    ``max_delay`` is 5 s: a retry is one cheap call that fails fast while the dependency
    is down, and the cap is also how late the worker notices it is back (with 30 s, the
    fault suite measured 31 s between Triton ready and the first post processed).
    """

    initial: float = 0.5
    factor: float = 2.0
    max_delay: float = 5.0
    max_wait: float | None = setting(None, env="NLP_RETRY_MAX_WAIT", parse=float,
                                     shown="unset (forever)",
                                     doc="seconds to wait out an outage before failing")

    @classmethod
    def from_env(cls, e: Mapping[str, str]) -> RetryPolicy:
        return cls(**read(cls, e))


#: the learned hashtag merge's weights and floors, fitted on the dev streams
SHIPPED_MERGE = Path(__file__).parent / "stream" / "hashtag_merge.json"


@dataclass(frozen=True)
class MemoryConfig:
    """The hashtag memory (services/stream/memory.py) and the learned merge that decides
    what is shown (services/stream/hashtag_merge.py)."""

    enabled: bool = setting(True, env="NLP_HASHTAG_MEMORY", doc="`0` turns the hashtag "
                            "memory off: the generator's hashtags alone")
    window_hours: float = setting(24.0, env="NLP_HASHTAG_MEMORY_WINDOW_HOURS",
                                  doc="event time before a post that its memory covers")
    neighbours: int = setting(5, env="NLP_HASHTAG_MEMORY_NEIGHBOURS",
                              doc="similar earlier posts asked per post")
    timeout: float = setting(2.0, env="NLP_HASHTAG_MEMORY_TIMEOUT", doc="seconds a "
                             "sub-batch waits for the memory once the POS tagger has answered, "
                             "before the generator answers alone")
    trending_ttl: float = setting(5.0, env="NLP_HASHTAG_MEMORY_TRENDING_TTL",
                                  doc="seconds a language's trending list is reused")
    merge_model: Path = setting(SHIPPED_MERGE, env="NLP_HASHTAG_MERGE", parse=repo_path,
                                shown="`services/stream/hashtag_merge.json`",
                                doc="the learned merge's trees and floors (`python -m "
                                "training tune hashtag-merge` writes them)")
    # Hashtags the memory must not pass on (authors write slurs too): the served hashtag
    # generator's list unless NLP_HASHTAG_BLOCKLIST names another file; None: no file.
    blocklist: Path | None = setting(None, env="NLP_HASHTAG_BLOCKLIST", parse=repo_path,
                                     shown="the served `hashtag_generator`'s `blocklist.txt`",
                                     doc="hashtags neither the generator nor the memory shows")

    @classmethod
    def from_env(cls, e: Mapping[str, str]) -> MemoryConfig:
        values = read(cls, e)
        values.setdefault("blocklist", served_blocklist(e))
        return cls(**values)


def served_blocklist(e: Mapping[str, str]) -> Path | None:
    """The newest hashtag_generator version's blocklist.txt in the configured model
    repository (where the worker can see it)."""
    model = Settings.from_env(e).model_repository / registry.HASHTAG.name
    versions = sorted((p for p in model.glob("*/blocklist.txt") if p.parent.name.isdigit()),
                      key=lambda p: int(p.parent.name))
    return versions[-1] if versions else None


@dataclass(frozen=True)
class PipelineConfig:
    """Everything the stream worker, the producer and the search CLI need."""

    servers: Settings = field(default_factory=Settings)
    app_id: str = setting("nlp-pipeline", env="NLP_APP_ID",
                          doc="Faust app id and consumer group")
    topic_prefix: str = setting("", env="NLP_TOPIC_PREFIX", doc="prefix of all eight topics")
    index_prefix: str = setting("posts", env="NLP_INDEX_PREFIX", parse=str.lower,
                                doc="posts' Elasticsearch index prefix")
    article_index_prefix: str = setting(
        "articles", env="NLP_ARTICLE_INDEX_PREFIX", parse=str.lower,
        doc="articles' Elasticsearch index prefix (must not overlap the posts')")
    pos_model: str = setting(registry.POS.name, env="NLP_POS_MODEL",
                             doc="Triton model of `tag_posts`")
    hashtag_model: str = setting(registry.HASHTAG.name, env="NLP_HASHTAG_MODEL", blank=True,
                                 doc="hashtags of `tag_posts`; empty: none")
    headline_model: str = setting(registry.HEADLINE.name, env="NLP_HEADLINE_MODEL", blank=True,
                                  doc="full headlines of `headline_articles`; empty: none")
    constrained_model: str = setting(
        registry.CONSTRAINED.name, env="NLP_CONSTRAINED_MODEL", blank=True,
        doc="constrained headlines; empty: none (both empty: no article agents)")
    max_article_chars: int = MAX_ARTICLE_CHARS
    headline_batch_size: int = setting(16, env="NLP_HEADLINE_BATCH", doc="articles per batch "
                                       "(a generation costs 0.1-1 s)")
    headline_batch_within: float = 1.0
    max_post_chars: int = setting(MAX_POST_CHARS, env="NLP_MAX_POST_CHARS",
                                  doc="longer post texts are cut (`truncated`)")
    max_raw_bytes: int = MAX_RAW_BYTES
    # measured: 64 gave 161 tweets/s through the pipeline, 256 gave 232
    tag_batch_size: int = setting(256, env="NLP_TAG_BATCH", doc="posts per batch")
    tag_batch_within: float = setting(0.2, env="NLP_TAG_WITHIN",
                                      doc="seconds to fill a batch of posts")
    triton_concurrency: int = setting(4, env="NLP_TRITON_CONCURRENCY", parse=at_least(1),
                                      doc="sub-batches in flight per batch")
    tag_in_flight: int = setting(4, env="NLP_TAG_IN_FLIGHT", parse=at_least(1),
                                 doc="`tag_posts` batches in flight per worker (one actor, "
                                 "offsets released in order; docs/benchmarks.md)")
    triton_timeout: float = 60.0
    # measured (docs/benchmarks.md, runs x0-x3): 5 ms and 256 KiB instead of Faust's 0 and
    # 16 KiB cut the CPU per post by 0.11 ms (the broker's by 60 %), throughput unchanged
    producer_linger_ms: float = setting(5.0, env="NLP_PRODUCER_LINGER_MS",
                                        parse=at_least(0.0, float),
                                        doc="ms the worker's producer waits to fill a batch")
    producer_batch_bytes: int = setting(262144, env="NLP_PRODUCER_BATCH_BYTES",
                                        parse=at_least(1024),
                                        doc="the producer's batch size per partition, bytes")
    index_batch_size: int = setting(256, env="NLP_INDEX_BATCH",
                                    doc="documents per bulk request")
    index_batch_within: float = setting(0.1, env="NLP_INDEX_WITHIN",
                                        doc="seconds to fill a bulk request (a partial "
                                        "one waits this long)")
    retry: RetryPolicy = field(default_factory=RetryPolicy)
    web_port: int | None = setting(6066, env="NLP_STREAM_WEB_PORT", parse=lambda raw:
                                   int(raw) or None, doc="the worker's web page (`/health/`, "
                                   "`/metrics`); 0: off")
    web_bind: str = setting("127.0.0.1", env="NLP_STREAM_WEB_BIND", doc="the address the "
                            "worker's web page binds (Compose: 0.0.0.0 on its private "
                            "network, for Prometheus; the port is not published)")
    dlq_retention_days: float = setting(DLQ_RETENTION_DAYS, env="NLP_DLQ_RETENTION_DAYS",
                                        parse=float, doc="retention of the `.dlq` topics, days")
    hashtag_memory: MemoryConfig = field(default_factory=MemoryConfig)

    def __post_init__(self) -> None:
        a, b = self.index_prefix, self.article_index_prefix
        if a == b or a.startswith(b + "-") or b.startswith(a + "-"):
            raise ValueError(
                f"index prefixes {a!r} (posts) and {b!r} (articles) overlap: Elasticsearch "
                "refuses index templates whose patterns overlap; choose distinct prefixes")

    @property
    def article_index_pattern(self) -> str:
        return f"{self.article_index_prefix}-*"

    @property
    def index_pattern(self) -> str:
        """What searches, the template and Kibana use: every monthly index."""
        return f"{self.index_prefix}-*"

    @property
    def topics(self) -> Topics:
        return Topics.with_prefix(self.topic_prefix)

    @classmethod
    def from_env(cls, env: Mapping[str, str] | None = None) -> PipelineConfig:
        e = os.environ if env is None else env
        return cls(servers=Settings.from_env(e), retry=RetryPolicy.from_env(e),
                   hashtag_memory=MemoryConfig.from_env(e), **read(cls, e))


def load() -> PipelineConfig:
    """The configuration of this process's environment."""
    return PipelineConfig.from_env()
