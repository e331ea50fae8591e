"""Prometheus, Alertmanager and the two exporters they need, as local processes.

Debian's packages (``deploy/ci-apt-packages.txt``) bring the binaries: ``prometheus``
2.42, ``prometheus-alertmanager`` 0.25 and ``prometheus-elasticsearch-exporter`` 1.5. Consumer
lag comes from our own exporter (``python -m services.lag_exporter``): Debian's Burrow
1.2 needs ZooKeeper for its own coordination and our Kafka runs in KRaft mode without
one, and a lag gauge exported by the workers themselves would vanish exactly when every
worker is dead, which is when lag matters most.

Prometheus's configuration is written from the settings at each start
(``prometheus_config``); the alert rules are the repository's
``deploy/monitoring/alerts.yml``, unit-tested with ``promtool test rules``. Workers are
found by Prometheus's file discovery in ``$NLP_STATE_DIR/prometheus/targets/*.json``:
each worker announces itself there while it serves ``/metrics`` and withdraws on a clean
stop (``services/stream/scrape_target.py``), so a planned stop pages nobody and a killed
worker still raises ``WorkerDown``; ``NLP_WORKER_TARGETS`` adds fixed targets (workers on
other hosts). Everything binds to loopback; Prometheus's
admin and lifecycle APIs stay off. The key graphs are one console page,
``http://127.0.0.1:9090/consoles/pipeline.html`` (``deploy/monitoring/consoles/``).
"""

from __future__ import annotations

import json
import shutil
import sys
import urllib.error
import urllib.request
from pathlib import Path

from deploy.base import Port, Server
from deploy.process import DeployError
from services.settings import REPO_ROOT, Settings
from services.stream.scrape_target import targets_dir

MONITORING = REPO_ROOT / "deploy" / "monitoring"
ALERT_RULES = MONITORING / "alerts.yml"


def binary(name: str) -> str:
    """The path of a Debian-packaged binary, or a DeployError that says how to get it."""
    path = shutil.which(name)
    if path is None:
        raise DeployError(f"{name} not found; install Debian's packages in "
                          "deploy/ci-apt-packages.txt (bash deploy/setup.sh does)")
    return path


def http_ok(url: str, timeout: float = 2.0) -> bool:
    try:
        with urllib.request.urlopen(url, timeout=timeout) as resp:
            return resp.status == 200
    except (urllib.error.URLError, OSError):
        return False


def prometheus_config(s: Settings, targets_dir: Path, rules: Path = ALERT_RULES) -> dict:
    """Prometheus's configuration for the stack ``s`` (JSON is valid YAML)."""

    def job(name: str, *targets: str, path: str = "/metrics") -> dict:
        return {"job_name": name, "metrics_path": path,
                "static_configs": [{"targets": list(targets)}]}

    workers = [t.strip() for t in s.worker_targets.split(",") if t.strip()]
    worker_job: dict = {"job_name": "worker",
                        "file_sd_configs": [{"files": [str(targets_dir / "*.json")],
                                             "refresh_interval": "5s"}]}
    if workers:
        worker_job["static_configs"] = [{"targets": workers}]
    return {
        "global": {"scrape_interval": s.scrape_interval,
                   "evaluation_interval": s.scrape_interval,
                   "scrape_timeout": min_duration(s.scrape_interval, "10s")},
        "rule_files": [str(rules)],
        "alerting": {"alertmanagers": [
            {"static_configs": [{"targets": [f"{s.host}:{s.alertmanager_port}"]}]}]},
        "scrape_configs": [
            worker_job,
            job("triton", f"{s.triton_host}:{s.triton_metrics_port}"),
            job("elasticsearch", f"{s.host}:{s.es_exporter_port}"),
            job("consumer_lag", f"{s.host}:{s.lag_exporter_port}"),
            job("headline_api", s.headline_api_target),
            job("prometheus", f"{s.host}:{s.prometheus_port}"),
            job("alertmanager", f"{s.host}:{s.alertmanager_port}"),
        ],
    }


def alertmanager_config(s: Settings) -> dict:
    """One route to one receiver: the webhook of NLP_ALERT_WEBHOOK_URL, if set.

    Short waits: a page about a stalled pipeline should not wait for a batch of others;
    repeats every 4 h while an alert keeps firing."""
    receiver: dict = {"name": "default"}
    if s.alert_webhook_url:
        receiver["webhook_configs"] = [{"url": s.alert_webhook_url, "send_resolved": True}]
    fast = s.scrape_interval
    return {
        "route": {"receiver": "default", "group_by": ["alertname"],
                  "group_wait": fast, "group_interval": fast, "repeat_interval": "4h"},
        "receivers": [receiver],
    }


def min_duration(a: str, b: str) -> str:
    """The shorter of two Prometheus durations written as ``<n>s`` or ``<n>m``."""
    return a if seconds(a) <= seconds(b) else b


def seconds(duration: str) -> float:
    unit = {"ms": 0.001, "s": 1, "m": 60, "h": 3600}
    for suffix in ("ms", "s", "m", "h"):
        if duration.endswith(suffix):
            return float(duration[: -len(suffix)]) * unit[suffix]
    raise ValueError(f"not a duration: {duration!r} (write e.g. 15s or 1m)")


class Prometheus(Server):
    name = "prometheus"

    def ports(self) -> list[Port]:
        return [Port("http", self.settings.prometheus_port, "NLP_PROMETHEUS_PORT")]

    @property
    def targets_dir(self) -> Path:
        """Where workers announce themselves (file discovery, ``[{"targets": [...]}]``)."""
        return targets_dir(self.settings.state_dir)

    def install(self) -> None:
        binary("prometheus")

    def prepare(self) -> None:
        self.install()
        self.targets_dir.mkdir(parents=True, exist_ok=True)
        (self.home / "data").mkdir(parents=True, exist_ok=True)
        config = prometheus_config(self.settings, self.targets_dir)
        (self.home / "prometheus.yml").write_text(json.dumps(config, indent=2))

    def command(self) -> list[str]:
        return [binary("prometheus"), f"--config.file={self.home / 'prometheus.yml'}",
                f"--storage.tsdb.path={self.home / 'data'}",
                "--storage.tsdb.retention.time=7d",
                f"--web.console.templates={MONITORING / 'consoles'}",
                f"--web.console.libraries={MONITORING / 'console_libraries'}",
                f"--web.listen-address={self.settings.host}:{self.settings.prometheus_port}"]

    def healthy(self) -> bool:
        return http_ok(f"http://{self.settings.host}:{self.settings.prometheus_port}/-/ready")


class Alertmanager(Server):
    name = "alertmanager"

    def ports(self) -> list[Port]:
        return [Port("http", self.settings.alertmanager_port, "NLP_ALERTMANAGER_PORT")]

    def install(self) -> None:
        binary("prometheus-alertmanager")

    def prepare(self) -> None:
        self.install()
        (self.home / "data").mkdir(parents=True, exist_ok=True)
        config = alertmanager_config(self.settings)
        (self.home / "alertmanager.yml").write_text(json.dumps(config, indent=2))

    def command(self) -> list[str]:
        s = self.settings
        return [binary("prometheus-alertmanager"),
                f"--config.file={self.home / 'alertmanager.yml'}",
                f"--storage.path={self.home / 'data'}",
                f"--web.listen-address={s.host}:{s.alertmanager_port}",
                "--cluster.listen-address="]  # one instance: no gossip port

    def healthy(self) -> bool:
        return http_ok(f"http://{self.settings.host}:{self.settings.alertmanager_port}/-/ready")


class ElasticsearchExporter(Server):
    name = "es-exporter"

    def ports(self) -> list[Port]:
        return [Port("metrics", self.settings.es_exporter_port, "NLP_ES_EXPORTER_PORT")]

    def install(self) -> None:
        binary("prometheus-elasticsearch-exporter")

    def prepare(self) -> None:
        self.install()

    def command(self) -> list[str]:
        s = self.settings
        return [binary("prometheus-elasticsearch-exporter"), f"--es.uri={s.es_url}",
                "--es.timeout=3s",
                f"--web.listen-address={s.host}:{s.es_exporter_port}"]

    def healthy(self) -> bool:
        return http_ok(f"http://{self.settings.host}:{self.settings.es_exporter_port}/metrics")


class LagExporter(Server):
    name = "lag-exporter"

    def ports(self) -> list[Port]:
        return [Port("metrics", self.settings.lag_exporter_port, "NLP_LAG_EXPORTER_PORT")]

    def install(self) -> None:
        pass

    def prepare(self) -> None:
        pass

    def command(self) -> list[str]:
        s = self.settings
        return [sys.executable, "-m", "services.lag_exporter", f"--bootstrap={s.kafka_bootstrap}",
                f"--host={s.host}", f"--port={s.lag_exporter_port}"]

    def healthy(self) -> bool:
        return http_ok(f"http://{self.settings.host}:{self.settings.lag_exporter_port}/metrics")
