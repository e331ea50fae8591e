"""The demo: real servers, real posts through the whole pipeline, then searches.

    python -m deploy.demo [--limit N]

1. starts Kafka, Elasticsearch, Triton and the monitoring (or reuses running ones: `up`
   is idempotent),
2. starts the Faust worker (`python -m services.stream worker`) in the background,
3. replays the sample feeds with the replay producer: onto `posts.raw`
   deploy/sample_data/tweets.jsonl (2,374 ARK-Twitter tweets, CC BY 3.0) and
   deploy/sample_data/weibo.jsonl (200 Weibo posts), onto `articles.raw`
   deploy/sample_data/articles.jsonl (45 English and Chinese news articles, each with a
   required phrase; see ATTRIBUTION.md),
4. waits until every post and article is searchable in Elasticsearch, printing progress,
5. runs a few searches with the search CLI (POS filters, full text, user hashtags,
   generated hashtags in English and Chinese, articles with full and constrained
   headline candidates),
6. starts the headline API (`python -m services.headline_api`) and asks it for headline
   suggestions for a sample article with the client CLI (one gRPC round trip),
7. stops the worker and the API and leaves the servers running for your own searches
   (`python -m services.search --help`; stop them with `python -m deploy.local down`).
"""

from __future__ import annotations

import argparse
import json
import subprocess
import sys
import time
from datetime import UTC, datetime

from deploy.harness import PipelineRun, metric_total
from deploy.process import stop_child
from deploy.stack import servers, status
from services.settings import REPO_ROOT, Settings

SAMPLES = REPO_ROOT / "deploy" / "sample_data"
#: (feed, topic, producer --kind, index prefix setting)
FEEDS = [(SAMPLES / "tweets.jsonl", "posts.raw", "posts"),
         (SAMPLES / "weibo.jsonl", "posts.raw", "posts"),
         (SAMPLES / "articles.jsonl", "articles.raw", "articles")]
SEARCHES = [
    ["--tag", "NNP:lakers", "--size", "3"],
    ["--ark-tag", "^:miami", "--ark", "--size", "3"],
    ["halloween", "--size", "3"],
    ["--user-hashtag", "prayforindonesia", "--size", "2"],
    ["--top-hashtags", "--since", "2010-10-27", "--until", "2010-10-28", "--size", "8"],
    ["--platform", "weibo", "--size", "3"],
    ["--articles", "--lang", "en", "--size", "2"],
    ["--articles", "--lang", "zh", "--size", "1"],
]


def banner(text: str) -> None:
    print(f"\n=== {text}", flush=True)


def wait_indexed(run: PipelineRun, ids: list[str], pattern: str, timeout: float,
                 since: str) -> int:
    """Wait until all ``ids`` were processed after ``since`` (ISO time; documents of an
    earlier demo run have the same ids) and are searchable in ``pattern``, printing
    progress; how many are."""
    began = time.monotonic()
    found = 0

    def show(n: int) -> None:
        nonlocal found
        found = n
        rate = n / max(time.monotonic() - began, 1e-9)
        print(f"\r  indexed {n}/{len(ids)} ({rate:.1f}/s)   ", end="", flush=True)

    try:
        run.wait_indexed(ids, timeout, show, pattern=pattern, since=since)
    except RuntimeError as exc:  # the worker exited
        raise SystemExit(str(exc)) from exc
    print()
    return found


def print_agreement(run: PipelineRun, ids: list[str]) -> None:
    """How often the suggested hashtags hit the author's own, per language, over the
    replayed posts that carry hashtags (each suggested as if the author had written none)."""
    from services.es.bulk import make_client

    es = make_client(run.config.servers.es_url)
    try:
        body = {"size": 0, "query": {"bool": {"filter": [
                    {"ids": {"values": ids}}, {"exists": {"field": "hashtag_agreement.hit1"}}]}},
                "aggs": {"lang": {"terms": {"field": "hashtag_lang"}, "aggs": {
                    "hit1": {"avg": {"field": "hashtag_agreement.hit1"}},
                    "hit5": {"avg": {"field": "hashtag_agreement.hit5"}}}}}}
        buckets = es.search(index=run.index_pattern, body=body)["aggregations"]["lang"]["buckets"]
    finally:
        es.close()
    for b in buckets:
        print(f"  hashtags vs the authors' own ({b['key']}, {b['doc_count']} posts with "
              f"hashtags): hit@1 {b['hit1']['value']:.3f}, hit@5 {b['hit5']['value']:.3f}")


def print_memory_fallbacks(run: PipelineRun) -> None:
    """How many of the worker's hashtag-memory look-ups fell back to the generator alone
    (``nlp_hashtag_memory_fallbacks_total`` of its ``/metrics``)."""
    port = run.config.web_port
    if port is None:
        return
    lookups = metric_total(port, "nlp_hashtag_memory_seconds_count")
    fallbacks = metric_total(port, "nlp_hashtag_memory_fallbacks_total")
    share = fallbacks / lookups if lookups else 0.0
    print(f"  hashtag memory: {lookups:.0f} look-ups, {fallbacks:.0f} fell back to the "
          f"generator alone ({share:.1%})")


def suggest_over_grpc(settings: Settings) -> None:
    """Start the headline API, make one Suggest call with the client CLI, stop the API."""
    log_path = settings.state_dir / "logs" / "demo-headline-api.log"
    article = json.loads((SAMPLES / "articles.jsonl").read_text().splitlines()[0])
    cmd = [sys.executable, "-m", "services.headline_api"]
    with open(log_path, "wb") as log:
        server = subprocess.Popen(cmd, cwd=REPO_ROOT, stdout=log, stderr=subprocess.STDOUT)
    try:
        began = time.monotonic()
        while '"event": "started"' not in log_path.read_text(errors="replace"):
            if server.poll() is not None or time.monotonic() - began > 60:
                print(f"  the headline API did not start; see {log_path}")
                return
            time.sleep(0.2)
        phrase = article["required_phrases"][0]
        client = [sys.executable, "-m", "services.headline_api.client", "--text",
                  article["body"], "--phrase", phrase, "-n", "3", "--timeout", "30"]
        print(f"\n$ python -m services.headline_api.client --file <{article['id']}> "
              f"--phrase {phrase!r} -n 3", flush=True)
        subprocess.run(client, cwd=REPO_ROOT)
        print(f"  (original title: {article['title']})")
    finally:
        stop_child(server)


def main() -> None:
    parser = argparse.ArgumentParser(
        prog="python -m deploy.demo",
        description=__doc__,
        formatter_class=argparse.RawDescriptionHelpFormatter,
    )
    parser.add_argument("--limit", type=int, default=0, help="replay only the first N of each feed")
    parser.add_argument("--timeout", type=float, default=600, help="seconds to wait for indexing")
    args = parser.parse_args()
    settings = Settings.from_env()

    banner("1. starting Kafka, Elasticsearch, Triton and the monitoring (reused if running)")
    for srv in servers(None, settings):
        began = time.monotonic()
        _, started = srv.start(timeout=settings.start_timeout)
        took = f"started in {time.monotonic() - began:.0f}s" if started else "already running"
        print(f"  {srv.name}: {took}", flush=True)

    started = datetime.now(UTC).isoformat()
    banner("2. starting the Faust worker (tag_posts, index_posts, headline_articles, "
           "index_articles)")
    run = PipelineRun.attach(settings, "demo")
    worker = run.start_worker()
    print(f"  pid {worker.proc.pid}, log {worker.log_path}")
    try:
        ids: dict[str, list[str]] = {"posts": [], "articles": []}
        banner("3. replaying real posts onto posts.raw (tweets: ARK-Twitter, CC BY 3.0; "
               "Weibo: rumour set, GPL-3.0) and news articles onto articles.raw")
        for feed, topic, kind in FEEDS:
            feed_lines = [json.loads(x) for x in feed.read_text().splitlines() if x.strip()]
            feed_lines = feed_lines[: args.limit or None]
            ids[kind] += [x["id"] for x in feed_lines]
            producer = [sys.executable, "-m", "services.producer", "--file", str(feed),
                        "--topic", topic, "--kind", kind, "--limit", str(len(feed_lines))]
            subprocess.run(producer, cwd=REPO_ROOT, check=True)

        banner("4. waiting until every post is tagged and given hashtags, and every article "
               "given headlines, all searchable")
        found = {}
        for kind, pattern in (("posts", run.index_pattern),
                              ("articles", run.article_index_pattern)):
            began = time.monotonic()
            found[kind] = wait_indexed(run, ids[kind], pattern, args.timeout, started)
            print(f"  {found[kind]} of {len(ids[kind])} {kind} processed and indexed "
                  f"in {time.monotonic() - began:.0f}s")

        print_agreement(run, ids["posts"])
        print_memory_fallbacks(run)

        banner("5. searching (python -m services.search ...)")
        for query in SEARCHES:
            print(f"\n$ python -m services.search {' '.join(query)}", flush=True)
            subprocess.run([sys.executable, "-m", "services.search", *query], cwd=REPO_ROOT)
        banner("6. headline suggestions over gRPC (python -m services.headline_api)")
        suggest_over_grpc(settings)
    finally:
        run.stop_workers()

    banner("7. done")
    total = sum(status(s).rss_bytes for s in servers(None, settings)) / 2**20
    print(
        f"  servers still running ({total:.0f} MiB resident): try "
        "`python -m services.search --tag NNP:heat`;\n  the graphs of this run: "
        f"http://{settings.host}:{settings.prometheus_port}/consoles/pipeline.html;\n"
        "  stop them with `python -m deploy.local down`."
    )
    for kind, expected in ids.items():
        if found[kind] < len(expected):
            raise SystemExit(f"only {found[kind]} of {len(expected)} {kind} were indexed; "
                             f"see {worker.log_path}")


if __name__ == "__main__":
    main()
