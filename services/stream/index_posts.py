"""Agent ``index_posts``: posts.tagged -> Elasticsearch ``<prefix>-YYYY.MM``.

Each batch (``take_events``) becomes one bulk request with ``_id`` = post id, so a
redelivered record (after a rebalance or a restart before the commit) overwrites the same
document instead of duplicating it. Outages of Elasticsearch are waited out with backoff
(the batch's offsets stay uncommitted meanwhile); documents Elasticsearch rejects for good
(mapping errors) and records that are not a TaggedPost go to posts.tagged.dlq. Offsets
advance only after the bulk request succeeded and the dead letters were delivered.
"""

from __future__ import annotations

import asyncio
import logging
import time
from collections.abc import Sequence

import faust
from elasticsearch import Elasticsearch
from google.protobuf.message import DecodeError

from services import errors
from services.config import PipelineConfig, RetryPolicy
from services.dlq import Origin
from services.es.bulk import BulkItem, ItemFailure, PostIndexer, is_transient, make_client
from services.es.documents import index_name, post_document
from services.es.template import install_template
from services.pb import messages_pb2 as pb
from services.retry import retry_async
from services.stream.batching import Outgoing, dlq_record, guarded, origin_of, publish

log = logging.getLogger(__name__)


def decode_tagged(origin: Origin) -> pb.TaggedPost:
    """Parse a posts.tagged record; raises ``Rejected``."""
    try:
        tagged = pb.TaggedPost.FromString(origin.value or b"")
    except (DecodeError, ValueError) as exc:
        raise errors.Rejected(errors.DECODE_ERROR, f"not a TaggedPost protobuf: {exc}") from None
    if not tagged.post.id.strip():
        raise errors.Rejected(errors.INVALID, "tagged post has no id")
    return tagged


def bulk_items(
    origins: Sequence[Origin], prefix: str
) -> tuple[list[BulkItem], list[tuple[Origin, errors.Rejected]]]:
    """Documents for the decodable records (``ref`` = position in ``origins``)."""
    items: list[BulkItem] = []
    rejected: list[tuple[Origin, errors.Rejected]] = []
    for ref, origin in enumerate(origins):
        try:
            tagged = decode_tagged(origin)
        except errors.Rejected as rej:
            rejected.append((origin, rej))
            continue
        items.append(
            BulkItem(index_name(prefix, tagged.post), tagged.post.id, post_document(tagged), ref)
        )
    return items, rejected


def dead_letters(
    origins: Sequence[Origin],
    rejected: Sequence[tuple[Origin, errors.Rejected]],
    failures: Sequence[ItemFailure],
    dlq: faust.TopicT,
) -> list[Outgoing]:
    records = [dlq_record(dlq, o, rej.code, rej.reason) for o, rej in rejected]
    records += [
        dlq_record(
            dlq, origins[f.item.ref], errors.INDEX_ERROR,
            f"Elasticsearch rejected {f.item.doc_id!r} in {f.item.index} "
            f"(status {f.status}): {f.error}",
        )
        for f in failures
    ]
    return records


async def handle_batch(
    origins: Sequence[Origin], indexer: PostIndexer, cfg: PipelineConfig, dlq: faust.TopicT
) -> None:
    started = time.monotonic()
    items, rejected = bulk_items(origins, cfg.index_prefix)
    failures = await indexer.index(items)
    await publish(dead_letters(origins, rejected, failures, dlq), cfg.retry, "index_posts")
    log.info(
        "index_posts: %d records -> %d indexed, %d dead-lettered in %.2fs",
        len(origins), len(items) - len(failures), len(rejected) + len(failures),
        time.monotonic() - started,
    )


async def install_template_when_up(es: Elasticsearch, prefix: str, policy: RetryPolicy) -> None:
    """The template must exist before the first bulk creates an index."""

    async def attempt() -> None:
        await asyncio.to_thread(install_template, es, prefix)

    await retry_async(attempt, policy=policy, is_transient=is_transient,
                      what="install index template", log=log)
    log.info("index template %s-* installed", prefix)


def register(
    app: faust.App, cfg: PipelineConfig, source: faust.TopicT, dlq: faust.TopicT
) -> None:
    """Attach the agent to ``app``."""

    @app.agent(source, name="index_posts")
    async def index_posts(stream: faust.StreamT) -> None:
        es = make_client(cfg.servers.es_url)
        await install_template_when_up(es, cfg.index_prefix, cfg.retry)
        indexer = PostIndexer(es, cfg.retry)
        try:
            batches = stream.take_events(cfg.index_batch_size, within=cfg.index_batch_within)
            async for events in batches:
                origins = [origin_of(e) for e in events]
                await guarded(
                    events,
                    lambda origins=origins: handle_batch(origins, indexer, cfg, dlq),
                    dlq, cfg.retry, "index_posts",
                )
        finally:
            es.close()
