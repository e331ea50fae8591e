"""The HeadlineService servicer (grpc.aio): validation at the edge, Triton in parallel.

Every call goes through `Call` (a context manager) which checks the API key, takes a
concurrency slot or answers RESOURCE_EXHAUSTED, assigns the request id (the client's
`x-request-id` metadata, else a new one), maps failures to statuses, logs one JSON line per
request and records Prometheus metrics. The servicer itself only plans the model calls
(validation.py), runs them concurrently within the client's deadline, and turns results
into suggestions.
"""

from __future__ import annotations

import asyncio
import hmac
import json
import logging
import time
import uuid
from collections.abc import AsyncIterator, Awaitable
from dataclasses import dataclass

import grpc
from prometheus_client import Counter, Histogram

from services.config import RetryPolicy
from services.headline_api.config import ApiConfig
from services.headline_api.validation import Invalid, Plan, plan
from services.pb import headline_api_pb2 as api
from services.pb import headline_api_pb2_grpc as api_grpc
from services.pb import messages_pb2 as pb
from services.retry import RetryGaveUp
from services.triton import (
    ConstrainedHeadlineClient,
    HeadlineBatch,
    HeadlineClient,
    ModelError,
    is_transient,
)

log = logging.getLogger("headline_api")

REQUESTS = Counter("headline_api_requests_total", "Requests by method and status code",
                   ["method", "code"])
LATENCY = Histogram("headline_api_request_seconds", "Request latency by method", ["method"],
                    buckets=(0.05, 0.1, 0.2, 0.3, 0.5, 0.75, 1, 1.5, 2, 3, 5, 10, 30))
ERRORS = Counter("headline_api_errors_total", "Failed requests by status code", ["code"])

#: A Triton outage is reported as UNAVAILABLE after about this long, not waited out: an
#: editor's tool should show an error, not hang (the stream worker, by contrast, waits).
OUTAGE_PATIENCE = RetryPolicy(initial=0.1, factor=2.0, max_delay=0.5, max_wait=1.0)


class Refused(Exception):
    """A model refused the input (its status and message); INVALID_ARGUMENT."""


@dataclass
class Group:
    """The candidates of one model call."""

    kind: int
    phrase: str
    batch: HeadlineBatch


class Call:
    """Auth, admission, request id, status mapping, logs and metrics of one request."""

    def __init__(self, servicer: HeadlineApi, method: str, context: grpc.aio.ServicerContext):
        self.servicer, self.method, self.context = servicer, method, context
        metadata = dict(context.invocation_metadata() or ())
        self.metadata = metadata
        self.request_id = metadata.get("x-request-id") or uuid.uuid4().hex[:16]
        self.code = grpc.StatusCode.OK
        self.detail = ""
        self.admitted = False

    async def __aenter__(self) -> Call:
        self.started = time.monotonic()
        self.context.set_trailing_metadata((("x-request-id", self.request_id),))
        key = self.servicer.cfg.api_key
        if key and not hmac.compare_digest(self.metadata.get("x-api-key", ""), key):
            await self.fail(grpc.StatusCode.UNAUTHENTICATED, "missing or wrong x-api-key metadata")
        if self.servicer.active >= self.servicer.cfg.max_concurrent:
            await self.fail(grpc.StatusCode.RESOURCE_EXHAUSTED,
                            f"{self.servicer.active} requests in progress, the limit is "
                            f"{self.servicer.cfg.max_concurrent}; retry with backoff")
        self.servicer.active += 1
        self.admitted = True
        return self

    async def fail(self, code: grpc.StatusCode, detail: str) -> None:
        self.code, self.detail = code, detail
        self._record()
        await self.context.abort(code, detail)

    async def __aexit__(self, exc_type, exc, tb) -> bool:
        if self.admitted:
            self.servicer.active -= 1
            self.admitted = False
        if exc_type is None:
            self._record()
            return False
        if isinstance(exc, asyncio.CancelledError):  # client went away or deadline passed
            expired = self.context.time_remaining() is not None and \
                self.context.time_remaining() <= 0
            self.code = grpc.StatusCode.DEADLINE_EXCEEDED if expired else grpc.StatusCode.CANCELLED
            self.detail = "the client cancelled or its deadline passed; work stopped"
            self._record()
            return False
        if self.code != grpc.StatusCode.OK:  # already aborted with a status
            return False
        code, detail = status_of(exc)
        if code is None:
            log.exception("request %s failed", self.request_id)
            code, detail = grpc.StatusCode.INTERNAL, f"internal error: {type(exc).__name__}"
        await self.fail(code, detail)
        return False

    def _record(self) -> None:
        seconds = time.monotonic() - self.started
        name = self.code.name
        REQUESTS.labels(self.method, name).inc()
        LATENCY.labels(self.method).observe(seconds)
        if self.code != grpc.StatusCode.OK:
            ERRORS.labels(name).inc()
        log.info(json.dumps({"request_id": self.request_id, "method": self.method,
                             "code": name, "ms": round(1000 * seconds, 1),
                             "detail": self.detail or None}))


def status_of(exc: BaseException) -> tuple[grpc.StatusCode | None, str]:
    """The status a failure maps to; (None, "") for unexpected errors."""
    if isinstance(exc, Invalid | Refused):
        return grpc.StatusCode.INVALID_ARGUMENT, str(exc)
    if isinstance(exc, TimeoutError):
        return grpc.StatusCode.DEADLINE_EXCEEDED, "the deadline passed before the candidates " \
            "were ready"
    if isinstance(exc, RetryGaveUp) or is_transient(exc):
        return grpc.StatusCode.UNAVAILABLE, f"the model server is unavailable: {exc}"
    if isinstance(exc, ModelError):
        return grpc.StatusCode.INTERNAL, f"the model server failed: {exc}"
    return None, ""


class HeadlineApi(api_grpc.HeadlineServiceServicer):
    def __init__(self, cfg: ApiConfig):
        self.cfg = cfg
        self.active = 0
        self.full: HeadlineClient | None = None
        self.constrained: ConstrainedHeadlineClient | None = None

    async def start(self) -> None:
        """Create the Triton clients (inside the running event loop)."""
        url = self.cfg.servers.triton_grpc_url
        self.full = HeadlineClient(url, self.cfg.headline_model, OUTAGE_PATIENCE)
        self.constrained = ConstrainedHeadlineClient(url, self.cfg.constrained_model,
                                                     OUTAGE_PATIENCE)

    async def stop(self) -> None:
        for client in (self.full, self.constrained):
            if client is not None:
                await client.close()

    def _calls(self, p: Plan, timeout: float) -> list[Awaitable[Group]]:
        async def full() -> Group:
            batch = await self.full.generate([p.article], [p.language], timeout, p.n)
            return Group(api.FULL, "", batch)

        async def constrained(phrase: str) -> Group:
            batch = await self.constrained.generate([p.article], [p.language], [phrase],
                                                    [p.order], timeout, p.n)
            return Group(api.CONSTRAINED, phrase, batch)

        return ([full()] if p.full else []) + [constrained(ph) for ph in p.phrases]

    def _timeout(self, context: grpc.aio.ServicerContext) -> float:
        remaining = context.time_remaining()
        return self.cfg.default_timeout if remaining is None else max(remaining, 0.001)

    @staticmethod
    def suggestions(group: Group, p: Plan) -> list[api.HeadlineSuggestion]:
        (result,) = group.batch.results
        if result.status != "ok":
            where = f" for phrase {group.phrase!r}" if group.phrase else ""
            raise Refused(f"{result.status}{where}: {result.message}")
        model = pb.ModelRef(name=group.batch.model_name, version=group.batch.model_version)
        out = []
        for text, score in result.candidates[: p.n]:
            if p.max_length and len(text) > p.max_length:
                continue
            out.append(api.HeadlineSuggestion(text=text, score=score, kind=group.kind,
                                              phrase=group.phrase, model=model,
                                              order=result.strategy if group.phrase else ""))
        return out

    async def Suggest(self, request: api.SuggestRequest,
                      context: grpc.aio.ServicerContext) -> api.SuggestResponse:
        async with Call(self, "Suggest", context) as call:
            p = plan(request)
            timeout = self._timeout(context)
            groups = await asyncio.wait_for(asyncio.gather(*self._calls(p, timeout)), timeout)
            response = api.SuggestResponse(language=p.language, request_id=call.request_id)
            for group in groups:
                response.candidates.extend(self.suggestions(group, p))
                response.truncated |= group.batch.results[0].truncated
            return response

    async def SuggestStream(self, request: api.SuggestRequest,
                            context: grpc.aio.ServicerContext
                            ) -> AsyncIterator[api.HeadlineSuggestion]:
        async with Call(self, "SuggestStream", context):
            p = plan(request)
            timeout = self._timeout(context)
            deadline = time.monotonic() + timeout
            tasks = [asyncio.ensure_future(c) for c in self._calls(p, timeout)]
            try:
                for next_done in asyncio.as_completed(tasks):
                    group = await asyncio.wait_for(next_done, max(deadline - time.monotonic(),
                                                                  0.001))
                    for suggestion in self.suggestions(group, p):
                        yield suggestion
            finally:
                for task in tasks:
                    task.cancel()
