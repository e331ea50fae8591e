"""Headline generation, per-article latency and articles per second, measured in one run.

    python -m bench headline [--lang en|zh] [--articles 30] [--words 400] [--chars 800]
                             [--skip-pipeline]

For each generator (full; constrained with one phrase per article):
(a) in_process  the shipped model in this process, one article at a time (latency
                p50/p95) and in batches of 8 (articles/s), serving beam and n-best
(b) triton      the same model through Triton over gRPC: one request at a time (latency),
                then 4 requests in flight (articles/s)
and for the whole flow:
(c) pipeline    Kafka -> Faust (both generators) -> Kafka -> Faust -> Elasticsearch, first
                article produced until the last one is searchable (articles/s)

Articles are English test articles (Reuters), lengthened or cut to `words` words (the
issue's "typical article" is 400 words), or with --lang zh Chinese test articles (CCF inews,
the Chinese test source with full-length articles) cut to `chars` characters (800: about 400
words, jieba's words averaging 1.86 characters on them, plus punctuation); phrases are the
data's given phrases. A Chinese generator with a clause picker is also measured without it
(`headline_generator_no_picker`), side by side, so the picker's share is a ratio.
"""

from __future__ import annotations

import asyncio
import json
import os
import statistics
import subprocess
import sys
import time
import uuid

from bench.pos import _cores, _reload_model, _stack_memory
from nlp_models import registry
from services.settings import REPO_ROOT

MODELS = (registry.HEADLINE.name, registry.CONSTRAINED.name)


SOURCES = {"en": "reuters21578", "zh": "ccf-bdci2019-inews"}


def load_articles(n: int, words: int, lang: str = "en",
                  chars: int = 800) -> list[tuple[str, str]]:
    """(article, phrase) pairs from the language's test split, the longest articles first:
    English of exactly `words` words (short ones repeated), Chinese cut to `chars`
    characters (articles whose phrase is in what is kept)."""
    from training.paths import data_dir

    rows = [json.loads(line) for line in
            (data_dir() / "headline" / lang / "test.jsonl").read_text().splitlines()]
    rows = [r for r in rows if r["source"] == SOURCES[lang] and r["phrase_in_article"]]
    if lang == "zh":
        rows = [r for r in rows if r["phrase"] in r["article"][:chars]]
    rows.sort(key=lambda r: -len(r["article"].split() if lang == "en" else r["article"]))
    out = []
    for r in rows[:n]:
        if lang == "zh":
            out.append((r["article"][:chars], r["phrase"]))
            continue
        tokens = r["article"].split()
        while len(tokens) < words:
            tokens += r["article"].split()
        out.append((" ".join(tokens[:words]), r["phrase"]))
    return out


def latency(seconds: list[float]) -> dict:
    ms = sorted(1000 * s for s in seconds)

    def at(q: float) -> float:
        return round(ms[min(len(ms) - 1, int(q * len(ms)))], 1)

    return {"p50_ms": round(statistics.median(ms), 1), "p95_ms": at(0.95), "p99_ms": at(0.99),
            "mean_ms": round(statistics.fmean(ms), 1), "n": len(ms)}


def _timed(call, items: list) -> list[float]:
    times = []
    for item in items:
        began = time.perf_counter()
        call(item)
        times.append(time.perf_counter() - began)
    return times


def bench_in_process(pairs: list[tuple[str, str]], lang: str = "en") -> dict:
    import torch

    from nlp_models.headline.serving import ConstrainedHeadlineService, HeadlineService
    from training.headline.evaluate import CONSTRAINED_MODEL, FULL_MODEL
    from training.repository import serving_dir

    torch.set_num_threads(1)  # as each Triton model instance (torch_threads in its config)
    full = HeadlineService(serving_dir(FULL_MODEL), beam=4, n_best=3)
    constrained = ConstrainedHeadlineService(serving_dir(CONSTRAINED_MODEL), beam=3, n_best=3)
    calls = _calls(full, constrained, lang)
    if full.predictors[lang].picker is not None:
        plain = HeadlineService(serving_dir(FULL_MODEL), beam=4, n_best=3)
        plain.predictors[lang].picker = None
        calls["headline_generator_no_picker"] = _calls(plain, constrained, lang)[MODELS[0]]
    for call in calls.values():
        call(pairs[:2])  # warm-up
    # one article at a time, the models taking turns on each: a load that comes and goes
    # during the run falls on all of them alike
    times: dict[str, list[float]] = {model: [] for model in calls}
    for p in pairs:
        for model, call in calls.items():
            times[model] += _timed(call, [[p]])
    result = {}
    for model, call in calls.items():
        began = time.perf_counter()
        for i in range(0, len(pairs), 8):
            call(pairs[i : i + 8])
        rate = len(pairs) / (time.perf_counter() - began)
        result[model] = {**latency(times[model]), "batched_articles_per_s": round(rate, 2)}
    return result


def _calls(full, constrained, lang: str) -> dict:
    """One call per model on a batch of (article, phrase) pairs; the same for the in-process
    services and the Triton clients (which return awaitables)."""
    return {
        registry.HEADLINE.name: lambda batch: full.generate([a for a, _ in batch],
                                                          [lang] * len(batch)),
        registry.CONSTRAINED.name: lambda batch: constrained.generate(
            [a for a, _ in batch], [lang] * len(batch), [p for _, p in batch], [""] * len(batch)),
    }


async def _triton(pairs: list[tuple[str, str]], url: str, lang: str) -> dict:
    from services.triton import ConstrainedHeadlineClient, HeadlineClient

    full, constrained = HeadlineClient(url), ConstrainedHeadlineClient(url)
    calls = _calls(full, constrained, lang)
    result = {}
    for model, call in calls.items():
        await call(pairs[:2])
        times = []
        for p in pairs:
            began = time.perf_counter()
            await call([p])
            times.append(time.perf_counter() - began)
        gate = asyncio.Semaphore(4)

        async def one(p, call=call, gate=gate):
            async with gate:
                await call([p])

        began = time.perf_counter()
        await asyncio.gather(*(one(p) for p in pairs))
        rate = len(pairs) / (time.perf_counter() - began)
        result[model] = {**latency(times), "in_flight_4_articles_per_s": round(rate, 2)}
    await full.close()
    await constrained.close()
    return result


def bench_pipeline(pairs: list[tuple[str, str]], settings, lang: str,
                   timeout: float = 1200) -> dict:
    """Articles per second through the whole articles flow (both generators per article)."""
    import psutil
    from kafka import KafkaProducer

    from bench.pipeline import _wait_all
    from deploy.process import stop_child
    from services.config import PipelineConfig
    from services.es.bulk import make_client
    from services.kafka_topics import ensure_topics
    from services.pb import messages_pb2 as pb

    run = f"bench-articles-{uuid.uuid4().hex[:6]}"
    env = dict(os.environ, NLP_TOPIC_PREFIX=f"{run}.", NLP_INDEX_PREFIX=f"{run}-posts",
               NLP_ARTICLE_INDEX_PREFIX=f"{run}-articles", NLP_APP_ID=run,
               NLP_STREAM_WEB_PORT="0")
    cfg = PipelineConfig.from_env(env)
    ensure_topics(settings.kafka_bootstrap, cfg.topics.all())
    es = make_client(settings.es_url)
    log_path = settings.state_dir / "logs" / f"{run}.log"
    log_path.parent.mkdir(parents=True, exist_ok=True)
    with open(log_path, "wb") as log:
        cmd = [sys.executable, "-m", "services.stream", "worker", "-l", "info"]
        worker = subprocess.Popen(cmd, cwd=REPO_ROOT, env=env, stdout=log,
                                  stderr=subprocess.STDOUT)

    def produce(items: list[tuple[str, str, str]]) -> None:
        producer = KafkaProducer(bootstrap_servers=settings.kafka_bootstrap, acks="all")
        for key, body, phrase in items:
            value = pb.Article(id=key, lang=lang, body=body, required_phrases=[phrase])
            producer.send(cfg.topics.articles_raw, key=key.encode(),
                          value=value.SerializeToString())
        producer.flush()
        producer.close()

    try:
        produce([("warmup", pairs[0][0], pairs[0][1])])
        _wait_all(es, cfg.article_index_pattern, ["warmup"], worker, timeout=300)
        items = [(f"{run}-{i}", a, p) for i, (a, p) in enumerate(pairs)]
        began = time.perf_counter()
        produce(items)
        ended = _wait_all(es, cfg.article_index_pattern, [k for k, _, _ in items], worker,
                          timeout)
        worker_rss = psutil.Process(worker.pid).memory_info().rss
    finally:
        stop_child(worker)
        es.indices.delete(index=cfg.article_index_pattern, ignore=[404])
    seconds = ended - began
    return {"articles": len(pairs), "seconds": round(seconds, 2),
            "articles_per_s": round(len(pairs) / seconds, 2),
            "worker_rss_mib": round(worker_rss / 2**20), "worker_log": str(log_path)}


def run(n_articles: int, words: int, skip_pipeline: bool, lang: str = "en",
        chars: int = 800) -> dict:
    from deploy.stack import servers
    from services.settings import Settings

    settings = Settings.from_env()
    pairs = load_articles(n_articles, words, lang, chars)
    size = {"words": words} if lang == "en" else {"chars": chars}
    result: dict = {"benchmark": "headline", "lang": lang, "machine_cores": _cores(), **size,
                    "in_process": bench_in_process(pairs, lang)}
    if "headline_generator_no_picker" in result["in_process"]:
        result["picker_p50_vs_no_picker_p50"] = round(
            result["in_process"][MODELS[0]]["p50_ms"]
            / result["in_process"]["headline_generator_no_picker"]["p50_ms"], 3)
    for srv in servers(["triton"], settings):
        srv.start(timeout=300)
    for model in MODELS:
        _reload_model(settings, model)
    url = f"{settings.host}:{settings.triton_grpc_port}"
    result["triton"] = asyncio.run(_triton(pairs, url, lang))
    result["ratios"] = {
        f"{m}_triton_p50_vs_in_process_p50": round(
            result["triton"][m]["p50_ms"] / result["in_process"][m]["p50_ms"], 3)
        for m in MODELS}
    if not skip_pipeline:
        for srv in servers(None, settings):
            srv.start(timeout=300)
        pipe = bench_pipeline(pairs, settings, lang)
        result["pipeline"] = pipe
        # in process, an article costs one full and one constrained generation (batched)
        per_article = sum(1 / result["in_process"][m]["batched_articles_per_s"] for m in MODELS)
        result["ratios"]["pipeline_vs_in_process"] = round(pipe["articles_per_s"] * per_article,
                                                           3)
        result["memory"] = _stack_memory(settings, pipe["worker_rss_mib"])
    return result
