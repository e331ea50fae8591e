"""The fault suite at a reduced size (``python -m bench faults``): nothing lost, nothing
indexed twice, no good post dead-lettered, every malformed record dead-lettered -- while
the worker is killed, each server is killed and restarted, Elasticsearch answers 429 or
holds requests past the client timeout, the POS model is unloaded, the consumer group
rebalances (twice in a row when a killed worker's replacement joins before its session
expires), and 10 % of the input is malformed.

Recovery times and throughput are reported by the bench (README, "Fault suite"), not
asserted here: timing on a shared 2-core machine is a benchmark's business.
"""

from __future__ import annotations

import json

import pytest

from bench.faults import run
from deploy.testing import ElasticsearchInfo, KafkaInfo, TritonInfo

pytestmark = [pytest.mark.integration, pytest.mark.disruptive, pytest.mark.timeout(1800)]


def test_every_fault_scenario_loses_nothing_and_dead_letters_only_malformed_records(
    kafka: KafkaInfo, elasticsearch: ElasticsearchInfo, triton: TritonInfo
) -> None:
    result = run(posts=200, rate=100, broker_down_s=15, es_fault_s=10, timeout=600, pairs=1)
    print(json.dumps(result, indent=2))
    for name, out in result["scenarios"].items():
        assert out["complete"], name
        assert out["lost"] == 0, name
        assert out["duplicate_documents"] == 0, name
        assert out["good_dead_lettered"] == 0, (name, out["dead_letters_by_code"])
        assert out["malformed_dead_lettered"] == out["malformed"], name
    assert result["scenarios"]["malformed"]["malformed"] > 0
