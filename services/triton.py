"""Async clients for the pipeline's Triton models (gRPC aio): ``pos_tagger``,
``hashtag_generator``, ``headline_generator`` and ``constrained_headline_generator``.

Answers are the typed records of nlp_models/contract.py, the wire format both sides share.
One call sends a whole list of texts as one ``[n, 1]`` BYTES request; Triton's dynamic
batcher may merge it with other in-flight requests. While Triton is unreachable or the
model is (re)loading, the call retries with exponential backoff and logs every attempt;
errors that are about the input itself (``INVALID_ARGUMENT``, ``INTERNAL``) raise
``ModelError`` at once so the caller can isolate the offending text.
"""

from __future__ import annotations

import logging
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import Generic, TypeVar

import numpy as np
import tritonclient.grpc as grpcclient
import tritonclient.grpc.aio as grpcaio
from tritonclient.utils import InferenceServerException

from nlp_models import contract, registry
from nlp_models.contract import (
    HashtagResult,
    HeadlineResult,
    TagResult,
    hashtags_from_json,
    headlines_from_json,
    tags_from_json,
)
from services.config import RetryPolicy
from services.retry import retry_async

log = logging.getLogger(__name__)

T = TypeVar("T")


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


class BatchTimedOut(ModelError):
    """A request of several texts ran past its deadline. Retrying the same batch would
    time out again; callers split it (the ``ModelError`` path), and a single text that
    times out is an outage to wait out."""


@dataclass(frozen=True)
class Batch(Generic[T]):
    """One model call's results in request order, and which model version produced them
    (every document carries it)."""

    results: list[T]
    model_name: str
    model_version: str


def is_transient(exc: BaseException) -> bool:
    """True for outages worth waiting for, False for errors about the request."""
    if isinstance(exc, InferenceServerException):
        status = exc.status() or ""
        return status in TRANSIENT_STATUSES or "unavailable" in str(exc).lower()
    return isinstance(exc, OSError | TimeoutError)


def parse_tags_json(raw: bytes | str) -> TagResult:
    """One ``contract.TAGS_JSON`` element (nlp_models/contract.py); ModelError if malformed."""
    return _parsed(tags_from_json, raw)


def parse_hashtags_json(raw: bytes | str) -> HashtagResult:
    return _parsed(hashtags_from_json, raw)


def parse_headlines_json(raw: bytes | str) -> HeadlineResult:
    return _parsed(headlines_from_json, raw)


def _parsed(decode: Callable[[bytes | str], T], raw: bytes | str) -> T:
    try:
        return decode(raw)
    except ValueError as exc:
        raise ModelError(str(exc)) from exc


def bytes_input(name: str, values: Sequence[str]) -> grpcclient.InferInput:
    """One BYTES tensor of shape [n, 1], UTF-8 encoded."""
    arr = np.array([v.encode("utf-8") for v in values], dtype=np.object_).reshape(-1, 1)
    tensor = grpcclient.InferInput(name, list(arr.shape), "BYTES")
    tensor.set_data_from_numpy(arr)
    return tensor


def int32_input(name: str, values: Sequence[int]) -> grpcclient.InferInput:
    """One INT32 tensor of shape [n, 1]."""
    arr = np.array(values, dtype=np.int32).reshape(-1, 1)
    tensor = grpcclient.InferInput(name, list(arr.shape), "INT32")
    tensor.set_data_from_numpy(arr)
    return tensor


def make_inputs(texts: Sequence[str]) -> list[grpcclient.InferInput]:
    return [bytes_input(contract.TEXT, texts)]


#: gRPC channel options of every Triton client. gRPC's defaults back off reconnection
#: exponentially up to 120 s, so after a Triton restart a client could fail fast for over a
#: minute against a server that was already back; reconnecting at least every second
#: bounds that to about a second (measured in the README). Keepalive stays as tritonclient
#: sets it (off): a restarted or killed Triton resets the connection, which gRPC notices at
#: once, and Triton's default ping policy (at most one ping per 5 minutes without data)
#: answers more frequent pings with GOAWAY. Message limits as tritonclient's (2 GiB).
#: Round robin over every address the name resolves to: Triton replicas behind one DNS
#: name (docker-compose.yml's ``replica`` profile) share the requests, and a restarted one
#: is skipped until it is back (with one address this is pick-first).
CHANNEL_ARGS: list[tuple[str, int | str]] = [
    ("grpc.lb_policy_name", "round_robin"),
    ("grpc.max_send_message_length", 2**31 - 1),
    ("grpc.max_receive_message_length", 2**31 - 1),
    ("grpc.initial_reconnect_backoff_ms", 100),
    ("grpc.min_reconnect_backoff_ms", 100),
    ("grpc.max_reconnect_backoff_ms", 1000),
    ("grpc.keepalive_time_ms", 2**31 - 1),
    ("grpc.keepalive_timeout_ms", 20_000),
    ("grpc.keepalive_permit_without_calls", 0),
    ("grpc.http2.max_pings_without_data", 2),
]


class TritonModelClient:
    """One Triton model over gRPC: retries outages, raises ModelError for refusals.

    Create it inside the running event loop; subclasses add the typed call."""

    def __init__(self, url: str, model: str, retry: RetryPolicy | None = None,
                 timeout: float = 60.0) -> None:
        self.url = url
        self.model = model
        self.retry = retry or RetryPolicy()
        self.timeout = timeout
        self._client = grpcaio.InferenceServerClient(url, channel_args=CHANNEL_ARGS)

    async def infer(self, inputs: list[grpcclient.InferInput], output: str, n: int,
                    timeout: float | None = None):
        """Run the model, waiting out Triton outages -> (output rows, model name, version).
        ``timeout`` (seconds) overrides the client's per-attempt timeout."""
        return await retry_async(
            lambda: self._infer(inputs, output, n, timeout or self.timeout),
            policy=self.retry,
            is_transient=is_transient,
            what=f"Triton {self.model} at {self.url} ({n} texts)",
            log=log,
        )

    async def _infer(self, inputs: list[grpcclient.InferInput], output: str, n: int,
                     timeout: float):
        try:
            result = await self._client.infer(self.model, inputs, client_timeout=timeout)
        except InferenceServerException as exc:
            if n > 1 and exc.status() == "StatusCode.DEADLINE_EXCEEDED":
                raise BatchTimedOut(f"{n} texts took longer than {timeout:g}s") from exc
            if is_transient(exc):
                raise
            raise ModelError(f"{exc.status()}: {exc.message()}") from exc
        out = result.as_numpy(output)
        if out is None or out.shape[0] != n:
            raise ModelError(f"{output} has shape {getattr(out, 'shape', None)}, "
                             f"expected ({n}, 1)")
        response = result.get_response()
        return [row[0] for row in out], response.model_name or self.model, response.model_version

    async def close(self) -> None:
        await self._client.close()


class PosTaggerClient(TritonModelClient):
    """Tag lists of texts with the POS model."""

    def __init__(self, url: str, model: str = registry.POS.name, retry: RetryPolicy | None = None,
                 timeout: float = 60.0) -> None:
        super().__init__(url, model, retry, timeout)

    async def tag(self, texts: Sequence[str]) -> Batch[TagResult]:
        if not texts:
            return Batch([], self.model, "")
        rows, name, version = await self.infer(make_inputs(texts), contract.TAGS_JSON, len(texts))
        return Batch([parse_tags_json(r) for r in rows], name, version)


class HashtagClient(TritonModelClient):
    """Generate hashtags for lists of (text, language) with the hashtag model."""

    def __init__(self, url: str, model: str = registry.HASHTAG.name,
                 retry: RetryPolicy | None = None, timeout: float = 60.0) -> None:
        super().__init__(url, model, retry, timeout)

    async def generate(self, texts: Sequence[str], langs: Sequence[str]) -> Batch[HashtagResult]:
        if not texts:
            return Batch([], self.model, "")
        inputs = [bytes_input(contract.TEXT, texts), bytes_input(contract.LANG, langs)]
        rows, name, version = await self.infer(inputs, contract.HASHTAGS_JSON, len(texts))
        return Batch([parse_hashtags_json(r) for r in rows], name, version)


class HeadlineClient(TritonModelClient):
    """Full headline candidates for lists of (article, language)."""

    def __init__(self, url: str, model: str = registry.HEADLINE.name,
                 retry: RetryPolicy | None = None, timeout: float = 120.0) -> None:
        super().__init__(url, model, retry, timeout)

    async def generate(self, articles: Sequence[str], langs: Sequence[str],
                       timeout: float | None = None, candidates: int = 0) -> Batch[HeadlineResult]:
        """`candidates`: per article, 1 to 5 (0: the model's configured n_best)."""
        if not articles:
            return Batch([], self.model, "")
        inputs = [bytes_input(contract.ARTICLE, articles), bytes_input(contract.LANG, langs)]
        if candidates:
            inputs.append(int32_input(contract.CANDIDATES, [candidates] * len(articles)))
        rows, name, version = await self.infer(inputs, contract.HEADLINES_JSON, len(articles),
                                               timeout)
        return Batch([parse_headlines_json(r) for r in rows], name, version)


class ConstrainedHeadlineClient(TritonModelClient):
    """Headline candidates containing a phrase, for lists of (article, language, phrase,
    generation order; "" = the model's default)."""

    def __init__(self, url: str, model: str = registry.CONSTRAINED.name,
                 retry: RetryPolicy | None = None, timeout: float = 120.0) -> None:
        super().__init__(url, model, retry, timeout)

    async def generate(self, articles: Sequence[str], langs: Sequence[str],
                       phrases: Sequence[str], strategies: Sequence[str],
                       timeout: float | None = None, candidates: int = 0) -> Batch[HeadlineResult]:
        """`candidates`: per article, 1 to 5 (0: the model's configured n_best)."""
        if not articles:
            return Batch([], self.model, "")
        inputs = [bytes_input(contract.ARTICLE, articles), bytes_input(contract.LANG, langs),
                  bytes_input(contract.PHRASE, phrases), bytes_input(contract.STRATEGY, strategies)]
        if candidates:
            inputs.append(int32_input(contract.CANDIDATES, [candidates] * len(articles)))
        rows, name, version = await self.infer(inputs, contract.HEADLINES_JSON, len(articles),
                                               timeout)
        return Batch([parse_headlines_json(r) for r in rows], name, version)
