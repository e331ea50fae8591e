"""The shipped alert rules and the monitoring configuration, checked by the tools that
read them: ``promtool`` (Debian's prometheus package) and ``amtool`` (Alertmanager's)."""

from __future__ import annotations

import json
import re
import shutil
import subprocess
from pathlib import Path

import pytest

from deploy.monitoring import ALERT_RULES, MONITORING, alertmanager_config, prometheus_config
from services.settings import REPO_ROOT, Settings

needs = pytest.mark.skipif(shutil.which("promtool") is None or shutil.which("amtool") is None,
                           reason="promtool/amtool missing: install deploy/ci-apt-packages.txt")


def run(*cmd: str, cwd: Path = MONITORING) -> str:
    done = subprocess.run(cmd, cwd=cwd, capture_output=True, text=True, timeout=120)
    assert done.returncode == 0, done.stdout + done.stderr
    return done.stdout


@needs
def test_the_rules_are_valid_and_pass_their_unit_tests() -> None:
    run("promtool", "check", "rules", str(ALERT_RULES))
    assert "SUCCESS" in run("promtool", "test", "rules", "alerts_test.yml")


@needs
def test_the_generated_configurations_are_valid(tmp_path: Path) -> None:
    settings = Settings(alert_webhook_url="http://127.0.0.1:9999/hook")
    prom = tmp_path / "prometheus.yml"
    prom.write_text(json.dumps(prometheus_config(settings, tmp_path / "targets")))
    run("promtool", "check", "config", str(prom))
    am = tmp_path / "alertmanager.yml"
    am.write_text(json.dumps(alertmanager_config(settings)))
    run("amtool", "check-config", str(am))


@needs
def test_the_compose_configurations_are_valid_and_read_the_same_rules(tmp_path: Path) -> None:
    text = (MONITORING / "compose-prometheus.yml").read_text()
    assert "rule_files: [/etc/nlp-monitoring/alerts.yml]" in text
    local = tmp_path / "prometheus.yml"
    local.write_text(text.replace("/etc/nlp-monitoring/alerts.yml", str(ALERT_RULES)))
    run("promtool", "check", "config", str(local))
    run("amtool", "check-config", str(MONITORING / "compose-alertmanager.yml"))
    for job in re.findall(r'"job_name": "(\w+)"',
                          json.dumps(prometheus_config(Settings(), tmp_path))):
        assert f"job_name: {job}\n" in text, f"{job}: scraped locally, not in Compose"


def test_every_alert_has_a_runbook_entry_and_a_unit_test() -> None:
    text = ALERT_RULES.read_text()
    names = re.findall(r"^ +- alert: (\w+)$", text, re.M)
    runbooks = re.findall(r"^ +runbook: (\S+)$", text, re.M)
    assert len(names) == len(runbooks) > 10
    anchors = set(re.findall(r'<a id="([a-z0-9-]+)"></a>',
                             (REPO_ROOT / "docs" / "operations.md").read_text()))
    tested = (MONITORING / "alerts_test.yml").read_text()
    for name, runbook in zip(names, runbooks, strict=True):
        assert runbook == f"docs/operations.md#alert-{name.lower()}", name
        assert f"alert-{name.lower()}" in anchors, f"{name}: no runbook entry"
        assert f"alertname: {name}" in tested or name in UNTESTED, f"{name}: no unit test"


#: Alerts whose expression is a plain threshold on one series (their unit test would
#: restate the expression).
UNTESTED = {"KafkaUnavailable", "WorkerDown", "HeadlineApiSlow"}
