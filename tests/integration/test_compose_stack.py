"""The Compose deployment really runs: images built, services healthy, three workers, a kill.

Part of the default run (marker ``compose``; ``-m 'not compose'`` leaves it out): it builds
and starts every image of docker-compose.yml, about 8 minutes from a warm Docker cache and
longer from a cold one, and skips with the reason where no Docker daemon can start. Where no
image registry is reachable (this machine), the images come from deploy/images/compose.yml
(Debian's archive, PyPI, Maven Central); set ``NLP_COMPOSE_FILES=docker-compose.yml`` to
test the official images instead. The stack publishes its ports on 127.0.0.2, another
loopback address, so it runs beside the local stack the other integration tests use.

Checked, on a project of its own (removed with its volumes afterwards):

- every service with a health check becomes healthy;
- three workers share the posts (``--scale worker=3``); one is killed (SIGKILL) while the
  sample tweets stream in and started again: every post and article is indexed exactly
  once (the index holds each id once and as many documents as distinct ids were sent),
  none dead-lettered; the seconds the index stood still after the kill are printed;
- the headline API answers its gRPC health check and one ``Suggest`` from the host;
- every service runs as a non-root user, none was killed for exceeding its ``mem_limit``;
- Prometheus scrapes every worker replica, both Tritons, the headline API and the two
  exporters, and Alertmanager is ready;
- two Tritons under one name (profile ``replica``) both serve the workers, and a restart of
  one while posts stream in loses and duplicates nothing.

Traffic stays on this machine: the Compose network, and ports published on 127.0.0.2.
"""

from __future__ import annotations

import json
import os
import secrets
import subprocess
import time
import urllib.parse
import urllib.request
from collections.abc import Iterator
from pathlib import Path

import grpc
import pytest
from grpc_health.v1 import health_pb2, health_pb2_grpc

from services.es.bulk import make_client
from services.pb import headline_api_pb2 as api
from services.pb import headline_api_pb2_grpc as api_grpc
from services.settings import REPO_ROOT
from tests.integration.compose_project import ComposeProject, count, finish, why_not_runnable

pytestmark = [pytest.mark.compose, pytest.mark.timeout(3600)]

PROJECT = f"nlpcompose{os.getpid()}"
ADDRESS = "127.0.0.2"  # NLP_PUBLISH_ADDRESS: loopback, apart from the local stack's 127.0.0.1
SAMPLES = REPO_ROOT / "deploy" / "sample_data"
WORKERS = 3
MONITORING = ["prometheus", "alertmanager", "es-exporter", "lag-exporter"]


@pytest.fixture(scope="module")
def stack() -> Iterator[ComposeProject]:
    reason = why_not_runnable(ADDRESS)
    if reason:
        pytest.skip(reason)
    project = ComposeProject(PROJECT, ADDRESS, profiles=["replica"], env={
        **os.environ, "NLP_TRITON_ADMIN_KEY": secrets.token_hex(16),
        "NLP_PUBLISH_ADDRESS": ADDRESS})
    with project.running(["kafka", "elasticsearch", "triton", "triton-replica", "worker",
                          "headline-api", *MONITORING],
                         ["kafka", "elasticsearch", "triton", "triton-replica"],
                         up_options=("--scale", f"worker={WORKERS}")):
        yield project


def distinct_ids(path: Path) -> set[str]:
    return {json.loads(line)["id"] for line in path.read_text().splitlines() if line.strip()}


#: the topics a post or an article passes, in order, and their dead-letter topics
TOPICS = {"posts": ("posts.raw", "posts.tagged", "posts.raw.dlq", "posts.tagged.dlq"),
          "articles": ("articles.raw", "articles.headlines", "articles.raw.dlq",
                       "articles.headlines.dlq")}


def indexed_ids(es, kind: str, expected: int) -> set[str]:  # type: ignore[no-untyped-def]
    hits = es.search(index=f"{kind}-*", size=expected + 100, _source=False)["hits"]["hits"]
    return {h["_id"] for h in hits}


def whereabouts(kind: str, ids: set[str], bootstrap: str = f"{ADDRESS}:9092",
                group: str = "nlp-pipeline") -> str:
    """Where the posts or articles ``ids`` went (to explain a failure): the records keyed
    by them on each topic of ``kind``, and the group's committed offsets against each
    partition's end."""
    from kafka import KafkaAdminClient, KafkaConsumer, TopicPartition

    found: dict[str, list[str]] = {i: [] for i in ids}
    for topic in TOPICS[kind]:
        consumer = KafkaConsumer(topic, bootstrap_servers=bootstrap, group_id=None,
                                 auto_offset_reset="earliest", consumer_timeout_ms=5000)
        for record in consumer:
            key = (record.key or b"").decode(errors="replace")
            if key in found:
                found[key].append(f"{topic}/{record.partition}@{record.offset}")
        consumer.close()
    admin = KafkaAdminClient(bootstrap_servers=bootstrap)
    committed = admin.list_consumer_group_offsets(group)
    admin.close()
    consumer = KafkaConsumer(bootstrap_servers=bootstrap)
    ends = consumer.end_offsets([TopicPartition(tp.topic, tp.partition) for tp in committed])
    consumer.close()
    offsets = {f"{tp.topic}/{tp.partition}": f"{meta.offset} of {ends[tp]}"
               for tp, meta in sorted(committed.items()) if tp.topic in TOPICS[kind]}
    return json.dumps({"records": found, "committed": offsets})


def inferences(container: str, model: str = "pos_tagger") -> int:
    """Successful requests ``model`` served in ``container`` (Triton's own metrics)."""
    script = ("import urllib.request; print(urllib.request.urlopen("
              "'http://localhost:8002/metrics', timeout=10).read().decode())")
    out = subprocess.run(["docker", "exec", container, "python3", "-c", script],
                         capture_output=True, text=True, timeout=60, check=True).stdout
    prefix = f'nv_inference_request_success{{model="{model}"'
    return sum(int(float(line.rsplit(" ", 1)[1])) for line in out.splitlines()
               if line.startswith(prefix))


def test_three_workers_and_a_killed_one_index_every_post_once_and_the_api_answers(
    stack: ComposeProject,
) -> None:
    posts = distinct_ids(SAMPLES / "tweets.jsonl") | distinct_ids(SAMPLES / "weibo.jsonl")
    articles = distinct_ids(SAMPLES / "articles.jsonl")
    workers = stack.containers("worker")
    assert len(workers) == WORKERS
    es = make_client(f"http://{ADDRESS}:9200")

    feed = stack.replay(SAMPLES / "tweets.jsonl", "posts.raw", "posts", rate=150)
    deadline = time.monotonic() + 600
    while count(es, "posts-*") < 300:
        assert time.monotonic() < deadline, "the first 300 posts were not indexed in 600 s"
        time.sleep(1)
    victim = workers[-1]
    subprocess.run(["docker", "kill", victim], check=True, capture_output=True)
    killed_at, at_kill = time.monotonic(), count(es, "posts-*")
    time.sleep(5)
    subprocess.run(["docker", "start", victim], check=True, capture_output=True)
    finish(feed)
    finish(stack.replay(SAMPLES / "weibo.jsonl", "posts.raw", "posts"))
    finish(stack.replay(SAMPLES / "articles.jsonl", "articles.raw", "articles"))

    last, last_change, longest_still = at_kill, killed_at, 0.0
    deadline = time.monotonic() + 900
    while count(es, "posts-*") < len(posts) or count(es, "articles-*") < len(articles):
        assert time.monotonic() < deadline, (
            f"posts {count(es, 'posts-*')}/{len(posts)}, "
            f"articles {count(es, 'articles-*')}/{len(articles)} after 900 s; missing: "
            f"{whereabouts('posts', posts - indexed_ids(es, 'posts', len(posts)))} "
            f"{whereabouts('articles', articles - indexed_ids(es, 'articles', len(articles)))}")
        now, n = time.monotonic(), count(es, "posts-*")
        if n != last:
            longest_still = max(longest_still, now - last_change)
            last, last_change = n, now
        time.sleep(1)
    time.sleep(5)  # anything redelivered after the kill is indexed by now
    assert count(es, "posts-*") == len(posts) and indexed_ids(es, "posts", len(posts)) == posts
    assert count(es, "articles-*") == len(articles)
    print(json.dumps({"posts": len(posts), "articles": len(articles), "workers": WORKERS,
                      "indexed_at_kill": at_kill,
                      "longest_stall_after_kill_s": round(longest_still, 1),
                      "all_indexed_s_after_kill": round(time.monotonic() - killed_at, 1)}))

    with grpc.insecure_channel(f"{ADDRESS}:50051") as channel:
        reply = health_pb2_grpc.HealthStub(channel).Check(
            health_pb2.HealthCheckRequest(service=""), timeout=30)
        assert reply.status == health_pb2.HealthCheckResponse.SERVING
        article = json.loads((SAMPLES / "articles.jsonl").read_text().splitlines()[0])["body"]
        response = api_grpc.HeadlineServiceStub(channel).Suggest(
            api.SuggestRequest(article=article, num_candidates=1), timeout=120)
        assert response.candidates and response.candidates[0].text.strip()
        print("suggested:", response.candidates[0].text)


def test_every_service_runs_as_a_non_root_user_within_its_memory_limit(
    stack: ComposeProject,
) -> None:
    services = ["kafka", "elasticsearch", "triton", "triton-replica", "worker", "headline-api",
                *MONITORING]
    containers = {c: s for s in services for c in stack.containers(s)}
    for container, service in containers.items():
        uid = subprocess.run(["docker", "exec", container, "id", "-u"], capture_output=True,
                             text=True, timeout=60, check=True).stdout.strip()
        assert uid != "0", f"{service} runs as root"
        state = json.loads(subprocess.run(
            ["docker", "inspect", "--format", "{{json .State}}", container],
            capture_output=True, text=True, timeout=60, check=True).stdout)
        assert not state["OOMKilled"], f"{service} hit its mem_limit"
    stats = subprocess.run(["docker", "stats", "--no-stream", "--format",
                            "{{.Name}}\t{{.MemUsage}}", *containers],
                           capture_output=True, text=True, timeout=120, check=True).stdout
    print("memory after the stream (usage / limit):\n" + stats)


def test_prometheus_scrapes_every_service_and_alertmanager_is_ready(
        stack: ComposeProject) -> None:
    expected = {"worker": WORKERS, "triton": 2, "headline_api": 1, "elasticsearch": 1,
                "consumer_lag": 1, "alertmanager": 1, "prometheus": 1}
    query = urllib.parse.urlencode({"query": "sum by (job) (up)"})
    deadline, up = time.monotonic() + 180, {}
    while time.monotonic() < deadline:
        with urllib.request.urlopen(f"http://{ADDRESS}:9090/api/v1/query?{query}",
                                    timeout=5) as resp:
            result = json.load(resp)["data"]["result"]
        up = {r["metric"]["job"]: int(float(r["value"][1])) for r in result}
        if up == expected:
            break
        time.sleep(2)
    assert up == expected
    with urllib.request.urlopen(f"http://{ADDRESS}:9095/-/ready", timeout=5) as resp:
        assert resp.status == 200
    print(json.dumps({"prometheus_up_by_job": up}))


def test_a_triton_replica_restarted_mid_stream_loses_and_duplicates_nothing(
    stack: ComposeProject, tmp_path: Path,
) -> None:
    es = make_client(f"http://{ADDRESS}:9200")
    before = count(es, "posts-*")
    again = [{**post, "id": f"{post['id']}-again"} for post in
             map(json.loads, (SAMPLES / "tweets.jsonl").read_text().splitlines()[:1000])]
    fresh = {post["id"] for post in again}
    feed_file = tmp_path / "tweets_again.jsonl"
    feed_file.write_text("".join(json.dumps(post) + "\n" for post in again))
    [first] = stack.containers("triton")
    [second] = stack.containers("triton-replica")
    served_before = {"triton": inferences(first), "triton-replica": inferences(second)}

    feed = stack.replay(feed_file, "posts.raw", "posts", rate=100)
    deadline = time.monotonic() + 600
    while count(es, "posts-*") < before + 100:
        assert time.monotonic() < deadline, "no new posts indexed in 600 s"
        time.sleep(1)
    restarted_at = time.monotonic()
    subprocess.run(["docker", "restart", "-t", "15", first], check=True, capture_output=True)
    finish(feed)
    deadline = time.monotonic() + 900
    while count(es, "posts-*") < before + len(fresh):
        assert time.monotonic() < deadline, (
            f"{count(es, 'posts-*') - before}/{len(fresh)} posts after 900 s")
        time.sleep(1)
    time.sleep(5)
    assert count(es, "posts-*") == before + len(fresh)
    stack.wait_healthy(["triton"], timeout=300)
    by_replica = {"triton (restarted, counts since)": inferences(first),
                  "triton-replica": inferences(second)}
    assert all(n > 0 for n in served_before.values()), served_before  # both served
    assert by_replica["triton-replica"] > 0
    print(json.dumps({"posts": len(fresh), "all_indexed_s_after_restart":
                      round(time.monotonic() - restarted_at, 1),
                      "pos_tagger_requests_before": served_before,
                      "pos_tagger_requests_after": by_replica}))
