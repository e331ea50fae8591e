"""The Faust app: broker, topics, and settings for the known failure modes.

Failure modes and what covers them:

- Broker outage: aiokafka reconnects by itself; our producers retry sends with backoff
  (``delivery.publish``) and batches stay unacked until delivery, so nothing is committed
  for work that did not reach Kafka. ``producer_request_timeout`` is cut from Faust's 20
  minutes to 60 s so an outage surfaces as logged retries instead of one silent wait.
  ``broker_request_timeout`` > ``broker_session_timeout`` as Faust requires.
- Worker crash (``kill -9``): its partitions wait for its session to expire before the
  group gives them to the others (or to its replacement). ``broker_session_timeout`` is
  10 s, not 30 s: measured with ``python -m bench faults --only worker_kill``, processing
  resumed 30 s after the restart with 30 s; heartbeats (every 3 s) run in Faust's
  consumer thread, so a busy event loop does not miss them.
- Slow handler (Triton or Elasticsearch down, a model reload): the agent waits in logged
  retries. Fetching and heartbeats run in Faust's consumer thread, so the member stays in
  the group (``broker_max_poll_interval`` is far above a batch's normal time);
  ``stream_processing_timeout`` makes Faust log an error when a batch takes unusually
  long, and ``broker_commit_livelock_soft_timeout`` warns when offsets stop advancing
  while messages are in flight -- both are the operator's signal, not a crash.
  ``stream_buffer_maxsize`` bounds the prefetch so a stalled agent does not hoard memory
  and starve the other agent (4,096 records, ~4 MB of posts; 1,024 starved the indexer
  behind a raw backlog: the consumer blocks on a full buffer, see docs/benchmarks.md).
- Rebalance/restart reprocessing: at-least-once by design (offsets committed after the
  downstream write). Reprocessed posts are re-tagged and re-published with the same key
  and re-indexed under the same ``_id``: harmless. Because of that, ``stream_wait_empty``
  is off: with it on, Faust waits on shutdown and on every rebalance until all in-flight
  messages are acked -- forever while a batch waits for a Triton or Elasticsearch outage
  (seen here: SIGTERM during a Triton outage never finished; the same stall is reported
  in Faust's issue tracker as consumers hanging after outages). With it off, the
  in-flight batch is cancelled, ``delivery.hold`` keeps its offsets uncommitted, and the
  next owner of the partition processes it again.
- Large messages: producer and fetch limits match the broker's 2 MiB message limit.
- A backlog on posts.raw starving ``index_posts``: one consumer feeds both agents. Faust
  stops fetching a partition when its stream's buffer is 80 % full, but delivers what
  one poll returned even if it must wait for room, and meanwhile nothing else is
  delivered; so a poll returns at most an eighth of the buffer
  (``broker_max_poll_records``: 512 of 4,096 fit in the 20 % left). The fetch itself
  waits 100 ms at most (``services.stream.transport``). Measured in docs/benchmarks.md.
"""

from __future__ import annotations

import faust
import faust.web

from services.config import PipelineConfig, load
from services.credentials import KafkaSecurity
from services.limits import MAX_RAW_BYTES
from services.retry import WAITING
from services.stream import indexing, metrics, stage, transport
from services.stream.delivery import COUNTS
from services.stream.headline_articles import HeadlineArticles
from services.stream.scrape_target import ScrapeTarget, target_address, target_file
from services.stream.tag_posts import TagPosts


def create_app(cfg: PipelineConfig) -> faust.App:
    """A Faust app with the pipeline's settings (no agents yet)."""
    datadir = cfg.servers.state_dir / "faust"
    datadir.mkdir(parents=True, exist_ok=True)  # Faust creates only the last level
    buffer = max(4096, 4 * cfg.index_batch_size)
    return faust.App(
        cfg.app_id,
        broker=f"{transport.SCHEME}://{cfg.servers.kafka_bootstrap}",
        store="memory://",
        datadir=str(datadir / cfg.app_id),  # not the working directory
        autodiscover=False,
        web_enabled=cfg.web_port is not None,
        web_port=cfg.web_port or 6066,
        web_bind=cfg.web_bind,
        web_host="127.0.0.1",
        producer_acks=-1,
        producer_max_request_size=MAX_RAW_BYTES,
        producer_linger=cfg.producer_linger_ms / 1000,
        producer_max_batch_size=cfg.producer_batch_bytes,
        producer_request_timeout=60.0,
        consumer_max_fetch_size=2 * MAX_RAW_BYTES,
        consumer_auto_offset_reset="earliest",
        broker_commit_interval=1.0,
        broker_session_timeout=10.0,
        broker_heartbeat_interval=3.0,
        broker_request_timeout=60.0,
        broker_max_poll_interval=600.0,
        broker_commit_livelock_soft_timeout=120.0,
        stream_processing_timeout=120.0,
        stream_buffer_maxsize=buffer,
        broker_max_poll_records=buffer // 8,
        stream_wait_empty=False,
        topic_partitions=4,
        broker_credentials=KafkaSecurity.from_env().faust_credentials(),
    )


def raw_topic(app: faust.App, name: str) -> faust.TopicT:
    """A topic whose keys and values are bytes (protobuf is decoded by the agents)."""
    return app.topic(
        name, key_type=bytes, value_type=bytes, key_serializer="raw", value_serializer="raw"
    )


def health() -> dict[str, object]:
    """What the worker's ``/health/`` page serves: ``ok`` unless something waits on a
    dependency (Triton, Elasticsearch, Kafka) right now, what waits and why, and the
    counters since start (dead letters per code, dead letters dropped)."""
    waiting = sorted(WAITING.values(), key=lambda w: -float(w["waited_s"]))  # type: ignore[arg-type]
    counters = dict(sorted(COUNTS.items()))
    return {"status": "waiting" if waiting else "ok", "waiting": waiting,
            "counters": counters}


def build(cfg: PipelineConfig) -> faust.App:
    """The app with its agents: posts (tag, index) and articles (headlines, index)."""
    app = create_app(cfg)

    @app.page("/health/")
    async def health_page(web: faust.web.Web, request: faust.web.Request) -> faust.web.Response:
        return web.json(health())

    @app.page("/metrics")
    async def metrics_page(web: faust.web.Web, request: faust.web.Request
                           ) -> faust.web.Response:
        return web.bytes(metrics.exposition(), content_type="text/plain")

    if cfg.web_port is not None:  # Prometheus finds the worker while it serves /metrics
        address = target_address(cfg.web_bind, cfg.web_port)
        app.service(ScrapeTarget(app, target_file(cfg.servers.state_dir, address), address))

    t = cfg.topics
    stage.register(
        app, lambda: TagPosts.connect(cfg), "tag_posts", raw_topic(app, t.posts_raw),
        raw_topic(app, t.posts_tagged), raw_topic(app, t.posts_raw_dlq),
        cfg.tag_batch_size, cfg.tag_batch_within, cfg.retry, cfg.tag_in_flight,
    )
    indexing.register(
        app, cfg.servers.es_url, cfg.index_prefix, indexing.POSTS, cfg.index_batch_size,
        cfg.index_batch_within, cfg.retry, raw_topic(app, t.posts_tagged),
        raw_topic(app, t.posts_tagged_dlq),
    )
    if cfg.headline_model or cfg.constrained_model:
        stage.register(
            app, lambda: HeadlineArticles.connect(cfg), "headline_articles",
            raw_topic(app, t.articles_raw), raw_topic(app, t.articles_headlines),
            raw_topic(app, t.articles_raw_dlq), cfg.headline_batch_size,
            cfg.headline_batch_within, cfg.retry,
        )
        indexing.register(
            app, cfg.servers.es_url, cfg.article_index_prefix, indexing.ARTICLES,
            cfg.index_batch_size, cfg.index_batch_within, cfg.retry,
            raw_topic(app, t.articles_headlines), raw_topic(app, t.articles_headlines_dlq),
        )
    return app


config = load()
app = build(config)
