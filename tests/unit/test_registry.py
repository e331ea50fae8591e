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
    module, cls = model.adapter.split(":")
    assert module == "nlp_models.triton_backend" and re.search(rf"^class {cls}\b", ADAPTERS, re.M)
    versions = [d for d in (REPOSITORY / model.name).iterdir() if d.name.isdigit()]
    assert versions
    for version in versions:
        assert (version / "model.py").read_text() == model.model_py()
        weights = [f for f in version.iterdir() if f.suffix == ".pt"]
        assert weights and {f.name for f in weights} <= set(model.files)
        assert all(f.stat().st_size <= model.max_mb * 2**20 for f in weights)


def test_the_gate_and_the_services_use_the_registered_names() -> None:
    assert all(gate.spec(name).max_mb == m.max_mb and gate.spec(name).name == name
               for name, m in registry.MODELS.items())
    cfg = PipelineConfig()
    assert (cfg.pos_model, cfg.hashtag_model, cfg.headline_model, cfg.constrained_model) == (
        registry.POS.name, registry.HASHTAG.name, registry.HEADLINE.name,
        registry.CONSTRAINED.name)
    api = ApiConfig()
    assert (api.headline_model, api.constrained_model) == (registry.HEADLINE.name,
                                                           registry.CONSTRAINED.name)


# A fifth model: its package (here a module on sys.path with its adapter and its gate), one
# registry entry and its config.pbtxt; nothing else is edited to publish and judge it.
ECHO_PACKAGE = {
    "__init__.py": "",
    "serving.py": '''
class EchoAdapter:  # what Triton would run; not imported here
    def execute(self, requests):
        return requests
''',
    "gate.py": '''
import json
from pathlib import Path

from training.gate import Checkpoint, GateSet, ModelGate, Rule

DEV = Path(__file__).with_name("dev.jsonl")


def load(path):
    json.loads(Path(path).read_text())  # a checkpoint that is no JSON does not load
    return Checkpoint("echo.pt", None, {"kind": "echo"})


def sets(lang, split):
    return [GateSet(f"echo/{split}", DEV, "")]


def evaluate(model, gate_set):
    return {"accuracy": json.loads(Path(model).read_text())["accuracy"]}


GATE = ModelGate(Rule("accuracy", 0.01), load, sets, evaluate, gate_size=3)
''',
    "dev.jsonl": "{}\n{}\n{}\n",
}


def test_a_fifth_model_needs_only_its_package_its_registry_entry_and_its_config(
    tmp_path, monkeypatch,
) -> None:
    from training.publish import Options, publish

    package = tmp_path / "echo_model"
    package.mkdir()
    for name, text in ECHO_PACKAGE.items():
        (package / name).write_text(text)
    monkeypatch.syspath_prepend(str(tmp_path))
    echo = registry.ServedModel("echo_model", "echo_model.serving:EchoAdapter",
                                "echo_model.gate:GATE", "ECHO_JSON", ("echo.pt",), 1)
    monkeypatch.setitem(registry.MODELS, echo.name, echo)
    repository = tmp_path / "repository"
    (repository / echo.name).mkdir(parents=True)
    (repository / echo.name / "config.pbtxt").write_text(f'name: "{echo.name}"\n')

    def checkpoint(accuracy: float):
        path = tmp_path / f"echo_{accuracy}.pt"
        path.write_text(f'{{"accuracy": {accuracy}}}')
        return path

    options = Options(repository=repository)
    first = publish(echo.name, checkpoint(0.90), options)
    assert first["published"] and first["version"] == 1 and first["previous_version"] is None
    version = repository / echo.name / "1"
    assert (version / "model.py").read_text() == echo.model_py()
    assert "from echo_model.serving import EchoAdapter as TritonPythonModel" in echo.model_py()
    assert {p.name for p in version.iterdir()} == {"model.py", "echo.pt", "card.json",
                                                   "nlp_models.zip"}
    worse = publish(echo.name, checkpoint(0.50), options)
    assert not worse["published"] and "accuracy 0.5000 is below" in worse["reason"]
    better = publish(echo.name, checkpoint(0.95), options)
    assert better["version"] == 2
    assert (repository / echo.name / "2" / "model.py").read_text() == echo.model_py()
