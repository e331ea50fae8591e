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

from services.settings import Settings

#: Hard limit on a raw Kafka message; the broker allows 2 MiB (message.max.bytes).
MAX_RAW_BYTES = 2 * 1024 * 1024
#: Longer post texts are cut to this many code points (``TaggedPost.truncated``).
MAX_POST_CHARS = 10_000
#: Elasticsearch refuses ``_id`` values longer than 512 bytes.
MAX_ID_BYTES = 512
#: Longer article bodies are cut to this many code points (``EnrichedArticle.truncated``);
#: the models read far less (their max_source tokens) anyway.
MAX_ARTICLE_CHARS = 100_000
#: Required phrases per article, and characters per phrase.
MAX_PHRASES = 8
MAX_PHRASE_CHARS = 100
#: An article with more required phrases than this is rejected, not served in part.
MAX_REQUIRED_PHRASES = 64
MAX_TITLE_CHARS = 1000
#: A dead letter keeps at most this much of the original value and key, so that the
#: envelope of a message near the broker's 2 MiB limit still fits on the DLQ topic.
MAX_DLQ_VALUE_BYTES = 1024 * 1024
MAX_DLQ_KEY_BYTES = MAX_ID_BYTES
#: Reasons in dead letters and logs are cut to this many characters.
MAX_REASON_CHARS = 2000
#: Kafka keys are post/article ids: the same byte limit.
MAX_KEY_BYTES = MAX_ID_BYTES
#: Free-form fields of a post, checked where the post enters (``services.fields``).
MAX_ATTRIBUTES = 64
MAX_ATTRIBUTE_KEY_CHARS = 64
MAX_ATTRIBUTE_VALUE_CHARS = 1024  # the keyword mapping's ignore_above
MAX_USER_HASHTAGS = 64
MAX_HASHTAG_CHARS = 280
MAX_NAME_CHARS = 256  # author, source
MAX_LANG_CHARS = 35  # the longest BCP-47 tags in practice
#: Timestamps (created_at, published_at) must lie between the Unix epoch and this long
#: after the worker's clock: later ones are a producer's bug, and each would open a
#: monthly index of its own.
MAX_CLOCK_SKEW_DAYS = 1
#: Dead-letter topics keep their records this long (an operator's time to look and replay).
DLQ_RETENTION_DAYS = 14


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
    """

    initial: float = 0.5
    factor: float = 2.0
    max_delay: float = 30.0
    max_wait: float | None = None


@dataclass(frozen=True)
class PipelineConfig:
    """Everything the stream worker, the producer and the search CLI need."""

    servers: Settings = field(default_factory=Settings)
    app_id: str = "nlp-pipeline"
    topics: Topics = field(default_factory=Topics)
    index_prefix: str = "posts"
    pos_model: str = "pos_tagger"
    hashtag_model: str = "hashtag_generator"  # "" = tag posts without generating hashtags
    headline_model: str = "headline_generator"  # "" = no full headlines
    constrained_model: str = "constrained_headline_generator"  # "" = no constrained ones
    article_index_prefix: str = "articles"
    max_article_chars: int = MAX_ARTICLE_CHARS
    headline_batch_size: int = 16  # articles per batch (generation costs ~0.1-1 s each)
    headline_batch_within: float = 1.0
    max_post_chars: int = MAX_POST_CHARS
    max_raw_bytes: int = MAX_RAW_BYTES
    tag_batch_size: int = 256  # measured: 64 gave 161 tweets/s through the pipeline, 256 gave 232
    tag_batch_within: float = 0.2
    triton_concurrency: int = 4
    triton_timeout: float = 60.0
    index_batch_size: int = 256
    index_batch_within: float = 0.5
    retry: RetryPolicy = field(default_factory=RetryPolicy)
    web_port: int | None = 6066
    dlq_retention_days: float = DLQ_RETENTION_DAYS

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
        max_wait = e.get("NLP_RETRY_MAX_WAIT", "").strip()
        web_port = int(e.get("NLP_STREAM_WEB_PORT", "6066") or 0)
        return cls(
            servers=Settings.from_env(e),
            app_id=e.get("NLP_APP_ID", "nlp-pipeline"),
            topics=Topics.with_prefix(e.get("NLP_TOPIC_PREFIX", "")),
            index_prefix=e.get("NLP_INDEX_PREFIX", "posts").lower(),
            pos_model=e.get("NLP_POS_MODEL", "pos_tagger"),
            hashtag_model=e.get("NLP_HASHTAG_MODEL", "hashtag_generator").strip(),
            headline_model=e.get("NLP_HEADLINE_MODEL", "headline_generator").strip(),
            constrained_model=e.get("NLP_CONSTRAINED_MODEL",
                                    "constrained_headline_generator").strip(),
            article_index_prefix=e.get("NLP_ARTICLE_INDEX_PREFIX", "articles").lower(),
            headline_batch_size=int(e.get("NLP_HEADLINE_BATCH", 16)),
            max_post_chars=int(e.get("NLP_MAX_POST_CHARS", MAX_POST_CHARS)),
            tag_batch_size=int(e.get("NLP_TAG_BATCH", 256)),
            tag_batch_within=float(e.get("NLP_TAG_WITHIN", 0.2)),
            triton_concurrency=max(1, int(e.get("NLP_TRITON_CONCURRENCY", 4))),
            index_batch_size=int(e.get("NLP_INDEX_BATCH", 256)),
            index_batch_within=float(e.get("NLP_INDEX_WITHIN", 0.5)),
            retry=RetryPolicy(max_wait=float(max_wait) if max_wait else None),
            web_port=web_port or None,
            dlq_retention_days=float(e.get("NLP_DLQ_RETENTION_DAYS", DLQ_RETENTION_DAYS)),
        )


def load() -> PipelineConfig:
    """The configuration of this process's environment."""
    return PipelineConfig.from_env()
