"""Throughput of the whole posts pipeline beside a hand-written peer, in one run.

    python -m bench pipeline [--tweets 8000] [--with-hashtags]

Paths, each on its own topics, consumer group and index (``deploy.harness.PipelineRun``):

(a) in_process  the model(s) called in this process, batched: the ceiling
(b) triton      the same texts through Triton over gRPC, batched, several requests in flight
(c) pipeline    our Faust worker: posts.raw -> tag -> posts.tagged -> index -> Elasticsearch
(d) peer        ``bench.peer``: a plain aiokafka loop doing the same work with the same
                models, straight into Elasticsearch
(e) naive       (c) with one post per Triton request, one request at a time, and no
                producer linger
(f) pipeline_pos_only   with ``--with-hashtags`` only: (c) with hashtags off, so
                ``ratios.hashtags_vs_pos_only`` is what hashtags cost, measured in the same run

The tweets are the sample's, a second apart in created_at, so the hashtag memory of (c)
holds the posts before each one, as in a live stream; (c) with hashtags and one worker
reports ``generator_skipped_share``, the posts the memory answered alone.

(c)-(e) are timed from the first message produced until Elasticsearch has indexed the
last one (``seconds``, ``tweets_per_s``), and until it is searchable (``searchable_seconds``:
plus up to the index's 1 s refresh, a latency a continuous stream pays once). For each,
``cpu_ms_per_tweet`` is the CPU time (user + system, ``psutil``) every process spent until
the last post was searchable, divided by the tweets: the worker or peer, Kafka, Elasticsearch and
Triton with its model processes. ``outside_models`` subtracts the in-process path's own CPU
per tweet: what the plumbing costs.
"""

from __future__ import annotations

import subprocess
import sys
import time

import psutil

from deploy.harness import PipelineRun, Worker, metric_total, post_bytes, wait_until
from nlp_models import registry
from services.settings import REPO_ROOT, Settings

T0 = 1_700_000_000  # the first post's created_at (epoch seconds)


def start_peer(run: PipelineRun, ready_timeout: float = 120) -> Worker:
    """``python -m bench.peer`` with the run's environment, tracked with its workers (so
    ``cleanup`` stops it)."""
    path = run.log_dir / f"{run.name}-peer.log"
    with path.open("wb") as log:
        proc = subprocess.Popen([sys.executable, "-m", "bench.peer"], cwd=REPO_ROOT,
                                env=run.env, stdout=log, stderr=subprocess.STDOUT)
    peer = Worker(proc, path)
    run.workers.append(peer)
    wait_until(lambda: "peer: ready" in peer.log(), ready_timeout, f"peer ready (log {path})",
               check=peer.alive)
    return peer


def server_pids(settings: Settings) -> dict[str, list[int]]:
    """The live processes of each local server (Triton with its model processes)."""
    from deploy.process import members
    from deploy.stack import servers

    pids = {}
    for srv in servers(None, settings):
        record = srv.record()
        if record is not None:
            pids[srv.name] = members(record)
    return pids


def cpu_seconds(pids: list[int]) -> float:
    total = 0.0
    for pid in pids:
        try:
            times = psutil.Process(pid).cpu_times()
        except psutil.NoSuchProcess:
            continue
        total += times.user + times.system
    return total


class CpuMeter:
    """CPU seconds per process group between ``start`` and ``stop``."""

    def __init__(self, groups: dict[str, list[int]]) -> None:
        self.groups = groups
        self.began = {name: cpu_seconds(p) for name, p in groups.items()}

    def ms_per_item(self, items: int) -> dict[str, float]:
        spent = {name: (cpu_seconds(p) - self.began[name]) * 1000 / items
                 for name, p in self.groups.items()}
        spent = {name: round(ms, 3) for name, ms in spent.items()}
        spent["total"] = round(sum(spent.values()), 3)
        return spent


def wait_acknowledged(run: PipelineRun, expected: int, timeout: float) -> bool:
    """Until Elasticsearch has indexed ``expected`` documents into the run's indices (its
    ``indexing.index_total``, which counts a document when the bulk request writes it,
    before a refresh makes it searchable): the end of the work, where ``wait_searchable``
    adds up to the index's refresh interval (1 s) of latency that a continuous stream pays
    once, not per post."""

    def indexed(es) -> int:
        stats = es.indices.stats(index=run.index_pattern, metric="indexing")
        return int(stats["_all"]["primaries"]["indexing"]["index_total"])

    return _poll(run, indexed, expected, timeout, poll=0.1)


def wait_searchable(run: PipelineRun, expected: int, timeout: float) -> bool:
    """Until the run's own index counts ``expected`` documents (ids are unique, so that is
    every post), as users see it: no forced refresh. A plain count, because an ``ids``
    filter of thousands of ids on every poll costs Elasticsearch more CPU than a share of
    the indexing it is meant to measure."""

    def searchable(es) -> int:
        return int(es.count(index=run.index_pattern, allow_no_indices=True,
                            ignore_unavailable=True)["count"])

    return _poll(run, searchable, expected, timeout, poll=0.25)


def _poll(run: PipelineRun, read, expected: int, timeout: float, poll: float) -> bool:
    """Poll ``read(es)`` until it reaches ``expected`` (False at the timeout); raises when
    every worker of the run has exited."""
    from services.es.bulk import make_client

    es = make_client(run.config.servers.es_url)
    deadline = time.monotonic() + timeout
    try:
        while time.monotonic() < deadline:
            try:
                done = read(es)
            except Exception:  # noqa: BLE001 - no index yet, or its shard is starting
                done = 0
            if done >= expected:
                return True
            if not any(w.alive() for w in run.workers):
                raise RuntimeError(f"every worker exited; see {run.workers[-1].log_path}")
            time.sleep(poll)
        return False
    finally:
        es.close()


def bench_pipeline(texts: list[str], settings: Settings, naive: bool, hashtags: bool = False,
                   timeout: float = 900, memory: bool = True, runner: str = "worker",
                   workers: int = 1) -> dict:
    """Tweets per second through Kafka -> ``runner`` (our Faust worker, or the peer) ->
    Triton -> Elasticsearch, and the CPU each process spent per tweet.

    With ``hashtags`` the posts go through the POS tagger and the hashtag generator (the
    default deployment); without, only the POS tagger (NLP_HASHTAG_MODEL="");
    ``naive``: one post per Triton request, one request at a time; ``memory`` False: the
    hashtag memory off (NLP_HASHTAG_MEMORY=0); ``workers``: how many Faust workers share
    the run's partitions (the peer is always one process)."""
    env = {"NLP_HASHTAG_MODEL": registry.HASHTAG.name if hashtags else "",
           "NLP_HASHTAG_MEMORY": "1" if memory else "0"}
    if naive:
        env.update(NLP_TAG_BATCH="1", NLP_TRITON_CONCURRENCY="1", NLP_TAG_IN_FLIGHT="1",
                   NLP_PRODUCER_LINGER_MS="0")  # nothing batched, nothing waits
    label = "naive" if naive else runner
    one_worker = hashtags and runner == "worker" and workers == 1
    if one_worker:  # its /metrics say how often the memory answered alone
        from deploy.testing import free_ports

        env["NLP_STREAM_WEB_PORT"] = str(free_ports(1)[0])
    run = PipelineRun.create(settings, f"bench-{label}", **env)
    try:
        procs = ([run.start_worker() for _ in range(workers)] if runner == "worker"
                 else [start_peer(run)])
        run.produce([(b"warmup", post_bytes("warmup", "hi"))])
        if not run.wait_indexed(["warmup"], timeout=180):
            raise TimeoutError("the warm-up post was not indexed within 180 s")
        ids = [f"{run.name}-{i}" for i in range(len(texts))]
        # a second apart, in order: each post's hashtag memory holds the posts before it
        items = [(i.encode(), post_bytes(i, t, T0 + n))
                 for n, (i, t) in enumerate(zip(ids, texts, strict=True))]
        meter = CpuMeter({runner: [p.proc.pid for p in procs], **server_pids(settings)})
        print(f"[{time.strftime('%H:%M:%S')}.{int(time.time() * 1000) % 1000:03d}] {label}: "
              f"producing {len(items)} posts", file=sys.stderr)  # to line up with its log
        began = time.perf_counter()
        run.produce(items)
        produced = time.perf_counter() - began
        if not wait_acknowledged(run, len(ids) + 1, timeout):  # + the warm-up post
            raise TimeoutError(f"not all {len(ids)} posts indexed within {timeout}s")
        seconds = time.perf_counter() - began
        if not wait_searchable(run, len(ids) + 1, timeout):
            raise TimeoutError(f"not all {len(ids)} posts searchable within {timeout}s")
        searchable = time.perf_counter() - began
        if run.count_indexed(ids) != len(ids):
            raise RuntimeError("the run's index holds other documents than its posts")
        cpu = meter.ms_per_item(len(texts))
        rss = sum(psutil.Process(p.proc.pid).memory_info().rss for p in procs)
        skipped = generator_skipped(run) if one_worker else None
        log_path = str(procs[0].log_path)
    finally:
        run.cleanup()
    return {"tweets": len(texts), "seconds": round(seconds, 3),
            "produce_seconds": round(produced, 3), "searchable_seconds": round(searchable, 3),
            "searchable_tweets_per_s": round(len(texts) / searchable, 1),
            "tweets_per_s": round(len(texts) / seconds, 1), "cpu_ms_per_tweet": cpu,
            "rss_mib": round(rss / 2**20), "log": log_path,
            **({"generator_skipped_share": round(skipped / len(texts), 4)}
               if skipped is not None else {})}


def generator_skipped(run: PipelineRun) -> float | None:
    """Posts whose hashtags the memory answered alone, the generator not asked
    (``nlp_hashtag_generator_skipped_total`` on the run's one worker's ``/metrics``)."""
    port = run.config.web_port
    return metric_total(port, "nlp_hashtag_generator_skipped_total") if port else None


def run(n_tweets: int, with_hashtags: bool, workers: int = 1) -> dict:
    """All five paths on the same tweets, in one invocation (see the module docstring)."""
    from bench import hashtag, pos
    from deploy.stack import servers

    settings = Settings.from_env()
    texts = pos.load_texts(n_tweets)
    models = hashtag.MODELS if with_hashtags else (registry.POS.name,)
    result: dict = {"benchmark": "pipeline", "machine_cores": pos._cores(),
                    "models": list(models), "tweets": len(texts), "workers": workers}
    if with_hashtags:
        ceiling = hashtag.bench_in_process(texts, with_pos=True, beam=4)
        ceiling["tweets_per_s"] = ceiling.pop("posts_per_s")
        # The models' own CPU at one thread each, as in Triton (two threads cost more CPU
        # per post than they save in time); on the first 1,000 tweets.
        single = hashtag.bench_in_process(texts[:1000], with_pos=True, beam=4, threads=1)
        ceiling["cpu_ms_per_tweet"] = single["cpu_ms_per_post"]
        # What batching buys the models themselves; the rest of a pipeline's lead over the
        # naive path (one post at a time) is the per-message plumbing naive pays.
        one = hashtag.bench_in_process(texts[:200], with_pos=True, beam=4, threads=1, batch=1)
        ceiling["batching_gain_one_thread"] = round(single["posts_per_s"] / one["posts_per_s"], 2)
    else:
        ceiling = pos.bench_in_process(texts, passes=1)
    result["in_process"] = ceiling
    model_ms = ceiling["cpu_ms_per_tweet"]  # the models' own CPU: the rest is plumbing
    for srv in servers(None, settings):
        srv.start(timeout=300)
    for model in models:
        pos._reload_model(settings, model)
    if with_hashtags:
        seconds = hashtag.triton_seconds(texts, settings)
        result["triton"] = {"seconds": round(seconds, 3),
                            "tweets_per_s": round(len(texts) / seconds, 1)}
    else:
        result["triton"] = pos.bench_triton(texts, f"{settings.host}:{settings.triton_grpc_port}")
    for path, runner, naive in (("pipeline", "worker", False), ("peer", "peer", False),
                                ("naive", "worker", True)):
        for model in models:  # every path starts with the same cold caches
            pos._reload_model(settings, model)
        chosen = texts[: max(200, len(texts) // 8)] if naive else texts
        result[path] = bench_pipeline(chosen, settings, naive=naive, hashtags=with_hashtags,
                                      runner=runner, workers=workers if path == "pipeline" else 1)
        cpu = result[path]["cpu_ms_per_tweet"]
        cpu["outside_models"] = round(cpu["total"] - model_ms, 3)
    if with_hashtags:  # what hashtags cost: the same worker and tweets, POS only
        for model in models:
            pos._reload_model(settings, model)
        result["pipeline_pos_only"] = bench_pipeline(texts, settings, naive=False, hashtags=False,
                                                     runner="worker", workers=workers)
    rate = {p: result[p]["tweets_per_s"] for p in ("in_process", "triton", "pipeline", "peer",
                                                   "naive")}
    result["ratios"] = {
        "triton_vs_in_process": round(rate["triton"] / rate["in_process"], 3),
        "pipeline_vs_in_process": round(rate["pipeline"] / rate["in_process"], 3),
        "pipeline_vs_peer": round(rate["pipeline"] / rate["peer"], 3),
        "pipeline_vs_naive": round(rate["pipeline"] / rate["naive"], 2),
    }
    if with_hashtags:
        result["ratios"]["hashtags_vs_pos_only"] = round(
            rate["pipeline"] / result["pipeline_pos_only"]["tweets_per_s"], 3)
    result["memory"] = pos._stack_memory(settings, result["pipeline"]["rss_mib"])
    return result
