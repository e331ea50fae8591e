"""Alerts proven on real faults: Prometheus scrapes a real worker, Triton, the exporters;
Alertmanager notifies a webhook receiver run by this test.

- The demo's burst (2,574 posts, hashtags and memory on) is indexed with the memory in
  time, then the worker stops cleanly: it withdraws its scrape target and Prometheus holds
  no alert, pending or firing. A worker killed with SIGKILL keeps its target:
  ``WorkerDown`` reaches the receiver, and resolves once its target file is deleted.
- Triton is SIGKILLed while posts flow: ``TritonUnavailable`` reaches the receiver, then
  resolves once ``deploy.local up triton`` has it back, and every post is indexed once.
- Undecodable records arrive: ``DeadLettersArriving`` with code ``DECODE_ERROR``.
- A worker stops with a backlog on a topic that keeps records 120 s:
  ``UnreadRecordsNearRetention`` warns at half of it, and resolves once a worker read it.

The monitoring servers are this module's own (private state dir, free ports, 1 s scrape and
evaluation interval); the rules are the shipped ``deploy/monitoring/alerts.yml``. Delays
(fault to notification, recovery to resolution) are printed as JSON for the record.
"""

from __future__ import annotations

import json
import os
import shutil
import signal
import subprocess
import threading
import time
import urllib.parse
import urllib.request
from collections.abc import Iterator
from dataclasses import dataclass, field, replace
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path

import pytest

from deploy.demo import SAMPLES
from deploy.harness import PipelineRun, metric_total, post_bytes, wait_until
from deploy.monitoring import Alertmanager, ElasticsearchExporter, LagExporter, Prometheus
from deploy.stack import server
from deploy.testing import ElasticsearchInfo, KafkaInfo, TritonInfo, free_ports
from services.kafka_topics import alter_topic_configs
from services.producer.feed import post_from_json
from services.settings import Settings
from services.stream.scrape_target import target_file, withdraw

pytestmark = [pytest.mark.integration, pytest.mark.disruptive, pytest.mark.timeout(900)]


@dataclass
class Receiver:
    """Alertmanager's webhook target: every notification with its arrival time."""

    url: str
    notes: list[tuple[float, dict]] = field(default_factory=list)

    def seen(self, alertname: str, status: str, after: float = 0.0,
             **labels: str) -> float | None:
        """When an alert ``alertname`` with ``status`` (firing/resolved) first arrived."""
        for at, note in list(self.notes):
            for alert in note.get("alerts", []):
                got = alert.get("labels", {})
                if (at >= after and got.get("alertname") == alertname
                        and alert.get("status") == status
                        and all(got.get(k) == v for k, v in labels.items())):
                    return at
        return None


@pytest.fixture(scope="module")
def receiver() -> Iterator[Receiver]:
    notes: list[tuple[float, dict]] = []

    class Handler(BaseHTTPRequestHandler):
        def do_POST(self) -> None:  # noqa: N802 (http.server's name)
            body = self.rfile.read(int(self.headers.get("Content-Length", 0)))
            notes.append((time.monotonic(), json.loads(body)))
            self.send_response(200)
            self.end_headers()

        def log_message(self, *args: object) -> None:
            pass

    httpd = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
    threading.Thread(target=httpd.serve_forever, daemon=True).start()
    yield Receiver(f"http://127.0.0.1:{httpd.server_address[1]}/", notes)
    httpd.shutdown()


@dataclass
class Monitoring:
    settings: Settings  # the monitoring servers' (private state dir and ports)
    stack: Settings  # the shared servers' (the fixtures')
    worker_port: int

    def query(self, expr: str) -> list[dict]:
        url = (f"http://{self.settings.host}:{self.settings.prometheus_port}/api/v1/query?"
               + urllib.parse.urlencode({"query": expr}))
        with urllib.request.urlopen(url, timeout=5) as resp:
            return json.load(resp)["data"]["result"]

    def value(self, expr: str) -> float | None:
        result = self.query(expr)
        return float(result[0]["value"][1]) if result else None

    def alerts(self) -> list[dict]:
        """Every alert Prometheus holds now, pending or firing."""
        url = f"http://{self.settings.host}:{self.settings.prometheus_port}/api/v1/alerts"
        with urllib.request.urlopen(url, timeout=5) as resp:
            return json.load(resp)["data"]["alerts"]


@pytest.fixture(scope="module")
def monitoring(tmp_path_factory: pytest.TempPathFactory, kafka: KafkaInfo,
               elasticsearch: ElasticsearchInfo, triton: TritonInfo,
               receiver: Receiver) -> Iterator[Monitoring]:
    prom, am, es_exp, lag_exp, worker = free_ports(5)
    settings = replace(
        triton.settings, state_dir=Path(tmp_path_factory.mktemp("monitoring")),
        prometheus_port=prom, alertmanager_port=am, es_exporter_port=es_exp,
        lag_exporter_port=lag_exp, scrape_interval="1s", alert_webhook_url=receiver.url)
    started = []
    try:
        for kind in (LagExporter, ElasticsearchExporter, Alertmanager, Prometheus):
            srv = kind(settings)
            srv.start(timeout=60, owner="fixture")
            started.append(srv)
        yield Monitoring(settings, triton.settings, worker)
    finally:
        for srv in reversed(started):
            srv.stop()


def demo_posts() -> list[tuple[bytes, bytes]]:
    """The demo's posts (deploy/sample_data: 2,374 tweets and 200 Weibo posts)."""
    lines = [json.loads(line) for feed in ("tweets.jsonl", "weibo.jsonl")
             for line in (SAMPLES / feed).read_text().splitlines() if line.strip()]
    return [(x["id"].encode(), post_from_json(x).SerializeToString()) for x in lines]


def test_a_clean_stop_after_the_demo_burst_leaves_no_alert_and_a_killed_worker_pages(
        monitoring: Monitoring, receiver: Receiver) -> None:
    run = PipelineRun.create(monitoring.settings, "alert-clean",
                             NLP_STREAM_WEB_PORT=str(monitoring.worker_port))
    target = target_file(monitoring.settings.state_dir, f"127.0.0.1:{monitoring.worker_port}")
    try:
        run.start_worker()
        assert target.exists()
        wait_until(lambda: monitoring.value('up{job="worker"}') == 1.0, 60,
                   "Prometheus scraping the worker it discovered")
        posts = demo_posts()
        run.produce(posts)
        assert run.wait_indexed([k.decode() for k, _ in posts], timeout=600), run.log()[-3000:]
        lookups = metric_total(monitoring.worker_port, "nlp_hashtag_memory_seconds_count")
        fallbacks = metric_total(monitoring.worker_port,
                                 "nlp_hashtag_memory_fallbacks_total")

        assert run.stop_worker() == 0
        stopped = time.monotonic()
        assert not target.exists()
        wait_until(lambda: not monitoring.query('up{job="worker"}'), 30,
                   "the worker's target gone from Prometheus")
        seen: list[dict] = []
        while time.monotonic() - stopped < 70:  # past WorkerDown's `for: 1m`
            seen += monitoring.alerts()
            time.sleep(2)
        left = monitoring.alerts()
        print(json.dumps({"memory_lookups": lookups, "memory_fallbacks": fallbacks,
                          "alerts_after_clean_stop": sorted(
                              {a["labels"]["alertname"] for a in seen})}))
        # the memory answers the burst (before issue 85, 26 of 55 look-ups fell back; with the
        # deadline at the tagger's answer alone, 7 to 16 of 42-44 on a fresh stack; with the
        # generator's time as grace, 0 of 44 on 2026-12-07)
        assert lookups > 30 and fallbacks <= 0.02 * lookups
        assert not [a for a in seen if a["state"] == "firing"], seen
        assert left == [], left
        assert receiver.seen("WorkerDown", "firing") is None

        worker = run.start_worker()
        wait_until(lambda: monitoring.value('up{job="worker"}') == 1.0, 60,
                   "Prometheus scraping the restarted worker")
        killed = time.monotonic()
        run.kill_worker(worker)
        assert target.exists()  # nobody withdrew it: Prometheus keeps asking the dead port
        wait_until(lambda: receiver.seen("WorkerDown", "firing", killed) is not None, 120,
                   "WorkerDown notified")
        fired = receiver.seen("WorkerDown", "firing", killed)
        removed = time.monotonic()
        withdraw(target)  # what an operator does for a worker that will not come back
        wait_until(lambda: receiver.seen("WorkerDown", "resolved", removed) is not None, 60,
                   "WorkerDown resolved")
        print(json.dumps({"worker_down_after_kill_s": round(fired - killed, 1)}))
        assert 60 <= fired - killed < 90
    finally:
        run.cleanup()


def test_triton_killed_while_posts_flow_alerts_then_resolves_and_loses_nothing(
        monitoring: Monitoring, receiver: Receiver) -> None:
    run = PipelineRun.create(monitoring.settings, "alert-triton",
                             NLP_STREAM_WEB_PORT=str(monitoring.worker_port),
                             NLP_HASHTAG_MODEL="")
    try:
        run.start_worker()
        wait_until(lambda: monitoring.value('min(up{job=~"worker|triton"})') == 1.0, 60,
                   "Prometheus scraping the worker and Triton")
        ids = [f"alert-{i}" for i in range(300)]
        items = [(i.encode(), post_bytes(i, f"post {n} about the game tonight #nba"))
                 for n, i in enumerate(ids)]
        producer = threading.Thread(target=run.produce, args=(items,), kwargs={"rate": 4},
                                    daemon=True)
        producer.start()
        time.sleep(5)

        triton = server("triton", monitoring.stack)
        record = triton.record()
        assert record is not None, "the triton fixture's server is not running"
        killed = time.monotonic()
        os.kill(record.pid, signal.SIGKILL)
        wait_until(lambda: receiver.seen("TritonUnavailable", "firing", killed) is not None,
                   120, "TritonUnavailable notified")
        fired = receiver.seen("TritonUnavailable", "firing", killed)

        restarting = time.monotonic()
        triton.start(owner=record.owner)
        back = time.monotonic()
        # Prometheus may see Triton's metrics port, and Alertmanager send the resolution,
        # before ``start`` returns (it polls health once a second): look from the restart on
        wait_until(lambda: receiver.seen("TritonUnavailable", "resolved", restarting)
                   is not None, 120, "TritonUnavailable resolved")
        resolved = receiver.seen("TritonUnavailable", "resolved", restarting)

        producer.join()
        assert run.wait_indexed(ids, timeout=300), run.log()[-3000:]
        outcome = run.outcome(ids)
        print(json.dumps({"alert_delay_s": round(fired - killed, 1),
                          "triton_restart_s": round(back - restarting, 1),
                          "resolve_delay_s": round(resolved - back, 1),
                          "outcome": outcome}))
        assert fired - killed < 60
        assert resolved - back < 60
        assert outcome["lost"] == 0 and outcome["duplicate_documents"] == 0
        assert outcome["good_dead_lettered"] == 0, outcome["dead_letters_by_code"]
    finally:
        run.cleanup()


def test_undecodable_records_raise_the_dead_letter_alert_by_code(
        monitoring: Monitoring, receiver: Receiver) -> None:
    run = PipelineRun.create(monitoring.settings, "alert-poison",
                             NLP_STREAM_WEB_PORT=str(monitoring.worker_port),
                             NLP_HASHTAG_MODEL="")
    try:
        run.start_worker()
        wait_until(lambda: monitoring.value('up{job="worker"}') == 1.0, 60,
                   "Prometheus scraping the worker")
        time.sleep(3)  # a sample of the counters at 0 before the first dead letter
        sent = time.monotonic()
        run.produce([(f"bad-{i}".encode(), b"\xff\x00 not a post") for i in range(5)])
        wait_until(lambda: receiver.seen("DeadLettersArriving", "firing", sent,
                                         code="DECODE_ERROR") is not None,
                   90, "DeadLettersArriving notified")
        fired = receiver.seen("DeadLettersArriving", "firing", sent, code="DECODE_ERROR")
        print(json.dumps({"dead_letter_alert_delay_s": round(fired - sent, 1)}))
        assert fired - sent < 60
        assert len(run.dead_letters()) == 5
    finally:
        run.cleanup()


def test_a_stopped_worker_with_a_backlog_near_retention_warns_and_resolves_once_read(
        monitoring: Monitoring, receiver: Receiver) -> None:
    """The run's ``posts.raw`` keeps records 120 s: a backlog left unread for 60 s (half of
    it) warns; a worker started then reads it, the alert resolves, nothing is lost."""
    run = PipelineRun.create(monitoring.settings, "alert-backlog",
                             NLP_STREAM_WEB_PORT=str(monitoring.worker_port),
                             NLP_HASHTAG_MODEL="")
    topic = run.topics.posts_raw
    try:
        alter_topic_configs(run.bootstrap, topic, {"retention.ms": "120000"})
        first = [f"early-{i}" for i in range(20)]
        run.start_worker()
        run.produce([(i.encode(), post_bytes(i, f"post {i} before the stop")) for i in first])
        assert run.wait_indexed(first, timeout=120), run.log()[-3000:]
        assert run.stop_worker() == 0  # a clean stop: every offset committed

        backlog = [f"backlog-{i}" for i in range(200)]
        sent = time.monotonic()
        run.produce([(i.encode(), post_bytes(i, f"post {i} while no worker runs"))
                     for i in backlog])
        wait_until(lambda: receiver.seen("UnreadRecordsNearRetention", "firing", sent,
                                         topic=topic, severity="warning") is not None,
                   110, "UnreadRecordsNearRetention notified")
        fired = receiver.seen("UnreadRecordsNearRetention", "firing", sent, topic=topic)

        restarted = time.monotonic()
        run.start_worker()
        assert run.wait_indexed(first + backlog, timeout=120), run.log()[-3000:]
        read = time.monotonic()
        # the resolution may arrive before the test has seen every document searchable
        wait_until(lambda: receiver.seen("UnreadRecordsNearRetention", "resolved", restarted,
                                         topic=topic) is not None,
                   90, "UnreadRecordsNearRetention resolved")
        resolved = receiver.seen("UnreadRecordsNearRetention", "resolved", restarted,
                                 topic=topic)
        outcome = run.outcome(first + backlog)
        print(json.dumps({"backlog_warning_after_s": round(fired - sent, 1),
                          "resolved_after_read_s": round(resolved - read, 1),
                          "outcome": outcome}))
        assert 60 <= fired - sent < 100  # half of the retention, and a scrape or two
        assert outcome["lost"] == 0 and outcome["duplicate_documents"] == 0
        assert outcome["good_dead_lettered"] == 0, outcome["dead_letters_by_code"]
    finally:
        run.cleanup()


CONSOLE_GRAPHS = ("Throughput", "End-to-end delay", "Consumer lag", "Dead letters",
                  "Hashtag agreement", "Up: scraped targets")


@pytest.mark.skipif(shutil.which("chromium") is None,
                    reason="chromium missing: install deploy/ci-apt-packages.txt")
def test_the_console_page_draws_the_key_graphs_in_a_browser(monitoring: Monitoring) -> None:
    """Headless Chromium renders ``/consoles/pipeline.html`` after the faults above: every
    graph is drawn (an SVG each), and a screenshot is kept under the stack's state dir."""
    url = (f"http://{monitoring.settings.host}:{monitoring.settings.prometheus_port}"
           "/consoles/pipeline.html")
    browser = ["chromium", "--headless", "--no-sandbox", "--disable-gpu", "--hide-scrollbars",
               "--window-size=1400,1000", "--virtual-time-budget=8000"]
    dom = subprocess.run([*browser, "--dump-dom", url], capture_output=True, text=True,
                         timeout=120).stdout
    panels = {part.split("</h2>")[0]: part for part in dom.split("<h2>")[1:]}
    for title in CONSOLE_GRAPHS:
        panel = next((p for name, p in panels.items() if name.startswith(title)), "")
        if title in ("Throughput", "End-to-end delay", "Consumer lag", "Up: scraped targets"):
            assert "<svg" in panel, f"{title}: no graph drawn"
        else:  # no hashtags in this run, maybe no dead letters yet: drawn or said so
            assert "<svg" in panel or "No timeseries returned" in panel, title
    shot = monitoring.stack.state_dir / "screenshots" / "operations-console.png"
    shot.parent.mkdir(parents=True, exist_ok=True)
    subprocess.run([*browser, f"--screenshot={shot}", url], capture_output=True, timeout=120,
                   check=True)
    assert shot.stat().st_size > 10_000
    print(f"screenshot: {shot}")
