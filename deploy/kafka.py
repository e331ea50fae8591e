"""One Apache Kafka 3.9 broker in KRaft mode (combined broker + controller) from Maven jars.

Kafka stays on 3.9.x because Faust's client, aiokafka, has no confirmed support for the
protocol versions Kafka 4.0 removed (KIP-896); see docs/design.md.
"""

from __future__ import annotations

import base64
import subprocess
import uuid

from deploy import jvm
from deploy.base import Port, Server
from deploy.process import DeployError, port_in_use

LOG4J = """\
log4j.rootLogger=INFO, stdout
log4j.appender.stdout=org.apache.log4j.ConsoleAppender
log4j.appender.stdout.layout=org.apache.log4j.PatternLayout
log4j.appender.stdout.layout.ConversionPattern=[%d] %p %m (%c)%n
log4j.logger.kafka=INFO
log4j.logger.org.apache.kafka=INFO
log4j.logger.state.change.logger=WARN
log4j.logger.kafka.request.logger=WARN
"""


class Kafka(Server):
    """Single-node KRaft cluster on 127.0.0.1 with local-development topic defaults."""

    name = "kafka"
    #: how often the broker deletes segments past retention (Kafka's default, 5 min);
    #: tests of retention shorten it on a broker of their own
    retention_check_ms = 300_000

    def ports(self) -> list[Port]:
        s = self.settings
        return [
            Port("broker", s.kafka_port, "NLP_KAFKA_PORT"),
            Port("controller", s.kafka_controller_port, "NLP_KAFKA_CONTROLLER_PORT"),
        ]

    def server_properties(self) -> dict[str, str]:
        """Broker config: one node, replication factor 1, messages up to 2 MiB."""
        s = self.settings
        return {
            "process.roles": "broker,controller",
            "node.id": "1",
            "controller.quorum.voters": f"1@{s.host}:{s.kafka_controller_port}",
            "listeners": f"PLAINTEXT://{s.host}:{s.kafka_port},CONTROLLER://{s.host}:{s.kafka_controller_port}",
            "advertised.listeners": f"PLAINTEXT://{s.host}:{s.kafka_port}",
            "listener.security.protocol.map": "PLAINTEXT:PLAINTEXT,CONTROLLER:PLAINTEXT",
            "controller.listener.names": "CONTROLLER",
            "inter.broker.listener.name": "PLAINTEXT",
            "log.dirs": str(self.home / "data"),
            "num.partitions": "4",
            "auto.create.topics.enable": "true",
            "default.replication.factor": "1",
            "offsets.topic.replication.factor": "1",
            "transaction.state.log.replication.factor": "1",
            "transaction.state.log.min.isr": "1",
            "group.initial.rebalance.delay.ms": "0",
            # texts up to ~1 MB plus protobuf framing
            "message.max.bytes": "2097152",
            "replica.fetch.max.bytes": "2097152",
            # a 2-core machine shared with Elasticsearch and Triton
            "num.network.threads": "2",
            "num.io.threads": "2",
            "num.recovery.threads.per.data.dir": "1",
            # Retention counts from each record's arrival, not from the producer's clock:
            # records stamped with their posts' old creation times (a backfill) would
            # otherwise be deleted at the next retention check, before any worker read
            # them (services/kafka_topics.py sets the same on every pipeline topic).
            "log.message.timestamp.type": "LogAppendTime",
            "log.retention.hours": "24",
            "log.retention.check.interval.ms": str(self.retention_check_ms),
            "log.segment.bytes": str(64 * 1024 * 1024),
            # The log cleaner (compacted topics: consumer offsets) keeps this buffer on the
            # heap for good: Kafka's default 128 MiB was most of the broker's live heap here
            # (162 of 256 MiB after a full GC); 16 MiB still maps ~630,000 keys per pass
            # (24 bytes a key, 90 % load).
            "log.cleaner.dedupe.buffer.size": str(16 * 1024 * 1024),
        }

    def install(self) -> None:
        self.java = jvm.find_java(17)
        self.classpath = jvm.classpath("kafka", self.settings.state_dir / "jars")

    def prepare(self) -> None:
        self.install()
        self.home.mkdir(parents=True, exist_ok=True)
        props = "".join(f"{k}={v}\n" for k, v in self.server_properties().items())
        (self.home / "server.properties").write_text(props)
        (self.home / "log4j.properties").write_text(LOG4J)
        if not (self.home / "data" / "meta.properties").exists():
            self._format_storage()

    def _cluster_id(self) -> str:
        path = self.home / "cluster.id"
        if path.exists():
            return path.read_text().strip()
        while True:  # Kafka's own generator skips ids that would look like a CLI flag
            cid = base64.urlsafe_b64encode(uuid.uuid4().bytes).decode().rstrip("=")
            if not cid.startswith("-"):
                break
        path.write_text(cid)
        return cid

    def _format_storage(self) -> None:
        cmd = [
            self.java,
            *self._jvm_flags(),
            "-cp",
            self.classpath,
            "kafka.tools.StorageTool",
            "format",
            "--ignore-formatted",
            "-t",
            self._cluster_id(),
            "-c",
            str(self.home / "server.properties"),
        ]
        proc = subprocess.run(cmd, capture_output=True, text=True, timeout=120)
        if proc.returncode != 0:
            raise DeployError(
                f"kafka storage format failed (delete {self.home} to start over):\n"
                f"{proc.stdout}{proc.stderr}"
            )

    def _jvm_flags(self) -> list[str]:
        heap = self.settings.kafka_heap
        return [
            f"-Xms{min_heap(heap)}",
            f"-Xmx{heap}",
            "-XX:+UseG1GC",
            "-XX:MaxGCPauseMillis=20",
            "-XX:ParallelGCThreads=2",
            "-XX:ConcGCThreads=1",
            "-XX:MaxMetaspaceSize=256m",
            "-XX:ReservedCodeCacheSize=64m",
            "-Djava.awt.headless=true",
            f"-Dlog4j.configuration=file:{self.home / 'log4j.properties'}",
            f"-Dkafka.logs.dir={self.home / 'logs'}",
        ]

    def command(self) -> list[str]:
        return [
            self.java,
            *self._jvm_flags(),
            "-cp",
            self.classpath,
            "kafka.Kafka",
            str(self.home / "server.properties"),
        ]

    def healthy(self) -> bool:
        """TCP connect, then a metadata request that lists this broker."""
        s = self.settings
        if not port_in_use(s.host, s.kafka_port):
            return False
        try:
            return broker_count(f"{s.host}:{s.kafka_port}") >= 1
        except Exception:
            return False

    def endpoints(self) -> dict[str, str]:
        return {
            "bootstrap": f"{self.settings.host}:{self.settings.kafka_port}",
            "controller": f"{self.settings.host}:{self.settings.kafka_controller_port}",
        }


def min_heap(heap: str) -> str:
    """Half the max heap as initial heap ('512m' -> '256m'), so an idle broker stays small."""
    unit = heap[-1] if heap[-1].isalpha() else ""
    number = int(heap[:-1] if unit else heap)
    return f"{max(number // 2, 1)}{unit}"


def broker_count(bootstrap: str) -> int:
    """Number of brokers the cluster reports (raises if it does not answer)."""
    from kafka import KafkaAdminClient

    admin = KafkaAdminClient(
        bootstrap_servers=bootstrap,
        request_timeout_ms=5000,
        api_version_auto_timeout_ms=5000,
        client_id="deploy-health",
    )
    try:
        return len(admin.describe_cluster().get("brokers", []))
    finally:
        admin.close()
