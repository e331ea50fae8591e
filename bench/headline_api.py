"""Headline API over gRPC: latency and throughput at 1, 4 and 16 concurrent clients, next to
the same models called in process, measured in one run.

    python -m bench headline-api [--requests 32] [--words 400] [--articles 8]

Each request is one `Suggest` for a `words`-word English article with one required phrase:
3 full and 3 constrained (tok-b) candidates, the shipped models' serving beams (4 and 3).
(a) in_process  the two generators in this process, full then constrained, one request at a
                time (latency p50/p95/p99), and 16 requests as one batch per generator
                (requests/s: the ceiling batching can reach on this machine)
(b) grpc        `python -m services.headline_api` against Triton on loopback (the server asks
                both Triton models in parallel); `c` clients each send their next request as
                soon as the last one returned, max(`requests`, 8c) per level, c = 1, 4, 16
Ratios: gRPC p50/p99 at c=1 over in-process p50/p99, and throughput at c=16 over c=1.
Articles cycle through `articles` English test articles lengthened or cut to `words` words.
"""

from __future__ import annotations

import asyncio
import os
import subprocess
import sys
import time
from pathlib import Path

from bench.headline import MODELS, latency, load_articles
from bench.pos import _cores, _reload_model
from deploy.testing import free_ports
from services.settings import REPO_ROOT

LEVELS = (1, 4, 16)
CANDIDATES = 3
BATCH = 16


def bench_in_process(pairs: list[tuple[str, str]], requests: int) -> dict:
    import torch

    from nlp_models.headline.serving import ConstrainedHeadlineService, HeadlineService
    from training.headline.evaluate import CONSTRAINED_MODEL, FULL_MODEL
    from training.repository import serving_dir

    torch.set_num_threads(1)  # as each Triton model instance (torch_threads in its config)
    full = HeadlineService(serving_dir(FULL_MODEL), beam=4, n_best=CANDIDATES)
    constrained = ConstrainedHeadlineService(serving_dir(CONSTRAINED_MODEL), beam=3,
                                             n_best=CANDIDATES)

    def suggest(batch: list[tuple[str, str]]) -> None:
        articles, n = [a for a, _ in batch], len(batch)
        full.generate(articles, ["en"] * n)
        constrained.generate(articles, ["en"] * n, [p for _, p in batch], ["tok-b"] * n)

    suggest(pairs[:1])  # warm-up
    times = []
    for i in range(requests):
        began = time.perf_counter()
        suggest([pairs[i % len(pairs)]])
        times.append(time.perf_counter() - began)
    batch = [pairs[i % len(pairs)] for i in range(BATCH)]
    began = time.perf_counter()
    suggest(batch)
    rate = BATCH / (time.perf_counter() - began)
    return {**latency(times), f"batched_{BATCH}_requests_per_s": round(rate, 2)}


def start_api(settings, log: Path, extra: dict[str, str] | None = None
              ) -> tuple[subprocess.Popen, int]:
    """The API server as a user runs it, allowed the highest concurrency measured (or with
    the `extra` settings)."""
    port = free_ports(1)[0]
    env = {k: v for k, v in os.environ.items() if not k.startswith("NLP_HEADLINE_")}
    env.update(NLP_TRITON_GRPC_PORT=str(settings.triton_grpc_port), NLP_HEADLINE_METRICS_PORT="0",
               NLP_HEADLINE_MAX_CONCURRENT=str(max(LEVELS)))
    env.update(extra or {})
    proc = subprocess.Popen([sys.executable, "-m", "services.headline_api", "--port", str(port)],
                            cwd=REPO_ROOT, env=env, stdout=log.open("wb"),
                            stderr=subprocess.STDOUT)
    deadline = time.monotonic() + 120
    while '"event": "started"' not in log.read_text(errors="replace"):
        if proc.poll() is not None or time.monotonic() > deadline:
            proc.kill()
            raise SystemExit(f"headline API did not start; its log:\n{log.read_text()[-3000:]}")
        time.sleep(0.2)
    return proc, port


async def bench_grpc(pairs: list[tuple[str, str]], port: int, requests: int) -> dict:
    import grpc

    from services.pb import headline_api_pb2 as api
    from services.pb import headline_api_pb2_grpc as api_grpc

    def request(i: int):
        article, phrase = pairs[i % len(pairs)]
        return api.SuggestRequest(article=article, language="en", required_phrases=[phrase],
                                  num_candidates=CANDIDATES, order=api.TOK_B)

    async def level(stub, c: int) -> dict:
        """`c` clients sending back to back until max(requests, 8c) requests are done (each
        client sends several, so start-up and the last stragglers weigh little)."""
        queue = iter(range(max(requests, 8 * c)))
        times: list[float] = []
        errors: dict[str, int] = {}

        async def client() -> None:
            for i in queue:
                began = time.perf_counter()
                try:
                    await stub.Suggest(request(i), timeout=60)
                    times.append(time.perf_counter() - began)
                except grpc.aio.AioRpcError as e:
                    errors[e.code().name] = errors.get(e.code().name, 0) + 1

        began = time.perf_counter()
        await asyncio.gather(*(client() for _ in range(c)))
        rate = len(times) / (time.perf_counter() - began)
        return {**latency(times), "requests_per_s": round(rate, 2), "errors": errors}

    async with grpc.aio.insecure_channel(f"127.0.0.1:{port}") as channel:
        stub = api_grpc.HeadlineServiceStub(channel)
        for i in range(len(pairs)):  # warm-up: every article once
            await stub.Suggest(request(i), timeout=60)
        return {f"concurrency_{c}": await level(stub, c) for c in LEVELS}


def run(n_requests: int, words: int, n_articles: int) -> dict:
    from deploy.stack import servers
    from services.settings import Settings
    from training.headline.evaluate import CONSTRAINED_MODEL, FULL_MODEL
    from training.repository import serving_dir

    settings = Settings.from_env()
    pairs = load_articles(n_articles, words)
    shipped = zip(MODELS, (FULL_MODEL, CONSTRAINED_MODEL), strict=True)
    result: dict = {"benchmark": "headline-api", "machine_cores": _cores(), "words": words,
                    "articles": n_articles, "candidates_per_generator": CANDIDATES,
                    "models": {m: str(serving_dir(d).relative_to(REPO_ROOT))
                               for m, d in shipped},
                    "in_process": bench_in_process(pairs, n_requests)}
    for srv in servers(["triton"], settings):
        srv.start(timeout=300)
    for model in MODELS:
        _reload_model(settings, model)
    log = settings.state_dir / "logs" / "bench-headline-api.log"
    log.parent.mkdir(parents=True, exist_ok=True)
    proc, port = start_api(settings, log)
    try:
        result["grpc"] = asyncio.run(bench_grpc(pairs, port, n_requests))
    finally:
        proc.terminate()
        proc.wait(20)
    one, many = result["grpc"]["concurrency_1"], result["grpc"][f"concurrency_{max(LEVELS)}"]
    local = result["in_process"]
    result["ratios"] = {
        "grpc_c1_p50_vs_in_process_p50": round(one["p50_ms"] / local["p50_ms"], 3),
        "grpc_c1_p99_vs_in_process_p99": round(one["p99_ms"] / local["p99_ms"], 3),
        f"grpc_c{max(LEVELS)}_vs_c1_requests_per_s": round(
            many["requests_per_s"] / one["requests_per_s"], 3),
        f"grpc_c{max(LEVELS)}_vs_in_process_batched": round(
            many["requests_per_s"] / local[f"batched_{BATCH}_requests_per_s"], 3),
    }
    return result
