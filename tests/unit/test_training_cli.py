"""The training CLI's contracts: `evaluate` prints JSON last; `train --quick` works end to end."""

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

from training.paths import REPO_ROOT
from training.repository import shipped

DATA = REPO_ROOT / "tests" / "data"
SHARED = Path(os.environ.get("NLP_DATA_DIR", REPO_ROOT.parent / "shared" / "data"))


def run_cli(*args: str, timeout: float = 600) -> subprocess.CompletedProcess:
    return subprocess.run([sys.executable, "-m", "training", *args], cwd=REPO_ROOT,
                          capture_output=True, text=True, timeout=timeout, check=True)


def last_json(stdout: str) -> dict:
    return json.loads(stdout.strip().splitlines()[-1])


@pytest.mark.parametrize(("conll", "tagset", "floor"), [
    ("daily547_first60.conll", "ark", 0.80),
    ("ritter_test_first40.conll", "ptb", 0.80),
])
def test_evaluate_prints_accuracy_of_the_shipped_model_as_last_json_line(conll, tagset, floor):
    args = ("evaluate", "pos", "--data", str(DATA / conll), "--tagset", tagset)
    result = last_json(run_cli(*args).stdout)
    tokens = sum(1 for line in (DATA / conll).read_text().splitlines() if line.strip())
    assert result["tokens"] == tokens
    assert floor <= result["accuracy"] <= 1.0


@pytest.mark.skipif(not (SHARED / "pos").is_dir(), reason="shared POS datasets not present")
@pytest.mark.parametrize(("name", "seed", "run"), [("pos_dcnn", "7", "pos_dcnn_seed7_quick"),
                                                   ("pos_dcnn_clusters", None,
                                                    "pos_dcnn_clusters_quick")])
def test_quick_training_produces_a_checkpoint_that_evaluates(tmp_path, name, seed, run):
    """pos_dcnn_clusters reads the ARK cluster file that set-up resolved (deploy.local prepare);
    --seed names the run after its seed, so runs differing only in seed sit side by side."""
    run_cli("train", "pos", "--config", f"training/configs/{name}.toml", "--quick",
            "--out", str(tmp_path), *(("--seed", seed) if seed else ()))
    checkpoint = tmp_path / run / "best.pt"
    assert checkpoint.stat().st_size < 20 * 2**20
    result = last_json(run_cli("evaluate", "pos", "--data", str(DATA / "daily547_first60.conll"),
                               "--tagset", "ark", "--model", str(checkpoint)).stdout)
    # One minute of training must beat always answering the most frequent tag (V: 151/957).
    assert 0.16 < result["accuracy"] <= 1.0


@pytest.mark.skipif(not (SHARED / "hashtag").is_dir(), reason="shared datasets not present")
@pytest.mark.parametrize(("task", "config", "run"), [
    ("hashtag", "hashtag_en", "hashtag_en_soft_manhattan_quick"),
    ("headline", "headline_en", "headline_en_xl-cc_quick"),
])
def test_quick_generator_training_logs_its_curve_and_resumes(tmp_path, task, config, run):
    """The shared loop (training/loop.py) end to end for the generators: a checkpoint that
    loads, one logged evaluation, and a last.pt that --resume accepts."""
    args = ("train", task, "--config", f"training/configs/{config}.toml", "--quick",
            "--out", str(tmp_path))
    run_cli(*args)
    log = [json.loads(line) for line in (tmp_path / run / "log.jsonl").read_text().splitlines()]
    assert len(log) == 1 and log[0]["epoch"] == 1 and "selection" in log[0]
    assert (tmp_path / run / "best.pt").stat().st_size > 0
    resumed = run_cli(*args, "--resume").stdout
    assert "resumed at epoch 2" in resumed  # the quick run's one epoch is done


@pytest.mark.skipif(not (SHARED / "pos").is_dir(), reason="shared POS datasets not present")
def test_most_frequent_tag_baseline_prints_its_accuracy_as_last_json_line():
    data = DATA / "daily547_first60.conll"
    result = last_json(run_cli("baseline", "pos", "--data", str(data), "--tagset", "ark").stdout)
    assert result["model"] == "most-frequent-tag" and result["tokens"] == 957
    assert 0.5 < result["accuracy"] < 0.95  # far above chance, below a trained tagger


def test_evaluate_hashtag_prints_the_protocols_metrics_as_last_json_line():
    """The contract other tools rely on, with the shipped model on seven hand-written posts."""
    out = run_cli("evaluate", "hashtag", "--data", str(DATA / "hashtag_en_sample.jsonl"),
                  "--lang", "en", "--beam", "4", "--n-best", "2")
    result = last_json(out.stdout)
    assert result["posts"] == 7
    for key in ("rouge1", "rouge2", "rougeL", "f1@1", "f1@5"):
        assert 0.0 <= result[key] <= 1.0


def test_evaluate_hashtag_scores_subsets_separately():
    """Six short posts fit in top_k segments (selection keeps all); the seventh does not."""
    out = run_cli("evaluate", "hashtag", "--data", str(DATA / "hashtag_en_sample.jsonl"),
                  "--lang", "en", "--beam", "2", "--n-best", "1")
    result = last_json(out.stdout)
    assert result["by_length"]["at_most_top_k_segments"]["posts"] == 6
    assert result["by_length"]["more_segments"]["posts"] == 1
    assert sum(half["posts"] for half in result["by_presence"].values()) == 7
    assert 1 <= result["distinct_best"] <= 7


def test_evaluate_hashtag_without_a_language_says_what_is_missing():
    proc = subprocess.run([sys.executable, "-m", "training", "evaluate", "hashtag", "--data", "x"],
                          cwd=REPO_ROOT, capture_output=True, text=True, timeout=60)
    assert proc.returncode == 2 and "needs --lang" in proc.stderr


@pytest.mark.parametrize("task", ["headline", "constrained-headline"])
def test_evaluate_headlines_prints_rouge_p_r_f_as_last_json_line(task):
    """The issue's contract, with the shipped English models on four hand-written articles."""
    extra = ["--strategy", "tok-f"] if task == "constrained-headline" else []
    out = run_cli("evaluate", task, "--data", str(DATA / "headline_en_sample.jsonl"), *extra)
    result = last_json(out.stdout)
    assert result["articles"] == 4 and result["lang"] == "en"
    for key in ("rouge1", "rouge2", "rougeL"):
        assert set(result[key]) == {"p", "r", "f"}
        assert all(0.0 <= v <= 1.0 for v in result[key].values())
    if task == "constrained-headline":
        assert result["success_rate"] == 1.0 and result["strategy"] == "tok-f"
        assert isinstance(result["ald"], float)


def test_compare_of_a_model_with_itself_finds_exactly_no_difference():
    """Both models decode the same articles, so a model against itself differs by zero on
    every article, and the split by phrase inclusion covers every article."""
    model = str(shipped("constrained_headline_generator", "headline_en.pt"))
    out = run_cli("compare", "constrained-headline", "--data",
                  str(DATA / "headline_en_sample.jsonl"), "--model", model, "--model", model,
                  "--strategy", "seq-b")
    result = last_json(out.stdout)
    assert result["articles"] == 4 and result["a"] == result["b"]
    for name in ("rouge1", "rouge2", "rougeL"):
        assert result["b_minus_a"][name] == {"diff": 0.0, "low": 0.0, "high": 0.0}
    split = result["by_a_inclusion"]
    assert split["included"]["articles"] == 4 and split["missed"]["articles"] == 0


def test_compare_needs_two_models():
    model = str(shipped("headline_generator", "headline_en.pt"))
    with pytest.raises(subprocess.CalledProcessError) as failure:
        run_cli("compare", "headline", "--data", str(DATA / "headline_en_sample.jsonl"),
                "--model", model)
    assert "exactly two --model" in failure.value.stderr
