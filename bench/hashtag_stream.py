"""Hashtags on a time-ordered stream, through the real pipeline, beside simple baselines.

    python -m bench hashtag-stream --data FILE.jsonl --lang en|zh [--step 10 | --rate N]
        [--limit N] [--tagged-only] [--predictions OUT.jsonl] [--no-generator-only]

FILE is in the shared hashtag format with ``created_at`` (``python -m training data
hashtag-stream`` writes four such streams), already in time order. Every post is produced
onto ``posts.raw`` in file order, its hashtags re-attached at the end of its text the way
the language writes them (``#tag`` in English, ``#话题#`` in Chinese), with its
``created_at``, through Kafka, the worker (the hashtag memory on), Triton and
Elasticsearch. When all are indexed, the suggestions in the documents of the posts that
carry hashtags are scored against the author's hashtags with ``training evaluate
hashtag``'s metrics: ROUGE on the first suggestion (one hashtag, as the trending and
TF-IDF baselines give), F1@1 and F1@5 on the ranked suggestions.

How fast to replay matters. A post's memory holds what was indexed before it, and a post
reaches the index a second or two after it is produced (the worker's batch, the indexer's
batch, Elasticsearch's refresh). A live stream spreads its posts over hours, so only the
last few are hidden; a replay at N posts/s hides the last ~2N, which in a compressed
stream can be hours of event time. So by default the stream is produced in steps
(``--step 10``): each step ends at its 10th author-tagged post, and the next is produced
only when the step is searchable; a post misses at most the other tagged posts of its
own step (as posts of one batch miss each other). ``--rate N`` replays at a fixed rate
instead (a throughput-like figure, with the blind spot above). ``--tagged-only`` produces
only the posts that carry hashtags: the memory remembers nothing else (neighbours and
trending count author-tagged posts only), so with steps the suggestions are those of the
full stream, in a fraction of the time; ``posts_per_s`` then describes neither.

Baselines on the same posts in the same order: ``trending`` (the most frequent author
hashtag among the previous 500 author-tagged posts), ``tfidf`` (Ext.TFIDF's keyword,
document frequencies from the shared training split) and ``generator_only`` (the same
pipeline run again with ``NLP_HASHTAG_MEMORY=0``). The last stdout line is one JSON object.
"""

from __future__ import annotations

import json
import sys
import time
from collections import Counter, deque
from datetime import datetime

from deploy.harness import PipelineRun
from services.pb import messages_pb2 as pb
from services.settings import Settings
from training.hashtag.streams import read_stream, score, with_hashtags

TRENDING_WINDOW = 500  # author-tagged posts the trending baseline counts


def progress(message: str) -> None:
    print(message, file=sys.stderr, flush=True)


def message(row: dict, lang: str, prefix: str) -> tuple[bytes, bytes]:
    post = pb.Post(id=f"{prefix}{row['id']}", lang=lang,
                   platform=pb.WEIBO if lang == "zh" else pb.TWITTER,
                   text=with_hashtags(row["text"], row["hashtags"], lang))
    post.created_at.FromDatetime(datetime.fromisoformat(row["created_at"].replace("Z",
                                                                                  "+00:00")))
    return post.id.encode(), post.SerializeToString()


def steps(posts: list[dict], step: int) -> list[list[dict]]:
    """Consecutive runs of posts, each ending at its ``step``-th post with hashtags."""
    out: list[list[dict]] = [[]]
    tagged = 0
    for post in posts:
        out[-1].append(post)
        tagged += bool(post["hashtags"])
        if tagged == step:
            out.append([])
            tagged = 0
    return [chunk for chunk in out if chunk]


def memory_latency(metrics_text: str) -> dict:
    """Look-ups and their p50 / p99 (upper bucket bounds, seconds) from the worker's
    ``nlp_hashtag_memory_seconds`` histogram."""
    buckets: list[tuple[float, float]] = []
    for line in metrics_text.splitlines():
        if line.startswith("nlp_hashtag_memory_seconds_bucket{"):
            bound = line.split('le="', 1)[1].split('"', 1)[0]
            buckets.append((float(bound), float(line.rsplit(" ", 1)[1])))
    total = buckets[-1][1] if buckets else 0.0

    def quantile(q: float) -> float | None:
        return next((b for b, n in buckets if total and n >= q * total), None)

    return {"lookups": int(total), "p50_s_at_most": quantile(0.5),
            "p99_s_at_most": quantile(0.99)}


def run_pipeline(posts: list[dict], lang: str, settings: Settings, rate: float, step: int,
                 memory: bool, timeout: float) -> tuple[dict[str, list[str]], float, dict]:
    """Post id -> suggested hashtags (best first), posts per second end to end, and the
    memory's look-up latency (from the worker's /metrics)."""
    from deploy.testing import free_ports

    (web,) = free_ports(1)
    run = PipelineRun.create(settings, "hstream" if memory else "hstream-gen",
                             NLP_HASHTAG_MEMORY="1" if memory else "0",
                             NLP_STREAM_WEB_PORT=str(web))
    try:
        run.start_worker()
        how = f"in steps of {step} tagged posts" if step else f"at {rate or 'full'} posts/s"
        progress(f"{run.name}: producing {len(posts)} posts {how} (memory "
                 f"{'on' if memory else 'off'})")
        began = time.perf_counter()
        for n, chunk in enumerate(steps(posts, step) if step else [posts], 1):
            items = [message(p, lang, "") for p in chunk]
            ids = [key.decode() for key, _ in items]
            run.produce(items, rate=0 if step else rate)
            if not run.wait_indexed(ids, timeout=timeout, poll=0.2 if step else 1.0):
                raise TimeoutError(f"not all {len(ids)} posts indexed within {timeout:.0f}s "
                                   f"(worker log {run.worker.log_path if run.worker else '-'})")
            if n % 50 == 0:
                progress(f"{run.name}: {n} steps indexed")
        seconds = time.perf_counter() - began
        docs = run.sources(["hashtags"])
        latency = memory_latency(_get(f"http://127.0.0.1:{web}/metrics")) if memory else {}
    finally:
        run.cleanup()
    shown = {i: [h["text"] for h in d.get("hashtags") or []] for i, d in docs.items()}
    return shown, len(posts) / seconds, latency


def _get(url: str) -> str:
    from urllib.request import urlopen

    try:
        with urlopen(url, timeout=10) as response:
            return response.read().decode()
    except OSError as exc:
        progress(f"no metrics from {url}: {exc}")
        return ""


def trending(posts: list[dict]) -> list[list[str]]:
    """Per post, the most frequent author hashtag among the previous 500 tagged posts."""
    window: deque[list[str]] = deque(maxlen=TRENDING_WINDOW)
    counts: Counter[str] = Counter()
    out = []
    for post in posts:
        out.append([counts.most_common(1)[0][0]] if counts else [])
        if post["hashtags"]:
            if len(window) == window.maxlen:
                counts.subtract({t.lower() for t in window[0]})
            window.append(post["hashtags"])
            counts.update({t.lower() for t in post["hashtags"]})
            counts = +counts  # drop zero counts
    return out


def tfidf(posts: list[dict], lang: str) -> list[list[str]]:
    from nlp_models.hashtag.text import join_words
    from training.hashtag.baseline import extract_hashtag, fit, training_pairs

    extractor = fit(training_pairs(lang), lang)
    return [[join_words(words, lang)] if (words := extract_hashtag(extractor, p["text"], lang))
            else [] for p in posts]


def run(data: str, lang: str, rate: float, step: int, limit: int | None,
        predictions: str | None, generator_only: bool, tagged_only: bool = False,
        timeout: float = 3600) -> dict:
    from deploy.stack import servers

    settings = Settings.from_env()
    for srv in servers(None, settings):
        srv.start(timeout=300)
    posts = read_stream(data, limit)
    if tagged_only:
        posts = [p for p in posts if p["hashtags"]]
    tagged = [i for i, p in enumerate(posts) if p["hashtags"]]
    gold = [posts[i] for i in tagged]
    shown, rate_memory, latency = run_pipeline(posts, lang, settings, rate, step, True,
                                               timeout)
    ours = [shown.get(posts[i]["id"], []) for i in tagged]
    result: dict = {"data": str(data), "lang": lang, "stream_posts": len(posts),
                    "tagged_only": tagged_only, **score(ours, gold, lang),
                    "posts_per_s": round(rate_memory, 1), "step": step,
                    "rate": None if step else rate, "memory_latency": latency,
                    "baselines": {}}
    trend = trending(posts)
    result["baselines"]["trending"] = score([trend[i] for i in tagged], gold, lang)
    result["baselines"]["tfidf"] = score(tfidf(gold, lang), gold, lang)
    if generator_only:
        alone, rate_alone, _ = run_pipeline(posts, lang, settings, rate, step, False,
                                            timeout)
        result["baselines"]["generator_only"] = {
            **score([alone.get(posts[i]["id"], []) for i in tagged], gold, lang),
            "posts_per_s": round(rate_alone, 1)}
    base = result["baselines"]
    result["ratios"] = {f"rouge1_vs_{name}": round(result["rouge1"] / b["rouge1"], 2)
                        for name, b in base.items() if b["rouge1"]}
    if predictions:
        with open(predictions, "w", encoding="utf-8") as f:
            for i, row in zip(tagged, ours, strict=True):
                f.write(json.dumps({"id": posts[i]["id"], "text": posts[i]["text"],
                                    "hashtags": posts[i]["hashtags"], "suggested": row,
                                    "trending": trend[i]}, ensure_ascii=False) + "\n")
    return result
