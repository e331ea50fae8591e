"""Admission, retry and settings of the headline API, without a server: the queue in front
of the concurrency limit, the retry-after hint, the client's backoff, refused settings."""

from __future__ import annotations

import asyncio
import random

import grpc
import pytest

from services.headline_api.client import retry_delay, with_retries
from services.headline_api.config import ApiConfig, ConfigError
from services.headline_api.server import RETRY_AFTER_MS, Admission


def run(coro):
    return asyncio.run(coro)


def test_requests_beyond_the_limit_wait_in_the_queue_and_get_the_freed_slot_in_order():
    async def scenario() -> list[str]:
        gate = Admission(limit=1, queue_size=2, queue_wait=5)
        assert await gate.acquire(5)
        order: list[str] = []

        async def waiter(name: str) -> None:
            assert await gate.acquire(5)
            order.append(name)
            gate.release(0.1)

        tasks = [asyncio.create_task(waiter(n)) for n in ("first", "second")]
        await asyncio.sleep(0.01)
        assert (gate.active, len(gate.waiters)) == (1, 2)
        gate.release(0.1)
        await asyncio.gather(*tasks)
        assert (gate.active, len(gate.waiters)) == (0, 0)
        return order

    assert run(scenario()) == ["first", "second"]


def test_a_full_queue_refuses_at_once_and_a_queued_request_gives_up_after_queue_wait():
    async def scenario() -> None:
        gate = Admission(limit=1, queue_size=1, queue_wait=0.2)
        assert await gate.acquire(5)
        waiting = asyncio.create_task(gate.acquire(5))
        await asyncio.sleep(0.01)
        began = asyncio.get_running_loop().time()
        assert not await gate.acquire(5)  # queue full: no wait
        assert asyncio.get_running_loop().time() - began < 0.05
        assert not await waiting  # waited queue_wait, then refused
        assert (gate.active, len(gate.waiters)) == (1, 0)

    run(scenario())


def test_a_queued_request_waits_no_longer_than_its_own_deadline():
    async def scenario() -> float:
        gate = Admission(limit=1, queue_size=4, queue_wait=10)
        await gate.acquire(10)
        began = asyncio.get_running_loop().time()
        assert not await gate.acquire(0.1)
        return asyncio.get_running_loop().time() - began

    assert run(scenario()) < 1


def test_a_cancelled_waiter_leaves_the_queue_and_no_slot_is_lost():
    async def scenario() -> None:
        gate = Admission(limit=1, queue_size=4, queue_wait=10)
        await gate.acquire(10)
        task = asyncio.create_task(gate.acquire(10))
        await asyncio.sleep(0.01)
        task.cancel()
        with pytest.raises(asyncio.CancelledError):
            await task
        gate.release()
        assert (gate.active, len(gate.waiters)) == (0, 0)
        assert await gate.acquire(0)

    run(scenario())


def test_the_retry_hint_grows_with_the_queue_and_stays_within_bounds():
    gate = Admission(limit=2, queue_size=10, queue_wait=1)
    gate.mean_seconds = 1.0
    assert gate.retry_after_ms() == 500  # 1 s x (0 waiting + 1) / 2 slots
    gate.waiters.extend([asyncio.Future.__new__(asyncio.Future)] * 3)
    assert gate.retry_after_ms() == 2000
    gate.mean_seconds = 100
    assert gate.retry_after_ms() == RETRY_AFTER_MS[1]
    gate.mean_seconds = 0
    assert gate.retry_after_ms() == RETRY_AFTER_MS[0]


class Refusal(grpc.RpcError):
    """What a grpc stub raises: a status code and trailing metadata."""

    def __init__(self, code: grpc.StatusCode, trailer: tuple = ()):
        self._code, self._trailer = code, trailer

    def code(self) -> grpc.StatusCode:
        return self._code

    def trailing_metadata(self) -> tuple:
        return self._trailer


def test_the_client_waits_the_servers_hint_with_jitter_else_backs_off_exponentially():
    rng = random.Random(1)
    hinted = [retry_delay(0, 0.8, rng) for _ in range(200)]
    assert 0.4 <= min(hinted) < 0.5 and 1.1 < max(hinted) <= 1.2  # 0.5-1.5 x the hint
    assert len({round(d, 3) for d in hinted}) > 150  # spread, not in lockstep
    bases = [retry_delay(k, None, random.Random(0)) / random.Random(0).uniform(0.5, 1.5)
             for k in range(8)]
    assert [round(b, 2) for b in bases] == [0.2, 0.4, 0.8, 1.6, 3.2, 5.0, 5.0, 5.0]


def test_the_client_retries_busy_and_unavailable_but_not_other_errors():
    slept: list[float] = []
    answers = iter([Refusal(grpc.StatusCode.RESOURCE_EXHAUSTED, (("retry-after-ms", "300"),)),
                    Refusal(grpc.StatusCode.UNAVAILABLE), "ok"])

    def call(_seconds: float) -> str:
        answer = next(answers)
        if isinstance(answer, Exception):
            raise answer
        return answer

    assert with_retries(call, 10, 5, random.Random(0), slept.append, lambda m: None) == "ok"
    assert 0.15 <= slept[0] <= 0.45  # the hint, 300 ms
    assert 0.2 <= slept[1] <= 0.6  # no hint: the second step of the backoff, 0.4 s
    with pytest.raises(grpc.RpcError):
        with_retries(lambda s: (_ for _ in ()).throw(Refusal(grpc.StatusCode.INVALID_ARGUMENT)),
                     10, 5, sleep=slept.append, say=lambda m: None)
    assert len(slept) == 2


def test_the_client_gives_up_rather_than_sleep_past_its_deadline():
    def busy(_seconds: float) -> str:
        raise Refusal(grpc.StatusCode.RESOURCE_EXHAUSTED, (("retry-after-ms", "5000"),))

    with pytest.raises(grpc.RpcError):
        with_retries(busy, 1.0, 5, sleep=lambda s: pytest.fail("slept"), say=lambda m: None)


@pytest.mark.parametrize(
    ("env", "fragment"),
    [
        ({"NLP_HEADLINE_API_KEY": "k"}, "TLS is off"),
        ({"NLP_HEADLINE_TLS_CERT": "c.pem"}, "both"),
        ({"NLP_HEADLINE_TLS_CLIENT_CA": "ca.pem"}, "needs NLP_HEADLINE_TLS_CERT"),
        ({"NLP_HEADLINE_TIMEOUT": "90"}, "at most NLP_HEADLINE_MAX_TIMEOUT"),
    ],
)
def test_unsafe_or_contradictory_settings_refuse_to_start(env, fragment):
    with pytest.raises(ConfigError, match=fragment):
        ApiConfig.from_env(env)


def test_an_api_key_over_plaintext_needs_the_explicit_override():
    cfg = ApiConfig.from_env({"NLP_HEADLINE_API_KEY": "k",
                              "NLP_HEADLINE_ALLOW_INSECURE_KEY": "1"})
    assert cfg.api_key == "k" and not cfg.tls_cert
    tls = ApiConfig.from_env({"NLP_HEADLINE_API_KEY": "k", "NLP_HEADLINE_TLS_CERT": "c",
                              "NLP_HEADLINE_TLS_KEY": "k"})
    assert tls.api_key == "k"


def test_queue_and_deadline_settings_have_documented_defaults():
    cfg = ApiConfig.from_env({})
    assert (cfg.max_concurrent, cfg.queue_size, cfg.queue_wait, cfg.default_timeout,
            cfg.max_timeout) == (8, 16, 5.0, 30.0, 60.0)
