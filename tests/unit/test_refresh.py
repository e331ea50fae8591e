"""The refresh path without servers: the gate's rule, the repository's atomic changes, and
publish/rollback on a copy of the shipped repository (tests/integration/test_refresh.py
runs them against a live Triton under traffic)."""

from __future__ import annotations

import json
import os
import shutil
import zipfile
from pathlib import Path

import pytest

from training.gate import GateSet, Rule, judge
from training.hashtag.gate import SERVED_BEAM, SERVED_N_BEST
from training.paths import REPO_ROOT
from training.publish import Options, PublishError, publish, rollback
from training.repository import SERVING_CODE, Busy, ModelDir, bundle_serving_code

DATA = REPO_ROOT / "tests" / "data"
GATE = (GateSet("ritter40", DATA / "ritter_test_first40.conll", "ptb"),
        GateSet("daily60", DATA / "daily547_first60.conll", "ark"))
RULE = Rule("rouge1.f", 0.005, {"degenerate": 0.01})


def scores(candidate: float, serving: float | None, degenerate: float = 0.0) -> dict:
    pair = {"candidate": {"rouge1": {"f": candidate}, "degenerate": degenerate}}
    if serving is not None:
        pair["serving"] = {"rouge1": {"f": serving}, "degenerate": 0.0}
    return {"dev": pair}


def test_gate_passes_a_candidate_within_tolerance_and_refuses_a_worse_one() -> None:
    assert judge(RULE, scores(0.300, 0.304)) == []
    assert judge(RULE, scores(0.350, 0.300)) == []
    (failure,) = judge(RULE, scores(0.290, 0.300))
    assert "rouge1.f 0.2900 is below the serving version's 0.3000" in failure


def test_gate_refuses_a_rise_in_a_safety_measure_even_with_a_better_primary_metric() -> None:
    (failure,) = judge(RULE, scores(0.400, 0.300, degenerate=0.05))
    assert failure.startswith("dev: degenerate 0.0500 is above")


def test_an_adapted_model_may_lose_a_little_on_the_generic_sets_but_not_on_its_newsroom():
    generic = scores(0.280, 0.300)["dev"]
    both = {"newsroom holdout[:200]": scores(0.350, 0.300)["dev"], "dev": generic}
    assert judge(RULE, both, widened=frozenset({"dev"})) == []  # -0.02 within 0.03
    assert judge(RULE, both) != []  # an unadapted candidate gets the usual tolerance
    worse = {**both, "dev": scores(0.260, 0.300)["dev"]}
    (failure,) = judge(RULE, worse, widened=frozenset({"dev"}))
    assert "by more than 0.03" in failure


def test_the_hashtag_gate_decodes_as_triton_serves() -> None:
    config = (REPO_ROOT / "model_repository" / "hashtag_generator" / "config.pbtxt").read_text()
    for key, value in (("beam", SERVED_BEAM), ("n_best", SERVED_N_BEST)):
        assert f'key: "{key}" value: {{ string_value: "{value}" }}' in config


def test_gate_passes_the_first_version_of_a_model() -> None:
    assert judge(RULE, scores(0.1, None)) == []


def make_model_dir(tmp_path: Path, versions: list[str]) -> ModelDir:
    path = tmp_path / "m"
    path.mkdir()
    (path / "config.pbtxt").write_text('name: "m"\n')
    for v in versions:
        (path / v).mkdir()
        (path / v / "model.py").write_text("")
    return ModelDir(path)


def test_version_numbers_are_never_reused_even_after_a_rollback(tmp_path: Path) -> None:
    mdir = make_model_dir(tmp_path, ["2", "3"])
    mdir.retire(3)
    assert mdir.newest() == 2 and mdir.retired() == [3]
    assert mdir.next_version() == 4


def test_staging_is_invisible_until_commit_and_stale_staging_is_removed(tmp_path: Path) -> None:
    mdir = make_model_dir(tmp_path, ["1"])
    crashed = mdir.stage(2)
    (crashed / "half-written.pt").write_bytes(b"x")
    assert mdir.versions() == [1]  # what Triton would serve
    staging = mdir.stage(2)  # a later publish
    assert not (crashed / "half-written.pt").exists() and list(staging.iterdir()) == []
    (staging / "model.py").write_text("")
    mdir.commit(staging, 2)
    assert mdir.versions() == [1, 2] and (mdir.path / "2" / "model.py").exists()


def test_prune_keeps_the_newest_versions_and_drops_retired_ones(tmp_path: Path) -> None:
    mdir = make_model_dir(tmp_path, ["1", "2", "3", "5"])
    mdir.retire(5)
    assert sorted(mdir.prune(keep=2)) == ["1", "retired-5"]
    assert mdir.versions() == [2, 3]


def write_card(mdir: ModelDir, version: int, **record: object) -> None:
    (mdir.version_dir(version) / "card.json").write_text(json.dumps(record))


def test_a_version_is_served_once_triton_confirms_it_and_older_cards_count_as_served(
    tmp_path: Path,
) -> None:
    mdir = make_model_dir(tmp_path, ["1", "2"])
    write_card(mdir, 1, model="m")  # written before the served_since record existed
    write_card(mdir, 2, served_since=None)
    assert mdir.served(1) is None and mdir.served(2) is False
    mdir.mark_served(2, "2026-11-27T15:00:00Z")
    mdir.mark_served(2, "2026-11-27T16:00:00Z")  # only the first confirmation counts
    mdir.mark_served(1, "2026-11-27T16:00:00Z")  # an older card is left as it is
    assert json.loads((mdir.version_dir(2) / "card.json").read_text())["served_since"] == \
        "2026-11-27T15:00:00Z"
    assert "served_since" not in json.loads((mdir.version_dir(1) / "card.json").read_text())


def test_rollback_returns_to_the_last_version_that_served_not_to_a_never_served_one(
    tmp_path: Path,
) -> None:
    mdir = make_model_dir(tmp_path, ["1", "2", "3"])
    (mdir.path / "config.pbtxt").write_text('name: "pos_tagger"\n')
    write_card(mdir, 1, served_since="2026-11-01T00:00:00Z")
    write_card(mdir, 2, served_since=None)  # published with --no-switch
    write_card(mdir, 3, served_since="2026-11-27T00:00:00Z")
    renamed = mdir.path.rename(tmp_path / "pos_tagger")
    back = rollback("pos_tagger", options=Options(tmp_path))
    assert back["version"] == 1 and back["retired"] == [2, 3]
    assert ModelDir(renamed).versions() == [1]


def test_prune_never_removes_the_serving_version_or_the_one_a_rollback_returns_to(
    tmp_path: Path,
) -> None:
    mdir = make_model_dir(tmp_path, ["3", "4", "5", "6"])
    assert sorted(mdir.prune(keep=2, also_keep=frozenset({3}))) == ["4"]
    assert mdir.versions() == [3, 5, 6]


def test_publish_to_an_unreachable_triton_stages_the_version_and_says_how_to_switch(
    repository: Path,
) -> None:
    mdir = ModelDir.of("pos_tagger", repository)
    before = mdir.newest()
    result = publish("pos_tagger", mdir.file("pos_tagger.pt"),
                     Options(repository, triton="127.0.0.1:9", gate_data=GATE))
    assert result["published"] and not result["switched"] and result["reference"] == "disk"
    assert result["version"] == before + 1 and mdir.newest() == before + 1
    assert "python -m training switch pos_tagger" in result["reason"]
    assert mdir.served(before + 1) is False


@pytest.fixture
def repository(tmp_path: Path) -> Path:
    """The shipped pos_tagger, hard-linked (publish never writes into existing files)."""
    repo = tmp_path / "repo"
    shutil.copytree(REPO_ROOT / "model_repository" / "pos_tagger", repo / "pos_tagger",
                    ignore=shutil.ignore_patterns("__pycache__"), copy_function=os.link)
    return repo


def test_publish_writes_the_next_version_with_a_card_and_rollback_returns(
    repository: Path,
) -> None:
    mdir = ModelDir.of("pos_tagger", repository)
    serving = mdir.newest()
    shipped = mdir.file("pos_tagger.pt")
    result = publish("pos_tagger", shipped, Options(repository, gate_data=GATE))
    assert result["published"] and result["version"] == serving + 1
    assert result["gate"]["passed"]
    card = json.loads((mdir.version_dir(serving + 1) / "card.json").read_text())
    entry = card["files"]["pos_tagger.pt"]
    assert entry["bytes"] == shipped.stat().st_size and len(entry["sha256"]) == 64
    assert set(entry["metrics"]["dev"]) == {"ritter40[:40]", "daily60[:60]"}
    # the serving weights again: their provenance is carried over, not lost
    before = json.loads((mdir.version_dir(serving) / "card.json").read_text())
    assert entry["training"] == before["files"]["pos_tagger.pt"]["training"]
    assert entry["republished_from"] == serving
    # the version carries the checkout's serving code, byte for byte as bundled now
    fresh = bundle_serving_code(repository)  # any directory: the bundle is deterministic
    code = mdir.version_dir(serving + 1) / SERVING_CODE
    assert code.read_bytes() == fresh.read_bytes()

    back = rollback("pos_tagger", options=Options(repository))
    assert back["version"] == serving and mdir.newest() == serving
    assert mdir.retired() == [serving + 1]


@pytest.mark.parametrize("model", ["pos_tagger", "hashtag_generator", "headline_generator",
                                   "constrained_headline_generator"])
def test_every_version_brings_its_serving_code(model: str) -> None:
    """model.py imports from the version's own nlp_models.zip, which holds the whole
    serving package (backend classes, contract, limits) and its requirements."""
    mdir = ModelDir.of(model)
    for version in mdir.versions():
        vdir = mdir.version_dir(version)
        assert SERVING_CODE in (vdir / "model.py").read_text()
        with zipfile.ZipFile(vdir / SERVING_CODE) as z:
            names = set(z.namelist())
        assert {"nlp_models/__init__.py", "nlp_models/triton_backend.py",
                "nlp_models/contract.py", "nlp_models/limits.py",
                "nlp_models/requirements.txt"} <= names
        assert not any("__pycache__" in n or n.startswith(("training/", "services/"))
                       for n in names)


def test_publish_refuses_a_checkpoint_of_another_model(repository: Path) -> None:
    hashtag = next((REPO_ROOT / "model_repository" / "hashtag_generator").glob("*/hashtag_en.pt"))
    before = ModelDir.of("pos_tagger", repository).versions()
    with pytest.raises(PublishError, match="does not load as a pos_tagger checkpoint"):
        publish("pos_tagger", hashtag, Options(repository, gate_data=GATE))
    assert ModelDir.of("pos_tagger", repository).versions() == before


def test_rollback_without_an_earlier_version_says_so(repository: Path) -> None:
    mdir = ModelDir.of("pos_tagger", repository)
    for version in mdir.versions()[:-1]:  # leave only the serving version
        shutil.rmtree(mdir.version_dir(version))
    with pytest.raises(PublishError, match="no earlier version"):
        rollback("pos_tagger", options=Options(repository))


def test_a_second_publish_of_the_same_model_is_refused_while_one_runs(tmp_path: Path) -> None:
    mdir = make_model_dir(tmp_path, ["1"])
    with mdir.locked(), pytest.raises(Busy, match="another publish or rollback"):
        with ModelDir(mdir.path).locked():
            pass


@pytest.mark.parametrize("model", ["pos_tagger", "hashtag_generator", "headline_generator",
                                   "constrained_headline_generator"])
def test_every_served_weights_file_is_traceable_through_its_card(model: str) -> None:
    from training.provenance import sha256
    from training.repository import serving_dir

    version = serving_dir(model)
    card = json.loads((version / "card.json").read_text())
    for weights in version.glob("*.pt"):
        entry = card["files"][weights.name]
        assert entry["sha256"] == sha256(weights) and entry["bytes"] == weights.stat().st_size
        assert entry["training"]["command"].startswith("python -m training")
