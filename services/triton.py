"""Async client for the ``pos_tagger`` Triton model (gRPC, ``tritonclient.grpc.aio``).

One call sends a whole list of texts as one ``[n, 1]`` BYTES request; Triton's dynamic
batcher may merge it with other in-flight requests. While Triton is unreachable or the
model is (re)loading, the call retries with exponential backoff and logs every attempt;
errors that are about the input itself (``INVALID_ARGUMENT``, ``INTERNAL``) raise
``ModelError`` at once so the caller can isolate the offending text.
"""

from __future__ import annotations

import json
import logging
from collections.abc import Sequence
from dataclasses import dataclass

import numpy as np
import tritonclient.grpc as grpcclient
import tritonclient.grpc.aio as grpcaio
from tritonclient.utils import InferenceServerException

from services.config import RetryPolicy
from services.retry import retry_async

log = logging.getLogger(__name__)

INPUT = "TEXT"
OUTPUT = "TAGS_JSON"

#: gRPC statuses that mean "Triton or the model is not available right now".
TRANSIENT_STATUSES = frozenset(
    {
        "StatusCode.UNAVAILABLE",
        "StatusCode.DEADLINE_EXCEEDED",
        "StatusCode.RESOURCE_EXHAUSTED",
        "StatusCode.NOT_FOUND",  # unknown model / no version loaded: a reload in progress
        "StatusCode.ABORTED",
        "StatusCode.CANCELLED",
    }
)


class ModelError(RuntimeError):
    """Triton answered, but refused or failed on this request (not an outage)."""


@dataclass(frozen=True)
class TaggedToken:
    text: str
    start: int
    end: int
    ptb: str
    ark: str


@dataclass(frozen=True)
class TagResult:
    """Tokens of one text; ``truncated`` when the model tagged only a prefix."""

    tokens: tuple[TaggedToken, ...]
    truncated: bool


@dataclass(frozen=True)
class TagBatch:
    """Results in request order, plus which model version produced them."""

    results: list[TagResult]
    model_name: str
    model_version: str


def is_transient(exc: BaseException) -> bool:
    """True for outages worth waiting for, False for errors about the request."""
    if isinstance(exc, InferenceServerException):
        status = exc.status() or ""
        return status in TRANSIENT_STATUSES or "unavailable" in str(exc).lower()
    return isinstance(exc, OSError | TimeoutError)


def parse_tags_json(raw: bytes | str) -> TagResult:
    """Decode one ``TAGS_JSON`` element: ``{"tokens": [[text, start, end, ptb, ark]...]}``."""
    try:
        data = json.loads(raw)
        tokens = tuple(
            TaggedToken(str(t[0]), int(t[1]), int(t[2]), str(t[3]), str(t[4]))
            for t in data["tokens"]
        )
        return TagResult(tokens, bool(data.get("truncated", False)))
    except (ValueError, KeyError, IndexError, TypeError) as exc:
        raise ModelError(f"unexpected {OUTPUT} element: {exc}") from exc


def make_inputs(texts: Sequence[str]) -> list[grpcclient.InferInput]:
    """One BYTES tensor of shape [n, 1], UTF-8 encoded."""
    arr = np.array([t.encode("utf-8") for t in texts], dtype=np.object_).reshape(-1, 1)
    tensor = grpcclient.InferInput(INPUT, list(arr.shape), "BYTES")
    tensor.set_data_from_numpy(arr)
    return [tensor]


class PosTaggerClient:
    """Tag lists of texts with the POS model. Create it inside the running event loop."""

    def __init__(
        self,
        url: str,
        model: str = "pos_tagger",
        retry: RetryPolicy | None = None,
        timeout: float = 60.0,
    ) -> None:
        self.url = url
        self.model = model
        self.retry = retry or RetryPolicy()
        self.timeout = timeout
        self._client = grpcaio.InferenceServerClient(url)

    async def tag(self, texts: Sequence[str]) -> TagBatch:
        """Tag ``texts`` in one request, waiting out Triton outages."""
        if not texts:
            return TagBatch([], self.model, "")
        return await retry_async(
            lambda: self._infer(texts),
            policy=self.retry,
            is_transient=is_transient,
            what=f"Triton {self.model} at {self.url} ({len(texts)} texts)",
            log=log,
        )

    async def _infer(self, texts: Sequence[str]) -> TagBatch:
        try:
            result = await self._client.infer(
                self.model, make_inputs(texts), client_timeout=self.timeout
            )
        except InferenceServerException as exc:
            if is_transient(exc):
                raise
            raise ModelError(f"{exc.status()}: {exc.message()}") from exc
        out = result.as_numpy(OUTPUT)
        if out is None or out.shape[0] != len(texts):
            raise ModelError(f"{OUTPUT} has shape {getattr(out, 'shape', None)}, "
                             f"expected ({len(texts)}, 1)")
        response = result.get_response()
        return TagBatch(
            [parse_tags_json(row[0]) for row in out],
            response.model_name or self.model,
            response.model_version,
        )

    async def close(self) -> None:
        await self._client.close()
