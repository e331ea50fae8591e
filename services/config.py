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
    max_wait: float | None = None


@dataclass(frozen=True)
class MemoryConfig:
    """The hashtag memory (services/stream/memory.py) and the scorer's weights
    (services/stream/hashtag_scorer.py)."""

    enabled: bool = True
    window_hours: float = 24.0  # event time before a post that its memory covers
    neighbours: int = 5  # similar earlier posts asked per post
    timeout: float = 2.0  # seconds a batch waits for the memory before the generator alone
    trending_ttl: float = 5.0  # seconds a language's trending list is reused
    # The scorer's weights, chosen on the dev streams en_airline_2015 and zh_dev_stream
    # (`python -m training tune hashtag-memory`): the one setting within 5 % of each
    # language's best ROUGE-1 (docs/models/hashtag.md#hashtags-that-follow-the-stream).
    generated: float = 0.25
    similar: float = 4.0
    trending: float = 0.5
    threshold: float = 0.1
    # Hashtags the memory must not pass on (authors write slurs too): the served hashtag
    # generator's list unless NLP_HASHTAG_BLOCKLIST names another file; None: no file.
    blocklist: Path | None = None

    @classmethod
    def from_env(cls, e: Mapping[str, str]) -> MemoryConfig:
        weights = dict(part.split("=", 1) for part in
                       e.get("NLP_HASHTAG_WEIGHTS", "").replace(" ", "").split(",") if part)
        unknown = set(weights) - {"generated", "similar", "trending", "threshold"}
        if unknown:
            raise ValueError(f"NLP_HASHTAG_WEIGHTS: unknown weight(s) {sorted(unknown)}; "
                             "known: generated, similar, trending, threshold")
        d = cls()
        return cls(
            enabled=e.get("NLP_HASHTAG_MEMORY", "1").strip().lower() not in ("0", "false",
                                                                             "off", "no"),
            window_hours=float(e.get("NLP_HASHTAG_MEMORY_WINDOW_HOURS", d.window_hours)),
            neighbours=int(e.get("NLP_HASHTAG_MEMORY_NEIGHBOURS", d.neighbours)),
            timeout=float(e.get("NLP_HASHTAG_MEMORY_TIMEOUT", d.timeout)),
            trending_ttl=float(e.get("NLP_HASHTAG_MEMORY_TRENDING_TTL", d.trending_ttl)),
            blocklist=_blocklist(e),
            **{k: float(v) for k, v in weights.items()},
        )


def _blocklist(e: Mapping[str, str]) -> Path | None:
    """NLP_HASHTAG_BLOCKLIST, else the newest hashtag_generator version's blocklist.txt in
    the configured model repository (where the worker can see it)."""
    named = e.get("NLP_HASHTAG_BLOCKLIST", "").strip()
    if named:
        return Path(named)
    model = Settings.from_env(e).model_repository / registry.HASHTAG.name
    versions = sorted((p for p in model.glob("*/blocklist.txt") if p.parent.name.isdigit()),
                      key=lambda p: int(p.parent.name))
    return versions[-1] if versions else None


@dataclass(frozen=True)
class PipelineConfig:
    """Everything the stream worker, the producer and the search CLI need."""

    servers: Settings = field(default_factory=Settings)
    app_id: str = "nlp-pipeline"
    topics: Topics = field(default_factory=Topics)
    index_prefix: str = "posts"
    pos_model: str = registry.POS.name
    hashtag_model: str = registry.HASHTAG.name  # "" = tag posts without generating hashtags
    headline_model: str = registry.HEADLINE.name  # "" = no full headlines
    constrained_model: str = registry.CONSTRAINED.name  # "" = no constrained ones
    article_index_prefix: str = "articles"
    max_article_chars: int = MAX_ARTICLE_CHARS
    headline_batch_size: int = 16  # articles per batch (generation costs ~0.1-1 s each)
    headline_batch_within: float = 1.0
    max_post_chars: int = MAX_POST_CHARS
    max_raw_bytes: int = MAX_RAW_BYTES
    tag_batch_size: int = 256  # measured: 64 gave 161 tweets/s through the pipeline, 256 gave 232
    tag_batch_within: float = 0.2
    triton_concurrency: int = 4
    tag_in_flight: int = 4  # tag_posts batches in flight per worker (1 vs 4 in docs/benchmarks.md)
    triton_timeout: float = 60.0
    index_batch_size: int = 256
    index_batch_within: float = 0.5
    retry: RetryPolicy = field(default_factory=RetryPolicy)
    web_port: int | None = 6066
    dlq_retention_days: float = DLQ_RETENTION_DAYS
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

    @classmethod
    def from_env(cls, env: Mapping[str, str] | None = None) -> PipelineConfig:
        e = os.environ if env is None else env
        d = cls()  # the defaults are the fields' own: written once
        max_wait = e.get("NLP_RETRY_MAX_WAIT", "").strip()
        web_port = int(e.get("NLP_STREAM_WEB_PORT", str(d.web_port)) or 0)
        return cls(
            servers=Settings.from_env(e),
            app_id=e.get("NLP_APP_ID", d.app_id),
            topics=Topics.with_prefix(e.get("NLP_TOPIC_PREFIX", "")),
            index_prefix=e.get("NLP_INDEX_PREFIX", d.index_prefix).lower(),
            pos_model=e.get("NLP_POS_MODEL", d.pos_model),
            hashtag_model=e.get("NLP_HASHTAG_MODEL", d.hashtag_model).strip(),
            headline_model=e.get("NLP_HEADLINE_MODEL", d.headline_model).strip(),
            constrained_model=e.get("NLP_CONSTRAINED_MODEL", d.constrained_model).strip(),
            article_index_prefix=e.get("NLP_ARTICLE_INDEX_PREFIX",
                                       d.article_index_prefix).lower(),
            headline_batch_size=int(e.get("NLP_HEADLINE_BATCH", d.headline_batch_size)),
            max_post_chars=int(e.get("NLP_MAX_POST_CHARS", d.max_post_chars)),
            tag_batch_size=int(e.get("NLP_TAG_BATCH", d.tag_batch_size)),
            tag_batch_within=float(e.get("NLP_TAG_WITHIN", d.tag_batch_within)),
            triton_concurrency=max(1, int(e.get("NLP_TRITON_CONCURRENCY",
                                                d.triton_concurrency))),
            tag_in_flight=max(1, int(e.get("NLP_TAG_IN_FLIGHT", d.tag_in_flight))),
            index_batch_size=int(e.get("NLP_INDEX_BATCH", d.index_batch_size)),
            index_batch_within=float(e.get("NLP_INDEX_WITHIN", d.index_batch_within)),
            retry=RetryPolicy(max_wait=float(max_wait) if max_wait else None),
            web_port=web_port or None,
            dlq_retention_days=float(e.get("NLP_DLQ_RETENTION_DAYS", d.dlq_retention_days)),
            hashtag_memory=MemoryConfig.from_env(e),
        )


def load() -> PipelineConfig:
    """The configuration of this process's environment."""
    return PipelineConfig.from_env()
