"""The fault suite: posts stream through the real local stack while something breaks.

    python -m bench faults [--posts 5000] [--rate 100] [--only worker_kill,broker_down]
                           [--broker-down 90] [--es-fault 30]

Every scenario runs on its own topics and indices (``deploy.harness``) with a worker
started as in production, feeds ``--posts`` sample tweets at ``--rate`` per second, breaks
something about a third of the way in, repairs it the way an operator would (for servers:
``deploy.local up``, i.e. ``Server.start``), waits until every good post is searchable, and
reports, per scenario: posts, indexed, lost, duplicate documents, duplicates on
posts.tagged, good posts dead-lettered, malformed records and how many were dead-lettered,
dead letters by code, the seconds until processing resumed after the repair
(``recover_s``), and ``targets_met``. Scenarios:

- ``worker_kill``: SIGKILL the worker, start a new one;
- ``triton_kill`` / ``elasticsearch_kill``: SIGKILL the server, ``up`` it again;
- ``broker_down``: SIGKILL the Kafka broker, keep it down ``--broker-down`` s, ``up`` it;
- ``es_429``: Elasticsearch answers 429 to everything for ``--es-fault`` s (a proxy);
- ``es_slow``: for ``--es-fault`` s every Elasticsearch request is held 35 s before it is
  forwarded, longer than the worker's 30 s client timeout (an overloaded node): requests
  time out, are retried, and the held originals still arrive later;
- ``model_reload``: unload the POS model from Triton for 10 s, load it again;
- ``rebalance``: two workers on 4 partitions; one killed, later a third one added;
- ``rejoin``: three workers; one killed and its replacement started 3 s later, before the
  dead one's session expires, so the group rebalances twice in a row (what a restart
  policy does, and Compose's test); twice;
- ``malformed``: no fault, input produced at full speed, with 10 % malformed records of
  every kind (``malformed_records``), alternating with the same run without them
  (``clean``), ``--pairs`` times each; their mean throughputs are compared.

The servers must be up (``python -m deploy.local up``); the scenarios that kill a server
start it again before they return. Prints one JSON object; ``all_targets_met`` sums it up.
"""

from __future__ import annotations

import http.client
import http.server
import json
import os
import random
import signal
import socketserver
import sys
import threading
import time
from collections.abc import Callable, Iterator
from dataclasses import dataclass, field

from deploy.harness import PipelineRun, post_bytes, wait_until
from deploy.stack import server
from deploy.testing import free_ports
from nlp_models import registry
from services.model_control import admin_headers
from services.pb import messages_pb2 as pb
from services.settings import REPO_ROOT, Settings

SAMPLE = REPO_ROOT / "deploy" / "sample_data" / "tweets.jsonl"
MALFORMED_SHARE = 0.10
#: Targets of issue 17: each server back and processing within this long of its repair.
RECOVER_TARGET_S = 60.0
#: ... and the stream keeps its throughput within this share with 10 % malformed input.
THROUGHPUT_TARGET = 0.20


def good_posts(n: int, run: str) -> list[tuple[str, bytes]]:
    texts = [json.loads(line)["text"] for line in SAMPLE.read_text().splitlines()]
    return [(f"{run}-{i}", post_bytes(f"{run}-{i}", texts[i % len(texts)])) for i in range(n)]


def malformed_records(n: int, seed: int = 0) -> list[tuple[bytes | None, bytes | None]]:
    """``n`` records of every kind that once failed somewhere, keys starting ``bad-``."""
    rng = random.Random(seed)

    def post(**fields: object) -> pb.Post:
        p = pb.Post(id="bad-post", platform=pb.TWITTER, lang="en", text="a post")
        p.created_at.FromSeconds(1_700_000_000)
        for name, value in fields.items():
            if name == "attributes":
                p.attributes.update(value)  # type: ignore[arg-type]
            elif name == "seconds":
                p.created_at.seconds = value  # type: ignore[assignment]
            elif name == "nanos":
                p.created_at.nanos = value  # type: ignore[assignment]
            else:
                setattr(p, name, value)
        return p

    def valid_utf8_broken() -> bytes:
        return post(text="café").SerializeToString().replace("é".encode(), b"\xc3\x28")

    kinds: list[Callable[[], tuple[bytes | None, bytes | None]]] = [
        lambda: (None, rng.randbytes(rng.randint(1, 200))),  # not protobuf
        lambda: (None, valid_utf8_broken()),
        lambda: (None, post(text="").SerializeToString()),
        lambda: (None, post(text="\u200b\ufeff\u2060").SerializeToString()),
        lambda: (None, post(id="").SerializeToString()),
        lambda: (None, post(platform=pb.PLATFORM_UNSPECIFIED).SerializeToString()),
        lambda: (None, post(platform=rng.randint(3, 1000)).SerializeToString()),
        lambda: (None, post(seconds=253_402_300_800 + rng.randint(0, 10**9)).SerializeToString()),
        lambda: (None, post(seconds=-rng.randint(1, 10**9)).SerializeToString()),
        lambda: (None, post(nanos=2_000_000_000).SerializeToString()),
        lambda: (None, post(id="bad\x00id").SerializeToString()),
        lambda: (None, post(lang="en; rm -rf").SerializeToString()),
        lambda: (None, post(attributes={"a.b": "x"}).SerializeToString()),
        lambda: (None, post(attributes={f"k{i}": "v" for i in range(100)}).SerializeToString()),
        lambda: (None, None),  # a tombstone
    ]
    out = []
    for i in range(n):
        key, value = rng.choice(kinds)()
        out.append((key or f"bad-{i}".encode(), value))
    for i in range(min(3, n)):  # 1.5 MB keys: a few, they are heavy for the broker
        out[i] = (b"bad-" + b"L" * 1_500_000 + str(i).encode(), post().SerializeToString())
    return out


def interleave(good: list[tuple[str, bytes]], bad: list[tuple[bytes | None, bytes | None]],
               seed: int = 0) -> list[tuple[bytes | None, bytes | None]]:
    """Good posts in order, bad records at random places between them."""
    rng = random.Random(seed)
    items: list[tuple[bytes | None, bytes | None]] = [(k.encode(), v) for k, v in good]
    for record in bad:
        items.insert(rng.randint(0, len(items)), record)
    return items


#: How long ``es_slow`` holds each request: beyond the worker's 30 s Elasticsearch timeout.
SLOW_DELAY_S = 35.0


class ElasticsearchFaultProxy(socketserver.ThreadingMixIn, http.server.HTTPServer):
    """Forwards HTTP to Elasticsearch; while ``fault`` is "429" it answers 429 Too Many
    Requests, while it is "slow" it holds each request whose path contains ``slow_paths``
    (default: every request) ``delay`` seconds before forwarding."""

    daemon_threads = True

    def __init__(self, port: int, es_host: str, es_port: int, slow_paths: str = "",
                 delay: float = SLOW_DELAY_S) -> None:
        self.target = (es_host, es_port)
        self.fault: str | None = None
        self.slow_paths, self.delay = slow_paths, delay
        proxy = self

        class Handler(http.server.BaseHTTPRequestHandler):
            def log_message(self, *args: object) -> None:
                pass

            def relay(self) -> None:
                body = self.rfile.read(int(self.headers.get("Content-Length") or 0))
                if proxy.fault == "slow" and proxy.slow_paths in self.path:
                    time.sleep(proxy.delay)
                if proxy.fault == "429":
                    payload = json.dumps({"error": "es_rejected_execution_exception",
                                          "status": 429}).encode()
                    self.send_response(429)
                    self.send_header("Content-Type", "application/json")
                    self.send_header("Content-Length", str(len(payload)))
                    self.end_headers()
                    self.wfile.write(payload)
                    return
                conn = http.client.HTTPConnection(*proxy.target, timeout=60)
                headers = {k: v for k, v in self.headers.items() if k.lower() != "host"}
                conn.request(self.command, self.path, body=body or None, headers=headers)
                resp = conn.getresponse()
                data = resp.read()
                self.send_response(resp.status)
                for key, value in resp.getheaders():
                    if key.lower() not in ("transfer-encoding", "connection", "content-length"):
                        self.send_header(key, value)
                self.send_header("Content-Length", str(len(data)))
                self.end_headers()
                self.wfile.write(data)
                conn.close()

            do_GET = do_PUT = do_POST = do_DELETE = do_HEAD = relay

        super().__init__(("127.0.0.1", port), Handler)
        threading.Thread(target=self.serve_forever, daemon=True).start()

    def handle_error(self, request: object, client_address: object) -> None:
        """A client that gave up on a held request (es_slow) is expected, not an error."""
        if not isinstance(sys.exc_info()[1], ConnectionError):
            super().handle_error(request, client_address)


@dataclass
class Context:
    """What a fault sees: the run, the settings, the posts' ids and the suite's options."""

    run: PipelineRun
    settings: Settings
    ids: list[str]
    options: dict
    notes: dict = field(default_factory=dict)


def resumed_after(ctx: Context, since: float, timeout: float = 600) -> float | None:
    """Seconds from ``since`` until one more post is searchable (None: none were left)."""
    baseline = ctx.run.count_indexed(ctx.ids)
    while time.monotonic() - since < timeout:
        if baseline >= len(ctx.ids):
            return None
        if ctx.run.count_indexed(ctx.ids) > baseline:
            return round(time.monotonic() - since, 1)
        time.sleep(0.5)
    return None


def kill_server(name: str, settings: Settings, down_s: float, ctx: Context) -> float | None:
    srv = server(name, settings)
    record = srv.record()
    if record is None:
        raise RuntimeError(f"{name} is not running; start the stack with deploy.local up")
    os.kill(record.pid, signal.SIGKILL)
    time.sleep(down_s)
    began = time.monotonic()
    srv.start(owner=record.owner)
    ctx.notes["restart_s"] = round(time.monotonic() - began, 1)
    return resumed_after(ctx, began)


def worker_kill(ctx: Context) -> float | None:
    ctx.run.kill_worker(ctx.run.workers[0])
    time.sleep(2)
    began = time.monotonic()
    ctx.run.start_worker()
    return resumed_after(ctx, began)


def triton_kill(ctx: Context) -> float | None:
    return kill_server("triton", ctx.settings, 5, ctx)


def elasticsearch_kill(ctx: Context) -> float | None:
    return kill_server("elasticsearch", ctx.settings, 5, ctx)


def broker_down(ctx: Context) -> float | None:
    return kill_server("kafka", ctx.settings, ctx.options["broker_down"], ctx)


def es_fault(kind: str) -> Callable[[Context], float | None]:
    """Elasticsearch (behind the run's proxy) misbehaves as ``kind`` for ``--es-fault`` s."""
    def fault(ctx: Context) -> float | None:
        proxy: ElasticsearchFaultProxy = ctx.notes.pop("proxy")
        proxy.fault = kind
        time.sleep(ctx.options["es_fault"])
        proxy.fault = None
        return resumed_after(ctx, time.monotonic())
    return fault


def model_reload(ctx: Context) -> float | None:
    import tritonclient.http as httpclient

    client = httpclient.InferenceServerClient(ctx.settings.triton_http_url)
    client.unload_model(registry.POS.name, headers=admin_headers(ctx.settings))
    time.sleep(10)
    began = time.monotonic()
    client.load_model(registry.POS.name, headers=admin_headers(ctx.settings))
    return resumed_after(ctx, began)


def rebalance(ctx: Context) -> float | None:
    ctx.run.kill_worker(ctx.run.workers[0])
    time.sleep(ctx.options["feed_s"] * 0.3)
    began = time.monotonic()
    ctx.run.start_worker()
    return resumed_after(ctx, began)


def rejoin(ctx: Context) -> float | None:
    began = time.monotonic()
    for _ in range(2):
        ctx.run.kill_worker(next(w for w in ctx.run.workers if w.alive()))
        time.sleep(3)
        began = time.monotonic()
        ctx.run.start_worker()  # ready once the group has rebalanced without the dead one
    return resumed_after(ctx, began)


@dataclass(frozen=True)
class Scenario:
    name: str
    fault: Callable[[Context], float | None] | None
    workers: int = 1
    malformed: bool = False
    full_speed: bool = False


SCENARIOS = [
    Scenario("worker_kill", worker_kill),
    Scenario("triton_kill", triton_kill),
    Scenario("elasticsearch_kill", elasticsearch_kill),
    Scenario("broker_down", broker_down),
    Scenario("es_429", es_fault("429")),
    Scenario("es_slow", es_fault("slow")),
    Scenario("model_reload", model_reload),
    Scenario("rebalance", rebalance, workers=2),
    Scenario("rejoin", rejoin, workers=3),
    Scenario("malformed", None, malformed=True, full_speed=True),
]


def run_scenario(sc: Scenario, settings: Settings, posts: int, rate: float,
                 options: dict) -> dict:
    env: dict[str, str] = {}
    proxy = None
    if sc.name.startswith("es_"):
        [port] = free_ports(1)
        proxy = ElasticsearchFaultProxy(port, settings.es_host, settings.es_port)
        env["NLP_ES_PORT"] = str(port)
    run = PipelineRun.create(settings, f"faults-{sc.name.replace('_', '')}", **env)
    started = time.monotonic()
    try:
        for _ in range(sc.workers):
            run.start_worker()
        good = good_posts(posts, run.name)
        ids = [k for k, _ in good]
        bad = malformed_records(int(posts * MALFORMED_SHARE / (1 - MALFORMED_SHARE))) \
            if sc.malformed else []
        items = interleave(good, bad)
        speed = 0 if sc.full_speed else rate
        ctx = Context(run, settings, ids, dict(options, feed_s=len(items) / rate))
        if proxy is not None:
            ctx.notes["proxy"] = proxy
        feed_began = time.monotonic()
        feeder = threading.Thread(target=run.produce, args=(items, speed), daemon=True)
        feeder.start()
        recover_s = None
        if sc.fault is not None:
            wait_until(lambda: run.count_indexed(ids) >= posts * 0.3, 600,
                       f"{sc.name}: a third of the posts indexed before the fault")
            recover_s = sc.fault(ctx)
        feeder.join()
        complete = run.wait_indexed(ids, timeout=options["timeout"])
        seconds = time.monotonic() - feed_began
        time.sleep(3)  # a late redelivery would show up as a duplicate now
        out = run.outcome(ids, malformed=len(bad))
        out.update(complete=complete, seconds=round(seconds, 1),
                   posts_per_s=round(posts / seconds, 1), recover_s=recover_s, **{
                       k: v for k, v in ctx.notes.items() if k != "proxy"})
        return out
    finally:
        run.cleanup()
        if proxy is not None:
            proxy.shutdown()
            proxy.server_close()
        print(f"  {sc.name}: done in {time.monotonic() - started:.0f}s", file=sys.stderr,
              flush=True)


def targets(name: str, out: dict) -> list[str]:
    """Which of issue 17's targets this scenario misses (empty: all met)."""
    missed = []
    for key in ("lost", "duplicate_documents", "good_dead_lettered"):
        if out[key]:
            missed.append(f"{key}={out[key]}")
    if out["malformed"] != out["malformed_dead_lettered"]:
        missed.append(f"malformed {out['malformed']} vs dead-lettered "
                      f"{out['malformed_dead_lettered']}")
    if out.get("recover_s") is not None and out["recover_s"] > RECOVER_TARGET_S:
        missed.append(f"recover_s={out['recover_s']}")
    return missed


def iter_selected(only: str) -> Iterator[Scenario]:
    names = [n for n in only.split(",") if n]
    unknown = set(names) - {s.name for s in SCENARIOS}
    if unknown:
        raise SystemExit(f"unknown scenarios {sorted(unknown)}; "
                         f"choose from {[s.name for s in SCENARIOS]}")
    yield from (s for s in SCENARIOS if not names or s.name in names)


def throughput_pairs(sc: Scenario, settings: Settings, posts: int, rate: float,
                     options: dict, pairs: int) -> dict[str, dict]:
    """``clean`` and ``sc`` (malformed input) alternately, ``pairs`` times each, so both
    see the same machine (other work on the cores changes throughput by tens of per
    cent within minutes); ``throughput_vs_clean`` is the ratio of their mean rates."""
    clean_sc = Scenario("clean", None, full_speed=True)
    runs: dict[str, list[dict]] = {"clean": [], sc.name: []}
    for i in range(pairs):
        for s in (clean_sc, sc):
            print(f"scenario {s.name} {i + 1}/{pairs} ({posts} posts)", file=sys.stderr,
                  flush=True)
            runs[s.name].append(run_scenario(s, settings, posts, rate, options))
    results = {}
    for name, outs in runs.items():
        out = dict(outs[-1])
        for key in ("indexed", "lost", "duplicate_documents", "duplicates_on_tagged_topic",
                    "good_dead_lettered", "malformed", "malformed_dead_lettered", "posts"):
            out[key] = sum(o[key] for o in outs)
        out["complete"] = all(o["complete"] for o in outs)
        out["posts_per_s_runs"] = [o["posts_per_s"] for o in outs]
        out["posts_per_s"] = round(sum(out["posts_per_s_runs"]) / len(outs), 1)
        out["missed_targets"] = targets(name, out)
        results[name] = out
    ratio = results[sc.name]["posts_per_s"] / max(results["clean"]["posts_per_s"], 1e-9)
    results[sc.name]["throughput_vs_clean"] = round(ratio, 3)
    if ratio < 1 - THROUGHPUT_TARGET:
        results[sc.name]["missed_targets"].append(f"throughput_vs_clean={ratio:.2f}")
    return results


def run(posts: int, rate: float, only: str = "", broker_down_s: float = 90,
        es_fault_s: float = 30, timeout: float = 900, pairs: int = 2) -> dict:
    settings = Settings.from_env()
    options = {"broker_down": broker_down_s, "es_fault": es_fault_s, "timeout": timeout}
    results: dict[str, dict] = {}
    for sc in iter_selected(only):
        if sc.malformed:
            results.update(throughput_pairs(sc, settings, posts, rate, options, pairs))
            continue
        print(f"scenario {sc.name} ({posts} posts)", file=sys.stderr, flush=True)
        out = run_scenario(sc, settings, posts, rate, options)
        out["missed_targets"] = targets(sc.name, out)
        results[sc.name] = out
    return {
        "posts": posts, "rate": rate, "broker_down_s": broker_down_s, "es_fault_s": es_fault_s,
        "scenarios": results,
        "all_targets_met": all(not r["missed_targets"] for r in results.values()),
    }
