"""A worker's scrape target: announced in the folder Prometheus discovers, withdrawn on a
clean stop, kept after a crash (so WorkerDown fires). The real worker and Prometheus are
in tests/integration/test_alerts.py."""

from __future__ import annotations

import asyncio
import json
from pathlib import Path

import mode

from deploy.monitoring import Prometheus, prometheus_config
from services.settings import Settings
from services.stream.scrape_target import (
    ScrapeTarget,
    target_address,
    target_file,
    targets_dir,
)


def test_a_wildcard_bind_is_scraped_on_loopback() -> None:
    assert target_address("127.0.0.1", 6066) == "127.0.0.1:6066"
    assert target_address("0.0.0.0", 6067) == "127.0.0.1:6067"
    assert target_address("::1", 6066) == "[::1]:6066"


def test_workers_announce_where_prometheus_discovers(tmp_path: Path) -> None:
    settings = Settings(state_dir=tmp_path)
    assert Prometheus(settings).targets_dir == targets_dir(tmp_path)
    path = target_file(tmp_path, "127.0.0.1:6066")
    assert path.parent == targets_dir(tmp_path) and path.name == "worker-127.0.0.1-6066.json"
    config = prometheus_config(settings, targets_dir(tmp_path))
    worker = next(j for j in config["scrape_configs"] if j["job_name"] == "worker")
    assert worker["file_sd_configs"][0]["files"] == [str(targets_dir(tmp_path) / "*.json")]
    assert "static_configs" not in worker  # nothing scraped that did not announce itself
    fixed = prometheus_config(Settings(worker_targets="10.0.0.5:6066"), tmp_path)
    worker = next(j for j in fixed["scrape_configs"] if j["job_name"] == "worker")
    assert worker["static_configs"] == [{"targets": ["10.0.0.5:6066"]}]


class App(mode.Service):
    """Stands in for the Faust app, whose ``crashed`` the target reads."""


def lifecycle(tmp_path: Path, crash: bool) -> tuple[list, bool]:
    """Start a target under an app, optionally crash the app, stop; (what Prometheus
    would have read while it ran, whether the file is there after the stop)."""
    path = target_file(tmp_path, "127.0.0.1:6066")

    async def run() -> tuple[list, bool]:
        app = App()
        target = ScrapeTarget(app, path, "127.0.0.1:6066")
        await app.start()
        await target.start()
        seen = json.loads(path.read_text())
        if crash:
            await app.crash(RuntimeError("an agent raised"))
        await target.stop()
        await app.stop()
        return seen, path.exists()

    return asyncio.run(run())


def test_a_clean_stop_withdraws_the_target(tmp_path: Path) -> None:
    seen, left = lifecycle(tmp_path, crash=False)
    assert seen == [{"targets": ["127.0.0.1:6066"]}]
    assert not left
    assert list(targets_dir(tmp_path).iterdir()) == []  # no partial file either


def test_a_crash_keeps_the_target_so_worker_down_fires(tmp_path: Path) -> None:
    seen, left = lifecycle(tmp_path, crash=True)
    assert seen == [{"targets": ["127.0.0.1:6066"]}]
    assert left


def test_a_folder_it_cannot_write_does_not_stop_the_worker(tmp_path: Path) -> None:
    blocked = tmp_path / "state"
    blocked.write_text("a file where the state folder should be")

    async def run() -> None:
        app = App()
        target = ScrapeTarget(app, target_file(blocked, "127.0.0.1:6066"), "127.0.0.1:6066")
        await app.start()
        await target.start()  # logs a warning instead of raising
        assert not target.crashed
        await target.stop()
        await app.stop()

    asyncio.run(run())
