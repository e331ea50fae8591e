"""The peer: the posts pipeline as a user would hand-write it without Faust.

    python -m bench.peer      (configured by the same NLP_* environment as the worker)

One process, one plain loop (on uvloop, as the worker): an aiokafka consumer takes up to
``NLP_TAG_BATCH`` raw posts, the same validation as the worker (``services.stream.posts``)
turns bad ones into dead letters, the same models tag the rest
(``services.stream.tag_posts.Models``: POS tagger, hashtag generator and memory, sub-batches
in flight at once, a refused batch retried post by post), the same document (``_id`` = post
id, monthly index) goes to Elasticsearch through ``async_streaming_bulk``, and only then are
the dead letters sent and the offsets committed.
So it keeps the guarantees that count here (at-least-once, a redelivered post overwrites
its own document, bad input is dead-lettered with a reason), and skips what the product
adds: Faust's per-event machinery, and the ``posts.tagged`` topic between tagging and
indexing. It lives in ``bench/`` to keep the product honest (``python -m bench pipeline``),
not to be deployed.
"""

from __future__ import annotations

import asyncio
import logging
import time
from collections.abc import Sequence
from datetime import UTC, datetime

import uvloop
from aiokafka import AIOKafkaConsumer, AIOKafkaProducer
from elasticsearch import AsyncElasticsearch
from elasticsearch.helpers import async_streaming_bulk

from services import errors
from services.config import PipelineConfig, load
from services.credentials import ElasticsearchAuth, KafkaSecurity
from services.dlq import Origin, dead_letter, record_key
from services.es.bulk import make_client
from services.es.documents import index_name, post_document
from services.es.template import install_template
from services.stream.posts import PreparedPost, build_tagged_post, prepare_post
from services.stream.tag_posts import Models, TagPosts, Tags
from services.triton import ModelError

log = logging.getLogger("peer")

Letter = tuple[Origin, str, str]  # a record for the dead-letter topic: origin, code, reason


Valid = tuple[Origin, PreparedPost]


async def tag(models: Models, items: Sequence[Valid]
              ) -> tuple[list[tuple[Valid, Tags]], list[Letter]]:
    """Tags per post; a batch a model refuses is retried post by post, and a post it
    refuses alone becomes a dead letter."""
    try:
        results = await models.run([post.post for _, post in items])
        return list(zip(items, results, strict=True)), []
    except ModelError as exc:
        if len(items) == 1:
            return [], [(items[0][0], errors.MODEL_ERROR, str(exc))]
    parts = await asyncio.gather(*(tag(models, [it]) for it in items))
    return [d for ok, _ in parts for d in ok], [f for _, bad in parts for f in bad]


def chunks(items: list, n: int) -> list[list]:
    size = max(8, -(-len(items) // n))
    return [items[i : i + size] for i in range(0, len(items), size)]


class Peer:
    def __init__(self, cfg: PipelineConfig) -> None:
        self.cfg = cfg
        self.models = TagPosts.connect(cfg).models
        url = cfg.servers.es_url
        self.es = AsyncElasticsearch([url], timeout=30,
                                     **ElasticsearchAuth.from_env().client_options(url))
        kafka = {"bootstrap_servers": cfg.servers.kafka_bootstrap,
                 **KafkaSecurity.from_env().kafka_options()}
        self.consumer = AIOKafkaConsumer(
            cfg.topics.posts_raw, group_id=cfg.app_id, enable_auto_commit=False,
            auto_offset_reset="earliest", max_partition_fetch_bytes=2 * cfg.max_raw_bytes,
            **kafka)
        self.producer = AIOKafkaProducer(acks="all", max_request_size=cfg.max_raw_bytes,
                                         **kafka)

    async def run(self) -> None:
        sync_es = make_client(self.cfg.servers.es_url)
        install_template(sync_es, self.cfg.index_prefix, "posts")
        sync_es.close()
        await self.producer.start()
        await self.consumer.start()
        print("peer: ready", flush=True)
        try:
            while True:
                fetched = await self.consumer.getmany(
                    timeout_ms=int(self.cfg.tag_batch_within * 1000),
                    max_records=self.cfg.tag_batch_size)
                records = [r for batch in fetched.values() for r in batch]
                if records:
                    await self.handle([Origin(r.topic, r.partition, r.offset, r.key, r.value)
                                       for r in records])
                    await self.consumer.commit()
        finally:
            await self.consumer.stop()
            await self.producer.stop()
            await self.models.close()
            await self.es.close()

    async def handle(self, origins: list[Origin]) -> None:
        began = time.monotonic()
        letters: list[Letter] = []
        valid: list[Valid] = []
        for origin in origins:
            try:
                valid.append((origin, prepare_post(
                    origin.value, max_bytes=self.cfg.max_raw_bytes,
                    max_chars=self.cfg.max_post_chars, key=origin.key)))
            except errors.Rejected as rej:
                letters.append((origin, rej.code, rej.reason))
        parts = await asyncio.gather(*(tag(self.models, c) for c in
                                       chunks(valid, self.cfg.triton_concurrency)))
        letters += [f for _, bad in parts for f in bad]
        now = datetime.now(UTC)
        actions, by_id = [], {}
        for (origin, post), tags in (d for ok, _ in parts for d in ok):
            tagged = build_tagged_post(post, tags.pos, tags.pos_model, now, tags.hashtags,
                                       tags.hashtag_model, tags.suggestions)
            actions.append({"_index": index_name(self.cfg.index_prefix, tagged.post),
                            "_id": tagged.post.id, "_source": post_document(tagged)})
            by_id[tagged.post.id] = origin
        letters += await self.index(actions, by_id)
        await self.dead_letter(letters)
        log.info("peer: %d records -> %d indexed, %d dead-lettered in %.2fs", len(origins),
                 len(actions), len(letters), time.monotonic() - began)

    async def index(self, actions: list[dict], by_id: dict[str, Origin]) -> list[Letter]:
        """Bulk-index, retrying 429s (the helper) and outages (here, whole batch: the ids
        make it idempotent); documents Elasticsearch rejects for good are returned."""
        delay = 0.5
        while True:
            try:
                failed = [item async for ok, item in async_streaming_bulk(
                    self.es, actions, chunk_size=len(actions) or 1, max_retries=5,
                    raise_on_error=False, yield_ok=False) if not ok]
                break
            except Exception as exc:  # noqa: BLE001 - an outage: wait, the batch is unacked
                log.warning("peer: Elasticsearch bulk failed (%s); retrying in %.1fs", exc,
                            delay)
                await asyncio.sleep(delay)
                delay = min(delay * 2, 30.0)
        letters = []
        for item in failed:
            info = item.get("index", {})
            letters.append((by_id[info.get("_id")], errors.INDEX_ERROR,
                            f"Elasticsearch rejected {info.get('_id')!r} (status "
                            f"{info.get('status')}): {info.get('error')}"))
        return letters

    async def dead_letter(self, letters: list[Letter]) -> None:
        now = datetime.now(UTC)
        sent = [await self.producer.send(
                    self.cfg.topics.posts_raw_dlq, key=record_key(origin.key),
                    value=dead_letter(origin, code, reason, now).SerializeToString())
                for origin, code, reason in letters]
        await asyncio.gather(*sent)


async def serve() -> None:
    """Made inside the event loop: the Kafka and Triton clients bind to it."""
    await Peer(load()).run()


def main() -> None:
    logging.basicConfig(level=logging.INFO, format="%(asctime)s %(message)s")
    uvloop.run(serve())  # the worker's event loop too (services/stream/__main__.py)


if __name__ == "__main__":
    main()
