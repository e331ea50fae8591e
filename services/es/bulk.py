"""Bulk indexing with retries: outages wait, per-document rejections are reported.

The synchronous 7.17 client runs in a worker thread (``asyncio.to_thread``) so the Faust
event loop keeps heartbeating while a bulk request is in flight. The client's own retries
are off; ``retry_async`` owns backoff and logging.

Classification of a bulk response, per item:

- 2xx: done.
- 429 and 5xx: the node is overloaded or a shard is not ready, the item is resent.
- anything else (400 ``mapper_parsing_exception``, ...): permanent; reported to the caller,
  which puts the message on the DLQ.
"""

from __future__ import annotations

import asyncio
import json
import logging
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

import orjson
from elasticsearch import Elasticsearch
from elasticsearch import exceptions as es_exc

from services.config import RetryPolicy
from services.credentials import ElasticsearchAuth
from services.retry import retry_async

log = logging.getLogger(__name__)


@dataclass(frozen=True)
class BulkItem:
    """One document to index; ``ref`` lets the caller map failures back to messages."""

    index: str
    doc_id: str
    source: dict[str, Any]
    ref: int = 0


@dataclass(frozen=True)
class ItemFailure:
    item: BulkItem
    status: int
    error: str


class RetryableItems(Exception):
    """Some items got 429/5xx; raised inside the retry loop so they are resent."""

    def __init__(self, pending: list[BulkItem], sample: str) -> None:
        super().__init__(f"{len(pending)} documents need a retry, e.g. {sample}")
        self.pending = pending


#: What the worker reads of a bulk response: per item its status and error, in order.
#: Without the rest (index, id, version, shards per item) Elasticsearch writes and the
#: worker parses a fraction of the bytes.
RESPONSE_FIELDS = "items.*.status,items.*.error"


def bulk_body(items: Sequence[BulkItem]) -> bytes:
    """The NDJSON request: action/source pairs, ``index`` (not ``create``) so a redelivery
    overwrites. Encoded with orjson: the client's json.dumps per line was ~5 % of the
    worker's CPU (docs/benchmarks.md)."""
    lines: list[bytes] = []
    for item in items:
        lines.append(orjson.dumps({"index": {"_index": item.index, "_id": item.doc_id}}))
        lines.append(orjson.dumps(item.source))
    return b"\n".join(lines) + b"\n"


def is_retryable_status(status: int) -> bool:
    return status == 429 or status >= 500


def classify(
    response: dict[str, Any], items: Sequence[BulkItem]
) -> tuple[list[BulkItem], list[ItemFailure]]:
    """Split a bulk response into (items to retry, permanent failures)."""
    retry: list[BulkItem] = []
    failed: list[ItemFailure] = []
    for item, result in zip(items, response.get("items", []), strict=True):
        outcome = next(iter(result.values()))
        status = int(outcome.get("status", 500))
        if status < 300:
            continue
        if is_retryable_status(status):
            retry.append(item)
        else:
            error = json.dumps(outcome.get("error", {}), ensure_ascii=False)[:2000]
            failed.append(ItemFailure(item, status, error))
    return retry, failed


def is_transient(exc: BaseException) -> bool:
    """Connection problems, timeouts, 429/5xx for the whole request, retryable items."""
    if isinstance(exc, RetryableItems | es_exc.ConnectionError | es_exc.ConnectionTimeout):
        return True
    if isinstance(exc, es_exc.TransportError):
        status = exc.status_code if isinstance(exc.status_code, int) else 503
        return is_retryable_status(status)
    return False


class BulkIndexer:
    """Index batches of documents, waiting out Elasticsearch outages."""

    def __init__(self, es: Elasticsearch, retry: RetryPolicy | None = None) -> None:
        self.es = es
        self.retry = retry or RetryPolicy()

    async def index(self, items: Sequence[BulkItem]) -> list[ItemFailure]:
        """Index all ``items``; return the ones Elasticsearch rejected for good."""
        pending = list(items)
        failures: list[ItemFailure] = []

        async def attempt() -> None:
            nonlocal pending
            response = await asyncio.to_thread(self._bulk, pending)
            retry, failed = classify(response, pending)
            failures.extend(failed)
            pending = retry
            if retry:
                raise RetryableItems(retry, sample=str(retry[0].doc_id))

        if pending:
            await retry_async(
                attempt, policy=self.retry, is_transient=is_transient,
                what=f"Elasticsearch bulk ({len(pending)} docs)", log=log,
            )
        return failures

    def _bulk(self, items: Sequence[BulkItem]) -> dict[str, Any]:
        return self.es.bulk(body=bulk_body(items), filter_path=RESPONSE_FIELDS)


def make_client(url: str, timeout: float = 30.0) -> Elasticsearch:
    """A client without its own retries (ours log and back off)."""
    return Elasticsearch([url], timeout=timeout, max_retries=0, retry_on_timeout=False,
                         **ElasticsearchAuth.from_env().client_options(url))
