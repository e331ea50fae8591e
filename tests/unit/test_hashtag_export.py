"""Exporting a checkpoint publishes a new Triton version that keeps everything else."""

import shutil

from training.hashtag.evaluate import REPOSITORY_MODEL
from training.hashtag.export import export


def test_a_new_version_keeps_model_code_blocklist_and_the_other_language(tmp_path):
    model_dir = tmp_path / "hashtag_generator"
    shutil.copytree(REPOSITORY_MODEL, model_dir, ignore=shutil.ignore_patterns("__pycache__"))
    newest = max(int(p.name) for p in model_dir.iterdir() if p.name.isdigit())
    checkpoint = model_dir / str(newest) / "hashtag_en.pt"

    target = export(str(checkpoint), str(tmp_path))

    assert target.name == str(newest + 1)
    names = {p.name for p in target.iterdir()}
    assert {"model.py", "blocklist.txt", "hashtag_en.pt", "hashtag_zh.pt"} <= names
    assert (target / "hashtag_en.pt").read_bytes() == checkpoint.read_bytes()
