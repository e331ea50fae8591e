"""Posts per second with generated hashtags, five ways, measured in one run.

    python -m bench hashtag [--posts 1000] [--skip-pipeline]

(a) in_process_hashtags  the hashtag generator alone in this process, batched, serving beam
(b) in_process           POS tagger + hashtag generator in this process, batched: the
                         ceiling of the tagging pipeline, which runs both for every post
(c) triton               both models through Triton over gRPC, concurrently, batched
(d) pipeline             Kafka -> Faust (both models) -> Kafka -> Faust -> Elasticsearch,
                         first message produced until the last one is searchable
(e) naive                the same pipeline with one message per Triton request
(d') pipeline_memory_off (d) with the hashtag memory off: what the memory's Elasticsearch
                         look-ups cost (``ratios.memory_on_vs_off``)

In-process paths use both cores (torch threads = 2); Triton gives each model one thread and
runs the two models side by side. Texts are the English demo tweets.

(f) in_process_hashtags_zh  the Chinese generator alone in process on the demo's Weibo
                            posts, as served (the post's words offered as candidates) and
                            with the candidates switched off: what they cost
"""

from __future__ import annotations

import asyncio
import json
import time
from pathlib import Path

from bench.pos import _cores, _reload_model, _stack_memory, load_texts, warmup_texts
from nlp_models import registry

MODELS = (registry.POS.name, registry.HASHTAG.name)


def _rate(n: int, seconds: float) -> dict:
    return {"posts": n, "seconds": round(seconds, 3), "posts_per_s": round(n / seconds, 1)}


SERVED_N_BEST = 3  # model_repository/hashtag_generator/config.pbtxt


def bench_in_process(texts: list[str], with_pos: bool, beam: int, threads: int = 2,
                     batch: int = 64) -> dict:
    import torch

    from nlp_models.hashtag.serving import HashtagService
    from nlp_models.pos.predictor import PosPredictor
    from training.hashtag.evaluate import shipped_checkpoint
    from training.pos.evaluate import shipped_checkpoint as pos_checkpoint

    torch.set_num_threads(threads)
    service = HashtagService(shipped_checkpoint("en").parent, beam=beam, n_best=SERVED_N_BEST)
    tagger = PosPredictor(pos_checkpoint()) if with_pos else None
    warm = warmup_texts()
    service.generate(warm, ["en"] * len(warm))
    if tagger:
        tagger.tag_texts(warm)
    began, began_cpu = time.perf_counter(), time.process_time()
    for i in range(0, len(texts), batch):
        chunk = texts[i : i + batch]
        if tagger:
            tagger.tag_texts(chunk)
        service.generate(chunk, ["en"] * len(chunk))
    cpu_ms = (time.process_time() - began_cpu) * 1000 / len(texts)
    return {**_rate(len(texts), time.perf_counter() - began), "beam": beam,
            "cpu_ms_per_post": round(cpu_ms, 3), "torch_threads": threads, "batch": batch,
            "models": list(MODELS) if with_pos else [registry.HASHTAG.name]}


WEIBO = Path(__file__).resolve().parents[1] / "deploy" / "sample_data" / "weibo.jsonl"


def bench_chinese(beam: int, repeats: int = 2) -> dict:
    """Posts/s of the served Chinese generator with and without its post candidates, on
    the demo's Weibo posts (`repeats` passes each, each pass starting with an empty memory
    of empty-post scores, so that repeating the posts does not flatter it)."""
    import torch

    from nlp_models.hashtag.serving import HashtagService
    from training.hashtag.evaluate import shipped_checkpoint

    torch.set_num_threads(2)
    with open(WEIBO, encoding="utf-8") as f:
        texts = [json.loads(line)["text"] for line in f]
    service = HashtagService(shipped_checkpoint("zh").parent, beam=beam, n_best=SERVED_N_BEST)
    predictor = service.predictors["zh"]
    served = predictor.offer_post_words
    out: dict = {"beam": beam}
    for name, offer in (("served", served), ("without_post_candidates", False)):
        predictor.offer_post_words = offer
        service.generate(texts[:64], ["zh"] * 64)  # warm-up (jieba's dictionary)
        elapsed = 0.0
        for _ in range(repeats):
            predictor._prior.clear()
            began = time.perf_counter()
            for i in range(0, len(texts), 64):
                service.generate(texts[i : i + 64], ["zh"] * len(texts[i : i + 64]))
            elapsed += time.perf_counter() - began
        out[name] = {**_rate(len(texts) * repeats, elapsed), "post_candidates": offer}
    predictor.offer_post_words = served
    out["served_vs_without"] = round(out["served"]["posts_per_s"]
                                     / out["without_post_candidates"]["posts_per_s"], 3)
    return out


async def _triton_run(texts: list[str], url: str, batch: int, in_flight: int) -> float:
    from services.triton import HashtagClient, PosTaggerClient

    tagger, hashtagger = PosTaggerClient(url), HashtagClient(url)
    gate = asyncio.Semaphore(in_flight)

    async def both(chunk: list[str]) -> None:
        async with gate:
            await asyncio.gather(tagger.tag(chunk), hashtagger.generate(chunk, ["en"] * len(chunk)))

    await both(warmup_texts()[:batch])
    began = time.perf_counter()
    await asyncio.gather(*(both(texts[i : i + batch]) for i in range(0, len(texts), batch)))
    seconds = time.perf_counter() - began
    await tagger.close()
    await hashtagger.close()
    return seconds


def triton_seconds(texts: list[str], settings, batch: int = 64, in_flight: int = 4) -> float:
    """Seconds to run both models on ``texts`` through Triton (see ``_triton_run``)."""
    url = f"{settings.host}:{settings.triton_grpc_port}"
    return asyncio.run(_triton_run(texts, url, batch, in_flight))


def run(n_posts: int, skip_pipeline: bool, beam: int = 4) -> dict:
    from deploy.stack import servers
    from services.settings import Settings

    settings = Settings.from_env()
    texts = load_texts(n_posts)
    result: dict = {"benchmark": "hashtag", "machine_cores": _cores(), "beam": beam}
    result["in_process_hashtags"] = bench_in_process(texts, with_pos=False, beam=beam)
    result["in_process"] = bench_in_process(texts, with_pos=True, beam=beam)
    result["in_process_hashtags_zh"] = bench_chinese(beam)
    for srv in servers(["triton"], settings):
        srv.start(timeout=300)
    for model in MODELS:
        _reload_model(settings, model)
    seconds = triton_seconds(texts, settings)
    result["triton"] = {**_rate(len(texts), seconds), "batch": 64, "in_flight": 4}
    ceiling = result["in_process"]["posts_per_s"]
    result["ratios"] = {"triton_vs_in_process": round(result["triton"]["posts_per_s"] / ceiling, 3)}
    if not skip_pipeline:
        from bench.pipeline import bench_pipeline

        for srv in servers(None, settings):
            srv.start(timeout=300)
        for model in MODELS:
            _reload_model(settings, model)
        pipe = bench_pipeline(texts, settings, naive=False, hashtags=True)
        off = bench_pipeline(texts, settings, naive=False, hashtags=True, memory=False)
        naive = bench_pipeline(texts[: max(100, n_posts // 5)], settings, naive=True, hashtags=True)
        result["pipeline"] = {**_rate(pipe["tweets"], pipe["seconds"]),
                              "worker_log": pipe["log"]}
        result["pipeline_memory_off"] = {**_rate(off["tweets"], off["seconds"]),
                                         "worker_log": off["log"]}
        result["naive"] = {**_rate(naive["tweets"], naive["seconds"]),
                           "worker_log": naive["log"]}
        rate = result["pipeline"]["posts_per_s"]
        result["ratios"]["pipeline_vs_in_process"] = round(rate / ceiling, 3)
        result["ratios"]["pipeline_vs_naive"] = round(rate / result["naive"]["posts_per_s"], 2)
        result["ratios"]["memory_on_vs_off"] = round(
            rate / result["pipeline_memory_off"]["posts_per_s"], 3)
        result["memory"] = _stack_memory(settings, pipe["rss_mib"])
    return result
