"""nlp_models/registry.py is the one place that names each served model: the model
repository, the Triton adapters, the gate and the services' defaults all agree with it."""

from __future__ import annotations

import re

import pytest

from nlp_models import registry
from services.config import PipelineConfig
from services.headline_api.config import ApiConfig
from services.settings import REPO_ROOT
from training import gate

REPOSITORY = REPO_ROOT / "model_repository"
#: the adapters' source (importing it needs Triton's own triton_python_backend_utils)
ADAPTERS = (REPO_ROOT / "nlp_models" / "triton_backend.py").read_text()


def test_the_repository_holds_exactly_the_registered_models() -> None:
    on_disk = {p.parent.name for p in REPOSITORY.glob("*/config.pbtxt")}
    assert on_disk == set(registry.MODELS)


@pytest.mark.parametrize("model", registry.MODELS.values(), ids=lambda m: m.name)
def test_each_models_config_answers_with_its_registered_tensor(model: registry.ServedModel
                                                                ) -> None:
    config = (REPOSITORY / model.name / "config.pbtxt").read_text()
    assert re.search(rf'^name: "{model.name}"$', config, re.M)
    outputs = re.findall(r'name: "([A-Z_]+)"', config.split("output [")[1])
    assert outputs[0] == model.answer


@pytest.mark.parametrize("model", registry.MODELS.values(), ids=lambda m: m.name)
def test_each_version_runs_the_registered_adapter_and_ships_registered_files_in_budget(
    model: registry.ServedModel,
) -> None:
    assert re.search(rf"^class {model.backend}\b", ADAPTERS, re.M)
    versions = [d for d in (REPOSITORY / model.name).iterdir() if d.name.isdigit()]
    assert versions
    for version in versions:
        assert (f"triton_backend import {model.backend} as TritonPythonModel"
                in (version / "model.py").read_text())
        weights = [f for f in version.iterdir() if f.suffix == ".pt"]
        assert weights and {f.name for f in weights} <= set(model.files)
        assert all(f.stat().st_size <= model.max_mb * 2**20 for f in weights)


def test_the_gate_and_the_services_use_the_registered_names() -> None:
    assert set(gate.MODELS) == set(registry.MODELS)
    assert all(gate.MODELS[name].max_mb == m.max_mb for name, m in registry.MODELS.items())
    cfg = PipelineConfig()
    assert (cfg.pos_model, cfg.hashtag_model, cfg.headline_model, cfg.constrained_model) == (
        registry.POS.name, registry.HASHTAG.name, registry.HEADLINE.name,
        registry.CONSTRAINED.name)
    api = ApiConfig()
    assert (api.headline_model, api.constrained_model) == (registry.HEADLINE.name,
                                                           registry.CONSTRAINED.name)
