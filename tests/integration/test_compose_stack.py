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
- two Tritons under one name (profile ``replica``) both serve the workers, and a restart of
  one while posts stream in loses and duplicates nothing.

Traffic stays on this machine: the Compose network, and ports published on 127.0.0.2.
"""

from __future__ import annotations

import json
import os
import secrets
import shutil
import subprocess
import sys
import time
from collections.abc import Iterator
from pathlib import Path

import grpc
import pytest
from grpc_health.v1 import health_pb2, health_pb2_grpc

from deploy.docker import daemon_answers, ensure_base
from deploy.process import DeployError, port_in_use
from services.es.bulk import make_client
from services.pb import headline_api_pb2 as api
from services.pb import headline_api_pb2_grpc as api_grpc
from services.settings import REPO_ROOT

pytestmark = [pytest.mark.compose, pytest.mark.timeout(3600)]

FILES = os.environ.get("NLP_COMPOSE_FILES", "docker-compose.yml:deploy/images/compose.yml")
PROJECT = f"nlpcompose{os.getpid()}"
ADDRESS = "127.0.0.2"  # NLP_PUBLISH_ADDRESS: loopback, apart from the local stack's 127.0.0.1
HOST_PORTS = {9092: "kafka", 9200: "elasticsearch", 8000: "triton", 8001: "triton",
              8002: "triton", 50051: "headline-api"}
SAMPLES = REPO_ROOT / "deploy" / "sample_data"
WORKERS = 3


def compose_cmd(*args: str) -> list[str]:
    files = [a for f in FILES.split(":") for a in ("-f", str(REPO_ROOT / f))]
    return ["docker-compose", "-p", PROJECT, *files, "--profile", "replica", *args]


def compose(*args: str, timeout: float = 600, env: dict[str, str]) -> str:
    proc = subprocess.run(compose_cmd(*args), cwd=REPO_ROOT, env=env, capture_output=True,
                          text=True, timeout=timeout)
    if proc.returncode != 0:
        raise AssertionError(f"docker-compose {' '.join(args)} failed ({proc.returncode}):\n"
                             f"{proc.stdout[-3000:]}\n{proc.stderr[-3000:]}")
    return proc.stdout


def why_not_runnable() -> str | None:
    if shutil.which("docker-compose") is None or shutil.which("docker") is None:
        return "docker and docker-compose are not installed (apt-get install docker.io " \
            "docker-compose)"
    if FILES.endswith("deploy/images/compose.yml"):
        try:  # a daemon (started if need be) and the Debian and Python bases built here
            ensure_base()
        except DeployError as exc:
            return f"no Docker to build the images with: {exc}"
    elif not daemon_answers():
        return "no Docker daemon answers (python -m deploy.docker base starts one)"
    busy = [f"{port} ({name})" for port, name in HOST_PORTS.items()
            if port_in_use(ADDRESS, port)]
    if busy:
        return f"ports in use on {ADDRESS}: {', '.join(busy)}; the Compose file publishes them"
    return None


def container_ids(service: str, env: dict[str, str]) -> list[str]:
    return compose("ps", "-q", service, env=env).split()


def health(container: str) -> str:
    out = subprocess.run(["docker", "inspect", "--format",
                          "{{if .State.Health}}{{.State.Health.Status}}{{else}}none{{end}}",
                          container], capture_output=True, text=True, timeout=30)
    return out.stdout.strip()


def wait_healthy(services: list[str], env: dict[str, str], timeout: float) -> float:
    began = time.monotonic()
    while time.monotonic() - began < timeout:
        states = {s: [health(c) for c in container_ids(s, env)] for s in services}
        if all(states[s] and all(h in ("healthy", "none") for h in states[s])
               for s in services):
            return time.monotonic() - began
        time.sleep(3)
    raise AssertionError(f"not healthy after {timeout:.0f}s: {states}")


@pytest.fixture(scope="module")
def stack() -> Iterator[dict[str, str]]:
    reason = why_not_runnable()
    if reason:
        pytest.skip(reason)
    env = {**os.environ, "NLP_TRITON_ADMIN_KEY": secrets.token_hex(16),
           "NLP_PUBLISH_ADDRESS": ADDRESS}
    began = time.monotonic()
    compose("build", timeout=3600, env=env)
    print(f"build: {time.monotonic() - began:.0f}s")
    try:
        began = time.monotonic()
        compose("up", "-d", "--scale", f"worker={WORKERS}", "kafka", "elasticsearch",
                "triton", "triton-replica", "worker", "headline-api", timeout=900, env=env)
        took = wait_healthy(["kafka", "elasticsearch", "triton", "triton-replica"], env,
                            timeout=900)
        print(f"up and healthy: {time.monotonic() - began:.0f}s (health {took:.0f}s)")
        yield env
    finally:
        logs = subprocess.run(compose_cmd("logs", "--no-color", "--tail", "60", "worker"),
                              cwd=REPO_ROOT, env=env, capture_output=True, text=True)
        print(logs.stdout[-6000:])
        compose("down", "-v", "--remove-orphans", timeout=300, env=env)


def distinct_ids(path: Path) -> set[str]:
    return {json.loads(line)["id"] for line in path.read_text().splitlines() if line.strip()}


def inferences(container: str, model: str = "pos_tagger") -> int:
    """Successful requests ``model`` served in ``container`` (Triton's own metrics)."""
    script = ("import urllib.request; print(urllib.request.urlopen("
              "'http://localhost:8002/metrics', timeout=10).read().decode())")
    out = subprocess.run(["docker", "exec", container, "python3", "-c", script],
                         capture_output=True, text=True, timeout=60, check=True).stdout
    prefix = f'nv_inference_request_success{{model="{model}"'
    return sum(int(float(line.rsplit(" ", 1)[1])) for line in out.splitlines()
               if line.startswith(prefix))


def replay(path: Path, topic: str, kind: str, rate: float = 0) -> subprocess.Popen[str]:
    cmd = [sys.executable, "-m", "services.producer", "--file", str(path), "--topic", topic,
           "--kind", kind, "--bootstrap", f"{ADDRESS}:9092", "--quiet"]
    if rate:
        cmd += ["--rate", str(rate)]
    return subprocess.Popen(cmd, cwd=REPO_ROOT, stdout=subprocess.PIPE,
                            stderr=subprocess.STDOUT, text=True)


def finish(proc: subprocess.Popen[str]) -> None:
    out, _ = proc.communicate(timeout=300)
    assert proc.returncode == 0, out


def count(es, pattern: str) -> int:  # type: ignore[no-untyped-def]
    try:
        es.indices.refresh(index=pattern)
        return int(es.count(index=pattern)["count"])
    except Exception:  # the index does not exist yet
        return 0


def test_three_workers_and_a_killed_one_index_every_post_once_and_the_api_answers(
    stack: dict[str, str],
) -> None:
    env = stack
    posts = distinct_ids(SAMPLES / "tweets.jsonl") | distinct_ids(SAMPLES / "weibo.jsonl")
    articles = distinct_ids(SAMPLES / "articles.jsonl")
    workers = container_ids("worker", env)
    assert len(workers) == WORKERS
    es = make_client(f"http://{ADDRESS}:9200")

    feed = replay(SAMPLES / "tweets.jsonl", "posts.raw", "posts", rate=150)
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
    finish(replay(SAMPLES / "weibo.jsonl", "posts.raw", "posts"))
    finish(replay(SAMPLES / "articles.jsonl", "articles.raw", "articles"))

    last, last_change, longest_still = at_kill, killed_at, 0.0
    deadline = time.monotonic() + 900
    while count(es, "posts-*") < len(posts) or count(es, "articles-*") < len(articles):
        assert time.monotonic() < deadline, (
            f"posts {count(es, 'posts-*')}/{len(posts)}, "
            f"articles {count(es, 'articles-*')}/{len(articles)} after 900 s")
        now, n = time.monotonic(), count(es, "posts-*")
        if n != last:
            longest_still = max(longest_still, now - last_change)
            last, last_change = n, now
        time.sleep(1)
    time.sleep(5)  # anything redelivered after the kill is indexed by now
    indexed = {h["_id"] for h in es.search(index="posts-*", size=len(posts) + 100,
                                           _source=False)["hits"]["hits"]}
    assert count(es, "posts-*") == len(posts) and indexed == posts
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
    stack: dict[str, str],
) -> None:
    env = stack
    services = ["kafka", "elasticsearch", "triton", "triton-replica", "worker", "headline-api"]
    containers = {c: s for s in services for c in container_ids(s, env)}
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


def test_a_triton_replica_restarted_mid_stream_loses_and_duplicates_nothing(
    stack: dict[str, str], tmp_path: Path,
) -> None:
    env = stack
    es = make_client(f"http://{ADDRESS}:9200")
    before = count(es, "posts-*")
    again = [{**post, "id": f"{post['id']}-again"} for post in
             map(json.loads, (SAMPLES / "tweets.jsonl").read_text().splitlines()[:1000])]
    fresh = {post["id"] for post in again}
    feed_file = tmp_path / "tweets_again.jsonl"
    feed_file.write_text("".join(json.dumps(post) + "\n" for post in again))
    [first] = container_ids("triton", env)
    [second] = container_ids("triton-replica", env)
    served_before = {"triton": inferences(first), "triton-replica": inferences(second)}

    feed = replay(feed_file, "posts.raw", "posts", rate=100)
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
    wait_healthy(["triton"], env, timeout=300)
    by_replica = {"triton (restarted, counts since)": inferences(first),
                  "triton-replica": inferences(second)}
    assert all(n > 0 for n in served_before.values()), served_before  # both served
    assert by_replica["triton-replica"] > 0
    print(json.dumps({"posts": len(fresh), "all_indexed_s_after_restart":
                      round(time.monotonic() - restarted_at, 1),
                      "pos_tagger_requests_before": served_before,
                      "pos_tagger_requests_after": by_replica}))
