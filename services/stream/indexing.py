"""Agents ``index_posts`` (posts.tagged) and ``index_articles`` (articles.headlines) ->
Elasticsearch monthly indices ``<prefix>-YYYY.MM``.

Each batch (``take_events``) becomes one bulk request with ``_id`` = post or article id, so
a redelivered record (after a rebalance or a restart before the commit) overwrites the same
document instead of duplicating it. Outages of Elasticsearch are waited out with backoff
(the batch's offsets stay uncommitted meanwhile); documents Elasticsearch rejects for good
(mapping errors) and records that do not decode go to the source topic's DLQ. Offsets
advance only after the bulk request succeeded and the dead letters were delivered.
"""

from __future__ import annotations

import asyncio
import logging
import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import Any

import faust
from elasticsearch import Elasticsearch

from services import errors
from services.config import RetryPolicy
from services.dlq import Origin
from services.es.bulk import BulkIndexer, BulkItem, ItemFailure, is_transient, make_client
from services.es.documents import (
    article_document,
    article_index_name,
    index_name,
    post_document,
)
from services.es.template import install_template
from services.pb import messages_pb2 as pb
from services.retry import retry_async
from services.stream.delivery import Outgoing, consume_batches, dlq_record, publish
from services.stream.metrics import END_TO_END, LAST_INDEXED, RECORDS

log = logging.getLogger(__name__)


@dataclass(frozen=True)
class DocumentKind:
    """What one indexing agent reads and writes."""

    agent: str  # Faust agent name
    template: str  # index template kind (services/es/<template>_template.json)
    # record value, index prefix -> (index, _id, _source); raises errors.Rejected
    to_document: Callable[[bytes | None, str], tuple[str, str, dict[str, Any]]]


def tagged_post_document(value: bytes | None, prefix: str) -> tuple[str, str, dict[str, Any]]:
    tagged = errors.decode(pb.TaggedPost, value)
    if not tagged.post.id.strip():
        raise errors.Rejected(errors.INVALID, "tagged post has no id")
    return index_name(prefix, tagged.post), tagged.post.id, post_document(tagged)


def enriched_article_document(value: bytes | None,
                              prefix: str) -> tuple[str, str, dict[str, Any]]:
    enriched = errors.decode(pb.EnrichedArticle, value)
    if not enriched.article.id.strip():
        raise errors.Rejected(errors.INVALID, "enriched article has no id")
    return (article_index_name(prefix, enriched.article), enriched.article.id,
            article_document(enriched))


POSTS = DocumentKind("index_posts", "posts", tagged_post_document)
ARTICLES = DocumentKind("index_articles", "articles", enriched_article_document)


def bulk_items(
    origins: Sequence[Origin], prefix: str, kind: DocumentKind
) -> tuple[list[BulkItem], list[tuple[Origin, errors.Rejected]]]:
    """Documents for the decodable records (``ref`` = position in ``origins``)."""
    items: list[BulkItem] = []
    rejected: list[tuple[Origin, errors.Rejected]] = []
    for ref, origin in enumerate(origins):
        try:
            index, doc_id, source = kind.to_document(origin.value, prefix)
        except errors.Rejected as rej:
            rejected.append((origin, rej))
            continue
        except Exception as exc:  # a field the document cannot take; only this record
            rejected.append((origin, errors.Rejected(
                errors.INVALID, f"cannot build the document: {type(exc).__name__}: {exc}")))
            continue
        items.append(BulkItem(index, doc_id, source, ref))
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


def record_indexed(kind: str, origins: Sequence[Origin], items: Sequence[BulkItem],
                   failures: Sequence[ItemFailure]) -> None:
    """Count the indexed documents and how long after its input arrived each one was
    indexed (the input's arrival travels with the enriched record as a header)."""
    failed = {f.item.ref for f in failures}
    indexed = [item for item in items if item.ref not in failed]
    RECORDS.labels(f"index_{kind}", "done").inc(len(indexed))
    RECORDS.labels(f"index_{kind}", "dead_lettered").inc(len(origins) - len(indexed))
    now = time.time()
    for item in indexed:
        arrived = origins[item.ref].arrived
        if arrived:
            END_TO_END.labels(kind).observe(max(0.0, now - arrived))
    if indexed:
        LAST_INDEXED.labels(kind).set(now)


async def handle_batch(origins: Sequence[Origin], indexer: BulkIndexer, prefix: str,
                       kind: DocumentKind, dlq: faust.TopicT, retry: RetryPolicy) -> None:
    started = time.monotonic()
    items, rejected = bulk_items(origins, prefix, kind)
    failures = await indexer.index(items)
    await publish(dead_letters(origins, rejected, failures, dlq), retry, kind.agent)
    record_indexed(kind.template, origins, items, failures)
    log.info(
        "%s: %d records -> %d indexed, %d dead-lettered in %.2fs", kind.agent,
        len(origins), len(items) - len(failures), len(rejected) + len(failures),
        time.monotonic() - started,
    )


async def install_template_when_up(es: Elasticsearch, prefix: str, kind: DocumentKind,
                                   policy: RetryPolicy) -> None:
    """The template must exist before the first bulk creates an index."""

    async def attempt() -> None:
        await asyncio.to_thread(install_template, es, prefix, kind.template)

    await retry_async(attempt, policy=policy, is_transient=is_transient,
                      what="install index template", log=log)
    log.info("index template %s-* installed", prefix)


def register(app: faust.App, es_url: str, prefix: str, kind: DocumentKind,
             batch_size: int, within: float, retry: RetryPolicy,
             source: faust.TopicT, dlq: faust.TopicT) -> None:
    """Attach an indexing agent for `kind` to ``app``."""

    @app.agent(source, name=kind.agent)
    async def index_documents(stream: faust.StreamT) -> None:
        es = make_client(es_url)
        await install_template_when_up(es, prefix, kind, retry)
        indexer = BulkIndexer(es, retry)
        try:
            await consume_batches(
                stream, batch_size, within, 1,
                lambda origins: handle_batch(origins, indexer, prefix, kind, dlq, retry),
                dlq, retry, kind.agent,
            )
        finally:
            es.close()
