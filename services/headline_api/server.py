"""The HeadlineService servicer (grpc.aio): validation at the edge, Triton in parallel.

Every call goes through `Call` (a context manager) which checks the API key, takes a
concurrency slot (waiting in a short queue if all are taken) or answers RESOURCE_EXHAUSTED
with a retry-after hint, assigns the request id (the client's `x-request-id` metadata if it
is a plain token, else a new one), maps failures to statuses whose messages never carry
server internals, logs one JSON line per request and records Prometheus metrics. The
servicer itself only plans the model calls (validation.py), runs them concurrently within
the client's deadline (capped), and turns results into suggestions.
"""

from __future__ import annotations

import asyncio
import hmac
import json
import logging
import re
import time
import uuid
from collections import deque
from collections.abc import AsyncIterator, Awaitable

import grpc
from prometheus_client import Counter, Gauge, Histogram

from services.config import RetryPolicy
from services.headline_api.config import ApiConfig
from services.headline_api.validation import (
    MAX_HEADLINE_CHARS,
    Invalid,
    Plan,
    Unsupported,
    plan,
)
from services.headlines import CONSTRAINED, FULL, Answer, HeadlineModels, Job
from services.pb import headline_api_pb2 as api
from services.pb import headline_api_pb2_grpc as api_grpc
from services.pb import messages_pb2 as pb
from services.retry import RetryGaveUp
from services.triton import is_transient

log = logging.getLogger("headline_api")

REQUESTS = Counter("headline_api_requests_total", "Requests by method and status code",
                   ["method", "code"])
LATENCY = Histogram("headline_api_request_seconds", "Request latency by method", ["method"],
                    buckets=(0.05, 0.1, 0.2, 0.3, 0.5, 0.75, 1, 1.5, 2, 3, 5, 10, 30))
ERRORS = Counter("headline_api_errors_total", "Failed requests by status code", ["code"])
IN_PROGRESS = Gauge("headline_api_in_progress", "Requests holding a concurrency slot")
WAITING = Gauge("headline_api_waiting", "Requests queued for a concurrency slot")

#: A Triton outage is reported as UNAVAILABLE after about this long, not waited out: an
#: editor's tool should show an error, not hang (the stream worker, by contrast, waits).
OUTAGE_PATIENCE = RetryPolicy(initial=0.1, factor=2.0, max_delay=0.5, max_wait=1.0)

#: Client request ids are echoed in logs and trailers: only plain tokens are accepted.
REQUEST_ID = re.compile(r"[A-Za-z0-9._:-]{1,64}")
RETRY_AFTER_MS = (100, 10_000)  # bounds of the retry-after hint
MAX_DETAIL_CHARS = 300
#: Model refusals that are about the deployment (which languages and vocabularies the
#: served models have), not the request's form: FAILED_PRECONDITION, as the proto says.
PRECONDITION_STATUSES = frozenset({"unsupported_language", "unsupported_phrase"})


class Refused(Exception):
    """A model refused the input: `status` is the model's (e.g. "phrase_too_long")."""

    def __init__(self, status: str, message: str):
        super().__init__(message)
        self.status = status

    @property
    def code(self) -> grpc.StatusCode:
        if self.status in PRECONDITION_STATUSES:
            return grpc.StatusCode.FAILED_PRECONDITION
        return grpc.StatusCode.INVALID_ARGUMENT


KINDS = {FULL: api.FULL, CONSTRAINED: api.CONSTRAINED}


class Admission:
    """At most `limit` requests in progress; up to `queue_size` more wait, first come first
    served, at most `queue_wait` seconds each. A short queue turns a burst into latency
    instead of refusals: without it, clients retrying at once burn the CPU on rejections
    (measured in the README)."""

    def __init__(self, limit: int, queue_size: int, queue_wait: float):
        self.limit, self.queue_size, self.queue_wait = limit, queue_size, queue_wait
        self.active = 0
        self.waiters: deque[asyncio.Future[None]] = deque()
        self.mean_seconds = 0.5  # moving average of request durations, for the hint

    async def acquire(self, patience: float) -> bool:
        """Take a slot, waiting at most min(queue_wait, patience) s; False = refused."""
        if self.active < self.limit and not self.waiters:
            self._set_active(self.active + 1)
            return True
        wait = min(self.queue_wait, patience)
        if len(self.waiters) >= self.queue_size or wait <= 0:
            return False
        slot: asyncio.Future[None] = asyncio.get_running_loop().create_future()
        self.waiters.append(slot)
        WAITING.set(len(self.waiters))
        try:
            await asyncio.wait_for(asyncio.shield(slot), wait)
            return True
        except (TimeoutError, asyncio.CancelledError) as exc:
            if slot.done():  # a slot was handed over just as the wait ended: pass it on
                self.release()
            else:
                slot.cancel()
                self.waiters.remove(slot)
            if isinstance(exc, asyncio.CancelledError):
                raise
            return False
        finally:
            WAITING.set(len(self.waiters))

    def release(self, seconds: float | None = None) -> None:
        """Free a slot, handing it straight to the longest-waiting request if any."""
        if seconds is not None:
            self.mean_seconds += 0.2 * (seconds - self.mean_seconds)
        while self.waiters:
            slot = self.waiters.popleft()
            if not slot.done():
                slot.set_result(None)
                return
        self._set_active(self.active - 1)

    def retry_after_ms(self) -> int:
        """About when a slot should be free for a new request: the queue drained at the
        recent pace (mean request time x (waiting + 1) / limit), within RETRY_AFTER_MS."""
        estimate = 1000 * self.mean_seconds * (len(self.waiters) + 1) / self.limit
        return int(min(max(estimate, RETRY_AFTER_MS[0]), RETRY_AFTER_MS[1]))

    def _set_active(self, n: int) -> None:
        self.active = n
        IN_PROGRESS.set(n)


def request_id_of(metadata: dict[str, str]) -> str:
    """The client's `x-request-id` if it is a plain token, else a new one."""
    given = metadata.get("x-request-id", "")
    return given if REQUEST_ID.fullmatch(given) else uuid.uuid4().hex[:16]


def public(detail: str) -> str:
    """A status message as clients may see it: one line, bounded."""
    line = detail.splitlines()[0] if detail else ""
    return line if len(line) <= MAX_DETAIL_CHARS else line[: MAX_DETAIL_CHARS - 3] + "..."


class Call:
    """Auth, admission, request id, status mapping, logs and metrics of one request."""

    def __init__(self, servicer: HeadlineApi, method: str, context: grpc.aio.ServicerContext):
        self.servicer, self.method, self.context = servicer, method, context
        metadata = dict(context.invocation_metadata() or ())
        self.metadata = metadata
        self.request_id = request_id_of(metadata)
        self.code = grpc.StatusCode.OK
        self.detail = ""
        self.admitted = False
        self.clamped = False  # the client's deadline was cut to the server's cap

    async def __aenter__(self) -> Call:
        self.started = time.monotonic()
        self.context.set_trailing_metadata((("x-request-id", self.request_id),))
        key = self.servicer.cfg.api_key
        if key and not hmac.compare_digest(self.metadata.get("x-api-key", "").encode(),
                                           key.encode()):
            await self.fail(grpc.StatusCode.UNAUTHENTICATED, "missing or wrong x-api-key metadata")
        admission = self.servicer.admission
        remaining = self.context.time_remaining()
        try:
            admitted = await admission.acquire(admission.queue_wait if remaining is None
                                               else remaining)
        except asyncio.CancelledError:  # the client left, or its deadline passed, in line
            self.code, self.detail = grpc.StatusCode.CANCELLED, "gave up while queued"
            self._record()
            raise
        if not admitted:
            await self.busy(admission)
        self.admitted = True
        return self

    async def busy(self, admission: Admission) -> None:
        """RESOURCE_EXHAUSTED with when to retry, in the trailer and the message."""
        ms = admission.retry_after_ms()
        self.context.set_trailing_metadata((("x-request-id", self.request_id),
                                            ("retry-after-ms", str(ms))))
        await self.fail(grpc.StatusCode.RESOURCE_EXHAUSTED,
                        f"server busy: {admission.active} requests in progress and "
                        f"{len(admission.waiters)} waiting (limits {admission.limit} and "
                        f"{admission.queue_size}); retry after {ms} ms")

    async def fail(self, code: grpc.StatusCode, detail: str) -> None:
        self.code, self.detail = code, public(detail)
        self._record()
        await self.context.abort(code, self.detail)

    async def __aexit__(self, exc_type, exc, tb) -> bool:
        if self.admitted:
            self.servicer.admission.release(time.monotonic() - self.started)
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
        if code == grpc.StatusCode.INTERNAL:
            # the details stay in the server's log; the client gets the id to quote
            log.error("request %s failed with INTERNAL", self.request_id, exc_info=exc)
            detail = f"{detail} (request id {self.request_id})"
        elif code == grpc.StatusCode.UNAVAILABLE:  # an outage: its cause, no traceback
            log.warning("request %s: model server unavailable: %s", self.request_id, exc)
            detail = f"{detail} (request id {self.request_id})"
        elif code == grpc.StatusCode.DEADLINE_EXCEEDED and self.clamped:
            detail = (f"the server's limit of {self.servicer.cfg.max_timeout:g} s per request "
                      f"passed before the candidates were ready")
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


def status_of(exc: BaseException) -> tuple[grpc.StatusCode, str]:
    """The status of a failure and a message safe to show the client: only messages this
    service wrote (validation, model refusal reasons) pass; a model server's error text can
    hold stack traces and file paths, so it goes to the log only."""
    if isinstance(exc, Invalid):
        return grpc.StatusCode.INVALID_ARGUMENT, str(exc)
    if isinstance(exc, Unsupported):
        return grpc.StatusCode.FAILED_PRECONDITION, str(exc)
    if isinstance(exc, Refused):
        return exc.code, str(exc)
    if isinstance(exc, TimeoutError):
        return grpc.StatusCode.DEADLINE_EXCEEDED, "the deadline passed before the candidates " \
            "were ready"
    if isinstance(exc, RetryGaveUp) or is_transient(exc):
        return grpc.StatusCode.UNAVAILABLE, "the model server is unavailable; retry later"
    return grpc.StatusCode.INTERNAL, "internal error"


class HeadlineApi(api_grpc.HeadlineServiceServicer):
    def __init__(self, cfg: ApiConfig):
        self.cfg = cfg
        self.admission = Admission(cfg.max_concurrent, cfg.queue_size, cfg.queue_wait)
        self.models: HeadlineModels | None = None

    async def start(self) -> None:
        """Create the Triton clients (inside the running event loop)."""
        self.models = HeadlineModels.connect(
            self.cfg.servers.triton_grpc_url, self.cfg.headline_model,
            self.cfg.constrained_model, OUTAGE_PATIENCE)

    async def stop(self) -> None:
        if self.models is not None:
            await self.models.close()

    def _calls(self, p: Plan, timeout: float) -> list[Awaitable[list[Answer]]]:
        assert self.models is not None, "start() first"
        return self.models.calls([Job(p.article, p.language, p.phrases)], full=p.full,
                                 order=p.order, timeout=timeout, candidates=p.n)

    def _timeout(self, call: Call) -> float:
        """Seconds left for the model calls: the client's deadline (default_timeout if it set
        none), cut to max_timeout so no request holds a slot longer than that."""
        remaining = call.context.time_remaining()
        if remaining is None:
            return self.cfg.default_timeout
        call.clamped = remaining > self.cfg.max_timeout
        return max(min(remaining, self.cfg.max_timeout), 0.001)

    @staticmethod
    def suggestions(answer: Answer, p: Plan) -> list[api.HeadlineSuggestion]:
        result = answer.result
        if result.status != "ok":
            where = f" for phrase {answer.phrase!r}" if answer.phrase else ""
            raise Refused(result.status, f"{result.status}{where}: {result.message}")
        model = pb.ModelRef(name=answer.model, version=answer.version)
        kind = KINDS[answer.kind]
        out = []
        for text, score in result.candidates[: p.n]:
            if len(text) > (p.max_length or MAX_HEADLINE_CHARS):
                continue
            out.append(api.HeadlineSuggestion(text=text, score=score, kind=kind,
                                              phrase=answer.phrase, model=model,
                                              order=result.strategy if answer.phrase else ""))
        return out

    async def Suggest(self, request: api.SuggestRequest,
                      context: grpc.aio.ServicerContext) -> api.SuggestResponse:
        async with Call(self, "Suggest", context) as call:
            p = plan(request)
            timeout = self._timeout(call)
            calls = await asyncio.wait_for(asyncio.gather(*self._calls(p, timeout)), timeout)
            response = api.SuggestResponse(language=p.language, request_id=call.request_id)
            for answer in (a for answers in calls for a in answers):
                response.candidates.extend(self.suggestions(answer, p))
                response.truncated |= answer.result.truncated
            return response

    async def SuggestStream(self, request: api.SuggestRequest,
                            context: grpc.aio.ServicerContext
                            ) -> AsyncIterator[api.HeadlineSuggestion]:
        async with Call(self, "SuggestStream", context) as call:
            p = plan(request)
            timeout = self._timeout(call)
            deadline = time.monotonic() + timeout
            tasks = [asyncio.ensure_future(c) for c in self._calls(p, timeout)]
            try:
                for next_done in asyncio.as_completed(tasks):
                    answers = await asyncio.wait_for(next_done, max(deadline - time.monotonic(),
                                                                    0.001))
                    for answer in answers:
                        for suggestion in self.suggestions(answer, p):
                            yield suggestion
            finally:
                for task in tasks:
                    task.cancel()
