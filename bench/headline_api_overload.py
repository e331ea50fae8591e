"""Headline API under overload: many clients retrying at once, before and after the
admission queue and the retry-after hint, measured in one run.

    python -m bench headline-api-overload [--clients 20] [--seconds 30] [--words 400]
                                          [--queue-wait SECONDS]

`clients` clients each send the bench's request (a `words`-word English article, one
phrase, 3 + 3 candidates) back to back for `seconds` seconds, and retry RESOURCE_EXHAUSTED
until their request is served. Three scenarios, each on a fresh `python -m
services.headline_api` (limit 8 requests in progress, the default):
  no_queue_immediate_retry  NLP_HEADLINE_QUEUE_SIZE=0 (the server before the queue), clients
                            retry at once (what the fault harness did)
  no_queue_client_backoff   the same server, clients back off exponentially with jitter
                            (0.2 s doubling to 5 s, x0.5-1.5)
  queue_retry_after         the default queue (16 waiting, 5 s or --queue-wait), clients
                            wait the server's `retry-after-ms` with jitter
                            (services/headline_api/client.py)
Per scenario: served requests per second, RESOURCE_EXHAUSTED share of all calls, and the
latency of served requests from their first attempt (retries and waits included);
`side_by_side` repeats the first two for the three scenarios.
"""

from __future__ import annotations

import asyncio
import random
import time
from collections.abc import Callable

from bench.headline import latency, load_articles
from bench.headline_api import start_api
from services.settings import Settings

SCENARIOS: dict[str, tuple[dict[str, str], str]] = {
    "no_queue_immediate_retry": ({"NLP_HEADLINE_QUEUE_SIZE": "0"}, "immediate"),
    "no_queue_client_backoff": ({"NLP_HEADLINE_QUEUE_SIZE": "0"}, "backoff"),
    "queue_retry_after": ({}, "hint"),
}


def delay_policy(kind: str) -> Callable[[int, float | None, random.Random], float]:
    """Seconds a client waits before retry `attempt`, given the server's hint."""
    from services.headline_api.client import retry_delay

    if kind == "immediate":
        return lambda attempt, hint, rng: 0.0
    if kind == "backoff":
        return lambda attempt, hint, rng: retry_delay(attempt, None, rng)
    return retry_delay


async def overload(port: int, pairs: list[tuple[str, str]], clients: int, seconds: float,
                   policy: Callable[[int, float | None, random.Random], float]) -> dict:
    import grpc

    from services.pb import headline_api_pb2 as api
    from services.pb import headline_api_pb2_grpc as api_grpc

    counts = {"calls": 0, "ok": 0, "resource_exhausted": 0, "other_errors": 0}
    served: list[float] = []
    end = time.monotonic() + seconds

    async def client(k: int) -> None:
        rng = random.Random(k)
        async with grpc.aio.insecure_channel(f"127.0.0.1:{port}") as channel:
            stub = api_grpc.HeadlineServiceStub(channel)
            i = k
            while time.monotonic() < end:
                article, phrase = pairs[i % len(pairs)]
                request = api.SuggestRequest(article=article, language="en",
                                             required_phrases=[phrase], num_candidates=3,
                                             order=api.TOK_B)
                began, attempt = time.monotonic(), 0
                while time.monotonic() < end:
                    counts["calls"] += 1
                    try:
                        await stub.Suggest(request, timeout=30)
                    except grpc.aio.AioRpcError as err:
                        if err.code() != grpc.StatusCode.RESOURCE_EXHAUSTED:
                            counts["other_errors"] += 1
                            break
                        counts["resource_exhausted"] += 1
                        hint = dict(err.trailing_metadata() or ()).get("retry-after-ms")
                        wait = policy(attempt, int(hint) / 1000 if hint else None, rng)
                        attempt += 1
                        await asyncio.sleep(wait)
                        continue
                    if time.monotonic() <= end:
                        counts["ok"] += 1
                        served.append(time.monotonic() - began)
                    break
                i += clients

    await asyncio.gather(*(client(k) for k in range(clients)))
    return {**counts, "ok_per_s": round(counts["ok"] / seconds, 2),
            "resource_exhausted_share": round(counts["resource_exhausted"]
                                              / max(counts["calls"], 1), 4),
            "served_latency": latency(served) if served else None}


async def warm_up(port: int, pairs: list[tuple[str, str]]) -> None:
    import grpc

    from services.pb import headline_api_pb2 as api
    from services.pb import headline_api_pb2_grpc as api_grpc

    async with grpc.aio.insecure_channel(f"127.0.0.1:{port}") as channel:
        stub = api_grpc.HeadlineServiceStub(channel)
        for article, phrase in pairs:
            await stub.Suggest(api.SuggestRequest(article=article, required_phrases=[phrase]),
                               timeout=60)


def run(clients: int, seconds: float, words: int, queue_wait: float | None = None,
        n_articles: int = 8) -> dict:
    from deploy.stack import servers

    settings = Settings.from_env()
    pairs = load_articles(n_articles, words)
    for srv in servers(["triton"], settings):
        srv.start(timeout=300)
    result: dict = {"benchmark": "headline-api-overload", "clients": clients,
                    "seconds": seconds, "words": words, "max_concurrent": 8,
                    "queue_wait": queue_wait or "default"}
    wait = {"NLP_HEADLINE_QUEUE_WAIT": str(queue_wait)} if queue_wait else {}
    log = settings.state_dir / "logs" / "bench-headline-api-overload.log"
    log.parent.mkdir(parents=True, exist_ok=True)
    for name, (env, kind) in SCENARIOS.items():
        proc, port = start_api(settings, log,
                               {"NLP_HEADLINE_MAX_CONCURRENT": "8", **wait, **env})
        try:
            asyncio.run(warm_up(port, pairs))
            result[name] = asyncio.run(overload(port, pairs, clients, seconds,
                                                delay_policy(kind)))
        finally:
            proc.terminate()
            proc.wait(20)
    result["side_by_side"] = {
        key: {name: result[name][key] for name in SCENARIOS}
        for key in ("ok_per_s", "resource_exhausted_share")}
    return result
