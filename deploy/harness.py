"""One isolated pipeline run on the local stack: its own topics, index prefix and consumer
group, Faust workers as subprocesses, a producer, and what a run is judged by.

Used by the fault suite (``python -m bench faults``) and the throughput bench: a run never
sees another run's data, so runs can follow each other (or the demo) on the same servers.

    run = PipelineRun.create(settings, "faults-worker_kill")
    worker = run.start_worker()
    run.produce(items, rate=100)
    run.wait_indexed(ids, timeout=300)
    outcome = run.outcome(ids)      # indexed, lost, duplicate documents, dead letters ...
    run.cleanup()
"""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import time
import uuid
from collections import Counter
from collections.abc import Callable, Iterable, Sequence
from dataclasses import dataclass, field
from pathlib import Path

from elasticsearch import TransportError

from deploy.process import stop_child
from services.config import PipelineConfig, Topics
from services.credentials import KafkaSecurity
from services.es.bulk import make_client
from services.es.template import template_name
from services.kafka_topics import ensure_topics
from services.limits import MAX_RAW_BYTES
from services.pb import messages_pb2 as pb
from services.settings import REPO_ROOT, Settings


@dataclass
class Worker:
    """A ``python -m services.stream worker`` subprocess and its log."""

    proc: subprocess.Popen[bytes]
    log_path: Path

    def log(self) -> str:
        return self.log_path.read_text(errors="replace")

    def alive(self) -> bool:
        return self.proc.poll() is None


@dataclass
class PipelineRun:
    """Topics ``<name>.posts.raw`` ..., indices ``<name>-posts-*``, group ``<name>``."""

    name: str
    settings: Settings
    env: dict[str, str]
    config: PipelineConfig
    log_dir: Path
    workers: list[Worker] = field(default_factory=list)

    @classmethod
    def create(cls, settings: Settings, label: str, log_dir: Path | None = None,
               **env: str) -> PipelineRun:
        """A fresh run named ``<label>-<random>``; ``env`` adds NLP_* overrides. Worker
        logs go to ``log_dir`` (default ``<state>/logs/runs``)."""
        name = f"{label}-{uuid.uuid4().hex[:6]}".lower()
        full_env = dict(os.environ, NLP_TOPIC_PREFIX=f"{name}.",
                        NLP_INDEX_PREFIX=f"{name}-posts",
                        NLP_ARTICLE_INDEX_PREFIX=f"{name}-articles", NLP_APP_ID=name,
                        NLP_STREAM_WEB_PORT="0", PYTHONUNBUFFERED="1")
        full_env.update(settings_env(settings))
        full_env.update(env)
        config = PipelineConfig.from_env(full_env)
        ensure_topics(config.servers.kafka_bootstrap, config.topics.all())
        log_dir = log_dir or settings.state_dir / "logs" / "runs"
        log_dir.mkdir(parents=True, exist_ok=True)
        return cls(name, settings, full_env, config, log_dir)

    @classmethod
    def attach(cls, settings: Settings, name: str) -> PipelineRun:
        """The pipeline as configured by the environment (default topic and index names,
        consumer group), e.g. for the demo: nothing is isolated and ``cleanup`` must not
        be called. ``name`` only names the worker logs (``<state>/logs/<name>-worker1.log``)."""
        full_env = dict(os.environ, PYTHONUNBUFFERED="1", **settings_env(settings))
        config = PipelineConfig.from_env(full_env)
        ensure_topics(config.servers.kafka_bootstrap, config.topics.all())
        return cls(name, settings, full_env, config, settings.state_dir / "logs")

    @property
    def topics(self) -> Topics:
        return self.config.topics

    @property
    def index_pattern(self) -> str:
        return self.config.index_pattern

    @property
    def article_index_pattern(self) -> str:
        return self.config.article_index_pattern

    @property
    def bootstrap(self) -> str:
        return self.config.servers.kafka_bootstrap

    @property
    def worker(self) -> Worker | None:
        """The most recently started worker."""
        return self.workers[-1] if self.workers else None

    def log(self) -> str:
        """The most recently started worker's log ("" before the first)."""
        return self.workers[-1].log() if self.workers else ""

    # Workers ---------------------------------------------------------------------------
    def start_worker(self, ready_timeout: float = 180) -> Worker:
        """Start a worker and wait until Faust says it is ready."""
        path = self.log_dir / f"{self.name}-worker{len(self.workers) + 1}.log"
        with path.open("wb") as log:
            proc = subprocess.Popen(
                [sys.executable, "-m", "services.stream", "worker", "-l", "info"],
                cwd=REPO_ROOT, env=self.env, stdout=log, stderr=subprocess.STDOUT)
        worker = Worker(proc, path)
        self.workers.append(worker)
        wait_until(lambda: "Worker]: Ready" in worker.log(), ready_timeout,
                   f"worker ready (log {path})", check=lambda: worker.alive())
        return worker

    def kill_worker(self, worker: Worker) -> None:
        """SIGKILL: no shutdown, no commit -- what a crash or an OOM kill does."""
        worker.proc.send_signal(signal.SIGKILL)
        worker.proc.wait()

    def stop_worker(self, timeout: float = 60) -> int:
        """SIGTERM the most recent worker (SIGKILL after ``timeout`` s); its exit code."""
        if self.worker is None:
            raise RuntimeError("no worker was started")
        return stop_child(self.worker.proc, timeout)

    def stop_workers(self) -> None:
        for worker in self.workers:
            if worker.alive():
                stop_child(worker.proc)

    # Input -------------------------------------------------------------------------------
    def produce(self, items: Iterable[tuple[bytes | None, bytes | None]], rate: float = 0,
                topic: str = "") -> int:
        """Send (key, value) records at ``rate`` per second (0: as fast as possible) and
        make sure the broker has every one (acks=all): a send that fails, e.g. while the
        broker is down in a fault scenario, is repeated until it succeeds, so a post that
        is missing later was lost by the pipeline, not by the producer. A repeated send
        may write a record twice (kafka-python's idempotent producer wedged after a broker
        restart here); the pipeline must index it once anyway. Returns how many."""
        from kafka import KafkaProducer

        producer = KafkaProducer(bootstrap_servers=self.config.servers.kafka_bootstrap,
                                 acks="all", linger_ms=5, max_request_size=MAX_RAW_BYTES,
                                 retries=3, max_block_ms=10_000, request_timeout_ms=10_000,
                                 delivery_timeout_ms=30_000,
                                 **KafkaSecurity.from_env(self.env).kafka_options())
        target = topic or self.topics.posts_raw
        began, sent = time.monotonic(), 0
        pending: list[tuple[bytes | None, bytes | None, object]] = []
        try:
            for key, value in items:
                pending.append((key, value, send_until_accepted(producer, target, key, value)))
                sent += 1
                if rate:
                    ahead = began + sent / rate - time.monotonic()
                    if ahead > 0:
                        time.sleep(ahead)
            while pending:
                flush_quietly(producer)
                failed = [(k, v) for k, v, future in pending if future.failed()]  # type: ignore[attr-defined]
                waiting = [(k, v, f) for k, v, f in pending if not f.is_done]  # type: ignore[attr-defined]
                pending = waiting + [(k, v, send_until_accepted(producer, target, k, v))
                                     for k, v in failed]
        finally:
            producer.close()
        return sent

    # What came out -------------------------------------------------------------------------
    def count_indexed(self, ids: Sequence[str], refresh: bool = True, pattern: str = "",
                      since: str = "") -> int:
        """Searchable documents among ``ids`` (0 before the first index exists) in the
        post indices (or ``pattern``), processed at or after ``since`` (ISO time) if given,
        so documents of an earlier run with the same ids do not count. ``refresh=False``
        leaves it to the index's own 1 s refresh, as users see it (a benchmark must not
        pay for a forced refresh on every poll)."""
        pattern = pattern or self.index_pattern
        es = make_client(self.config.servers.es_url)
        try:
            if refresh:
                es.indices.refresh(index=pattern, allow_no_indices=True,
                                   ignore_unavailable=True)
            filters: list[dict] = [{"ids": {"values": list(ids)}}]
            if since:
                filters.append({"range": {"processed_at": {"gte": since}}})
            body = {"query": {"bool": {"filter": filters}}}
            return int(es.count(index=pattern, body=body, allow_no_indices=True,
                                ignore_unavailable=True)["count"])
        except Exception:  # noqa: BLE001 - down (a fault) or no index yet: nothing found
            return 0
        finally:
            es.close()

    def count(self, pattern: str = "") -> int:
        """Searchable documents in the run's post indices (or ``pattern``); 0 before the
        first index exists or while a new one has no active shard yet."""
        es = make_client(self.config.servers.es_url)
        pattern = pattern or self.index_pattern
        try:
            es.indices.refresh(index=pattern, allow_no_indices=True, ignore_unavailable=True)
            return int(es.count(index=pattern, allow_no_indices=True,
                                ignore_unavailable=True)["count"])
        except TransportError as exc:
            if exc.status_code == 503:
                return 0
            raise
        finally:
            es.close()

    def document(self, doc_id: str, pattern: str = "") -> dict | None:
        """The ``_source`` of ``doc_id`` in the run's post indices (or ``pattern``)."""
        es = make_client(self.config.servers.es_url)
        pattern = pattern or self.index_pattern
        try:
            es.indices.refresh(index=pattern, allow_no_indices=True, ignore_unavailable=True)
            hits = es.search(index=pattern, query={"ids": {"values": [doc_id]}},
                             allow_no_indices=True, ignore_unavailable=True)["hits"]["hits"]
        except TransportError as exc:
            if exc.status_code == 503:
                return None
            raise
        finally:
            es.close()
        return hits[0]["_source"] if hits else None

    def wait_indexed(self, ids: Sequence[str], timeout: float,
                     progress: Callable[[int], None] | None = None, poll: float = 1.0,
                     refresh: bool = True, pattern: str = "", since: str = "") -> bool:
        """Poll until every id is searchable (``count_indexed``'s ``pattern`` and
        ``since``); False after ``timeout`` seconds. Raises if every worker of the run has
        exited (nothing would ever be indexed)."""
        deadline = time.monotonic() + timeout
        while time.monotonic() < deadline:
            found = self.count_indexed(ids, refresh, pattern, since)
            if progress is not None:
                progress(found)
            if found >= len(ids):
                return True
            if self.workers and not any(w.alive() for w in self.workers):
                raise RuntimeError(f"every worker exited; see {self.workers[-1].log_path}")
            time.sleep(poll)
        return False

    def document_ids(self) -> Counter[str]:
        """Every document ``_id`` in the run's indices, with how often it occurs."""
        from elasticsearch.helpers import scan

        es = make_client(self.config.servers.es_url)
        try:
            es.indices.refresh(index=self.index_pattern, allow_no_indices=True,
                               ignore_unavailable=True)
            hits = scan(es, index=self.index_pattern, query={"query": {"match_all": {}}},
                        _source=False, ignore_unavailable=True)
            return Counter(hit["_id"] for hit in hits)
        finally:
            es.close()

    def sources(self, fields: Sequence[str], pattern: str = "") -> dict[str, dict]:
        """``_id`` -> the requested ``_source`` fields of every document of the run in the
        post indices (or ``pattern``)."""
        from elasticsearch.helpers import scan

        pattern = pattern or self.index_pattern
        es = make_client(self.config.servers.es_url)
        try:
            es.indices.refresh(index=pattern, allow_no_indices=True, ignore_unavailable=True)
            hits = scan(es, index=pattern, query={"query": {"match_all": {}}},
                        _source=list(fields), ignore_unavailable=True)
            return {hit["_id"]: hit.get("_source", {}) for hit in hits}
        finally:
            es.close()

    def topic_records(self, topic: str) -> list[tuple[bytes | None, bytes | None]]:
        """Every (key, value) on ``topic`` from the beginning."""
        from kafka import KafkaConsumer

        consumer = KafkaConsumer(topic, bootstrap_servers=self.config.servers.kafka_bootstrap,
                                 group_id=None, enable_auto_commit=False,
                                 auto_offset_reset="earliest", consumer_timeout_ms=3000,
                                 fetch_max_bytes=4 * MAX_RAW_BYTES,
                                 max_partition_fetch_bytes=2 * MAX_RAW_BYTES,
                                 **KafkaSecurity.from_env(self.env).kafka_options())
        try:
            return [(r.key, r.value) for r in consumer]
        finally:
            consumer.close()

    def dead_letters(self) -> list[pb.DeadLetter]:
        """The dead letters of the posts flow (raw and tagged)."""
        return [pb.DeadLetter.FromString(value or b"")
                for topic in (self.topics.posts_raw_dlq, self.topics.posts_tagged_dlq)
                for _, value in self.topic_records(topic)]

    def outcome(self, good_ids: Sequence[str], malformed: int = 0,
                bad_prefix: bytes = b"bad-") -> dict:
        """How the run treated its input: every good post indexed once, none lost or
        dead-lettered, each of the ``malformed`` records (keys starting ``bad_prefix``)
        dead-lettered once with a code."""
        good = set(good_ids)
        docs = self.document_ids()
        tagged = Counter(key.decode("utf-8", "replace") for key, _ in
                         self.topic_records(self.topics.posts_tagged) if key)
        letters = self.dead_letters()
        good_letters = [x for x in letters if x.original_key.decode("utf-8", "replace") in good]
        bad_letters = {(x.source_topic, x.partition, x.offset) for x in letters
                       if x.original_key.startswith(bad_prefix)}
        indexed = sum(1 for i in good if docs.get(i))
        return {
            "posts": len(good),
            "indexed": indexed,
            "lost": len(good) - indexed,
            "duplicate_documents": sum(n - 1 for n in docs.values() if n > 1),
            "duplicates_on_tagged_topic": sum(n - 1 for i, n in tagged.items()
                                              if n > 1 and i in good),
            "good_dead_lettered": len(good_letters),
            "malformed": malformed,
            "malformed_dead_lettered": len(bad_letters),
            "dead_letters_by_code": dict(sorted(Counter(x.error_code for x in letters).items())),
        }

    def cleanup(self) -> None:
        """Stop the workers; delete the run's indices, index templates, topics and
        consumer group."""
        self.stop_workers()
        es = make_client(self.config.servers.es_url)
        try:
            es.indices.delete(index=f"{self.name}-*", allow_no_indices=True,
                              ignore_unavailable=True)
            for prefix in (self.config.index_prefix, self.config.article_index_prefix):
                es.indices.delete_index_template(name=template_name(prefix), ignore=[404])
        except Exception:  # noqa: BLE001 - best effort
            pass
        finally:
            es.close()
        from kafka import KafkaAdminClient

        try:
            admin = KafkaAdminClient(bootstrap_servers=self.config.servers.kafka_bootstrap,
                                     **KafkaSecurity.from_env(self.env).kafka_options())
            try:
                admin.delete_topics(self.topics.all())
                admin.delete_consumer_groups([self.config.app_id])
            finally:
                admin.close()
        except Exception:  # noqa: BLE001 - best effort
            pass


def flush_quietly(producer, timeout: float = 60.0) -> None:
    """Wait for outstanding sends; a timeout just means "look again" to the caller."""
    from kafka.errors import KafkaTimeoutError

    try:
        producer.flush(timeout=timeout)
    except KafkaTimeoutError:
        time.sleep(1.0)


def send_until_accepted(producer, topic: str, key: bytes | None, value: bytes | None):
    """``producer.send``, repeated while the broker cannot take it (metadata timeout)."""
    from kafka.errors import KafkaTimeoutError

    while True:
        try:
            return producer.send(topic, key=key, value=value)
        except KafkaTimeoutError:
            time.sleep(1.0)


def settings_env(settings: Settings) -> dict[str, str]:
    """NLP_* variables that point a worker at ``settings``' servers."""
    return {
        "NLP_KAFKA_HOST": settings.kafka_host, "NLP_KAFKA_PORT": str(settings.kafka_port),
        "NLP_ES_HOST": settings.es_host, "NLP_ES_PORT": str(settings.es_port),
        "NLP_TRITON_HOST": settings.triton_host,
        "NLP_TRITON_GRPC_PORT": str(settings.triton_grpc_port),
        "NLP_TRITON_HTTP_PORT": str(settings.triton_http_port),
        "NLP_STATE_DIR": str(settings.state_dir),
    }


def wait_until(cond: Callable[[], bool], timeout: float, what: str,
               check: Callable[[], bool] = lambda: True) -> None:
    """Poll ``cond``; raise TimeoutError after ``timeout`` s or RuntimeError if ``check``
    (e.g. "the worker is alive") turns false."""
    deadline = time.monotonic() + timeout
    while not cond():
        if not check():
            raise RuntimeError(f"gave up waiting for {what}: the process exited")
        if time.monotonic() > deadline:
            raise TimeoutError(f"{what}: not within {timeout:.0f}s")
        time.sleep(0.25)


def send_stamped(bootstrap: str, topic: str, posts: Sequence[tuple[str, int]]) -> None:
    """Send (id, Kafka timestamp in ms) posts as a replay tool does: each record stamped
    with its post's creation time, which is also the post's ``created_at`` (never in the
    future, which the worker refuses); every send acknowledged by the broker."""
    from kafka import KafkaProducer

    producer = KafkaProducer(bootstrap_servers=bootstrap, acks="all", linger_ms=5)
    now = int(time.time())
    try:
        futures = [producer.send(topic, key=post_id.encode(), timestamp_ms=stamp,
                                 value=post_bytes(post_id, f"backfilled post {n}",
                                                  created_at=min(stamp // 1000, now)))
                   for n, (post_id, stamp) in enumerate(posts)]
        producer.flush()
        for future in futures:
            future.get(timeout=60)
    finally:
        producer.close()


def deleted_by_retention(bootstrap: str, topic: str) -> int:
    """Records retention has deleted from ``topic`` (its partitions' start offsets)."""
    from kafka import KafkaConsumer, TopicPartition

    consumer = KafkaConsumer(bootstrap_servers=bootstrap)
    try:
        partitions = [TopicPartition(topic, p) for p in consumer.partitions_for_topic(topic)]
        return sum(consumer.beginning_offsets(partitions).values())
    finally:
        consumer.close()


def post_bytes(post_id: str, text: str, created_at: int = 1_700_000_000) -> bytes:
    """A valid English Twitter post."""
    post = pb.Post(id=post_id, platform=pb.TWITTER, lang="en", text=text)
    post.created_at.FromSeconds(created_at)
    return post.SerializeToString()


def metric_total(port: int, name: str) -> float:
    """The sum of a sample's values (``name`` as exposed, e.g. ``..._total``) on the
    ``/metrics`` page of a worker's web port on loopback."""
    import urllib.request

    from prometheus_client.parser import text_string_to_metric_families

    with urllib.request.urlopen(f"http://127.0.0.1:{port}/metrics", timeout=5) as resp:
        families = text_string_to_metric_families(resp.read().decode())
        return sum(s.value for f in families for s in f.samples if s.name == name)
