"""Tweets per second of the POS tagger, four ways, measured in one run.

    python -m bench pos [--tweets 2000] [--skip-pipeline]

(a) in_process  the model called in this process, batched: the ceiling
(b) triton      the same texts through Triton over gRPC, batched, several requests in flight
(c) pipeline    Kafka -> Faust worker -> Triton -> Kafka -> Faust -> Elasticsearch, from the
                first message produced until the last one is searchable
(d) peer        the same work by a hand-written aiokafka loop (``bench.peer``)
(e) naive       the same pipeline with one Triton request per message and none in flight
                concurrently (NLP_TAG_BATCH_SIZE=1, NLP_TAG_IN_FLIGHT=1)

Prints one JSON object: rates, the ratios the targets are stated in, and the resident
memory of the whole local stack (servers + worker).
"""

from __future__ import annotations

import asyncio
import json
import time

from nlp_models import registry
from services.settings import REPO_ROOT

SAMPLE = REPO_ROOT / "deploy" / "sample_data" / "tweets.jsonl"


WARMUP = 256  # the last tweets of the sample warm each path up; they are never measured


def sample_texts() -> list[str]:
    return [json.loads(line)["text"] for line in SAMPLE.read_text().splitlines() if line]


def load_texts(n: int) -> list[str]:
    """The first n tweet texts of the demo sample (2,374 tweets), repeated only when n
    exceeds what is left after the warm-up tweets. Repeats would flatter the tagger's
    per-token cache, so the default n stays below that."""
    texts = sample_texts()[:-WARMUP]
    return (texts * (n // len(texts) + 1))[:n]


def warmup_texts() -> list[str]:
    return sample_texts()[-WARMUP:]


def bench_in_process(texts: list[str], passes: int = 3) -> dict:
    """The median of `passes` timed passes, each by a fresh service (cold token caches)
    after its warm-up: one pass on a shared 2-core machine varies by ~10 %."""
    import statistics

    import torch

    from nlp_models.pos.serving import PosService
    from training.pos.evaluate import shipped_checkpoint

    torch.set_num_threads(1)
    seconds, cpu = [], 0.0
    for _ in range(passes):
        service = PosService(shipped_checkpoint())  # what Triton's instance runs
        service.tag(warmup_texts())  # TorchScript specializes on its first calls
        began, began_cpu = time.perf_counter(), time.process_time()
        tagged = service.tag(texts)
        seconds.append(time.perf_counter() - began)
        cpu += time.process_time() - began_cpu
    tokens = sum(len(t.tokens) for t in tagged)
    median = statistics.median(seconds)
    return {"tweets": len(texts), "tokens": tokens, "passes": passes,
            "seconds": round(median, 3), "tweets_per_s": round(len(texts) / median, 1),
            "cpu_ms_per_tweet": round(cpu * 1000 / (passes * len(texts)), 3),
            "tweets_per_s_each": [round(len(texts) / s, 1) for s in seconds],
            "answer_json_ms_per_tweet": answer_json_cost(tagged)}


def answer_json_cost(tagged: list) -> dict[str, float]:
    """CPU ms per tweet of the JSON answer Triton's instance writes and the worker parses
    (TAGS_JSON): what binary output tensors could save at most."""
    from nlp_models.contract import tags_from_json, tags_to_json

    began = time.process_time()
    answers = [tags_to_json(t) for t in tagged]
    encode = time.process_time() - began
    began = time.process_time()
    for answer in answers:
        tags_from_json(answer)
    decode = time.process_time() - began
    n = max(len(tagged), 1)
    return {"encode": round(encode * 1000 / n, 4), "decode": round(decode * 1000 / n, 4),
            "bytes": round(sum(len(a.encode()) for a in answers) / n, 1)}


async def _triton_run(texts: list[str], url: str, batch: int, in_flight: int) -> float:
    import numpy as np
    import tritonclient.grpc.aio as grpcclient

    client = grpcclient.InferenceServerClient(url)
    gate = asyncio.Semaphore(in_flight)

    async def infer(chunk: list[str]) -> None:
        arr = np.array([t.encode() for t in chunk], dtype=object).reshape(-1, 1)
        inp = grpcclient.InferInput("TEXT", list(arr.shape), "BYTES")
        inp.set_data_from_numpy(arr)
        async with gate:
            await client.infer(registry.POS.name, [inp])

    await infer(warmup_texts()[:batch])
    began = time.perf_counter()
    await asyncio.gather(*(infer(texts[i : i + batch]) for i in range(0, len(texts), batch)))
    seconds = time.perf_counter() - began
    await client.close()
    return seconds


def bench_triton(texts: list[str], url: str, batch: int = 64, in_flight: int = 4) -> dict:
    seconds = asyncio.run(_triton_run(texts, url, batch, in_flight))
    return {"tweets": len(texts), "batch": batch, "in_flight": in_flight,
            "seconds": round(seconds, 3), "tweets_per_s": round(len(texts) / seconds, 1)}


def run(n_tweets: int, skip_pipeline: bool) -> dict:
    from deploy.stack import servers
    from services.settings import Settings

    settings = Settings.from_env()
    texts = load_texts(n_tweets)
    result: dict = {"benchmark": "pos", "machine_cores": _cores()}
    result["in_process"] = bench_in_process(texts)
    for srv in servers(["triton"], settings):
        srv.start(timeout=300)
    _reload_model(settings)
    result["triton"] = bench_triton(texts, f"{settings.host}:{settings.triton_grpc_port}")
    ceiling = result["in_process"]["tweets_per_s"]
    triton_rate = result["triton"]["tweets_per_s"]
    result["ratios"] = {"triton_vs_in_process": round(triton_rate / ceiling, 3)}
    if not skip_pipeline:
        from bench.pipeline import bench_pipeline

        for srv in servers(None, settings):
            srv.start(timeout=300)
        _reload_model(settings)
        result["pipeline"] = bench_pipeline(texts, settings, naive=False)
        _reload_model(settings)
        result["peer"] = bench_pipeline(texts, settings, naive=False, runner="peer")
        _reload_model(settings)
        result["naive"] = bench_pipeline(texts[: max(200, n_tweets // 4)], settings, naive=True)
        pipe, naive = result["pipeline"]["tweets_per_s"], result["naive"]["tweets_per_s"]
        result["ratios"]["pipeline_vs_in_process"] = round(pipe / ceiling, 3)
        result["ratios"]["pipeline_vs_peer"] = round(pipe / result["peer"]["tweets_per_s"], 3)
        result["ratios"]["pipeline_vs_naive"] = round(pipe / naive, 2)
        result["memory"] = _stack_memory(settings, result["pipeline"]["rss_mib"])
    return result


def _reload_model(settings, model: str = registry.POS.name) -> None:
    """Unload and load a model, so every path starts with the same cold caches."""
    import tritonclient.http as httpclient

    from services.model_control import admin_headers

    client = httpclient.InferenceServerClient(settings.triton_http_url)
    client.unload_model(model, headers=admin_headers(settings))
    client.load_model(model, headers=admin_headers(settings))


def _cores() -> int:
    import os

    return len(os.sched_getaffinity(0))


def _stack_memory(settings, worker_rss_mib: int) -> dict:
    """Resident memory of every server (with Triton's model stubs) and the Faust worker.

    RSS counts the pages processes share (each Triton stub maps libtorch) once per process;
    PSS splits them among their sharers, so its total is what the stack really holds. The
    worker (one process, gone by now) counts with its RSS in both.
    """
    from deploy.stack import servers, status

    states = {s.name: status(s) for s in servers(None, settings)}
    rss = {name: round(st.rss_bytes / 2**20) for name, st in states.items()}
    pss = {name: round(st.pss_bytes / 2**20) for name, st in states.items()}
    rss["faust_worker"] = pss["faust_worker"] = worker_rss_mib
    return {"rss_mib": rss, "total_mib": sum(rss.values()),
            "pss_mib": pss, "total_pss_mib": sum(pss.values())}
