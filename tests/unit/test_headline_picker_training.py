"""`python -m training picker` on a few shared articles: the picker is trained, its epoch and
judge weight are chosen on the dev sets, and the checkpoint it writes serves the picked span."""

from __future__ import annotations

import json

from nlp_models.headline.predictor import HeadlinePredictor
from training.headline.picker import JUDGE_WEIGHTS, read_set, train_picker
from training.repository import serving_dir

SERVED_ZH = serving_dir("headline_generator") / "headline_zh.pt"  # its picker is replaced

CONFIG = """
[data]
train = [{ shared = "headline/zh/train.jsonl", source = "ccf-bdci2019-inews", first = 40 }]
dev = [
  { name = "ccf_dev", shared = "headline/zh/dev.jsonl", source = "ccf-bdci2019-inews", first = 12 },
]

[train]
tau = 0.2
epochs = 2
lr = 0.01
seed = 0
"""


def test_training_chooses_epoch_and_judge_weight_and_the_checkpoint_serves_spans(tmp_path):
    config = tmp_path / "picker.toml"
    config.write_text(CONFIG)
    out = tmp_path / "run" / "best.pt"
    result = train_picker(str(config), str(SERVED_ZH), str(out))
    record = json.loads((tmp_path / "run" / "run.json").read_text())
    assert result["best_epoch"] in (1, 2) and len(record["curve"]) == 3  # 2 epochs + judge
    judged = record["curve"][-1]
    assert judged["judge_weight"] in JUDGE_WEIGHTS
    assert set(judged["by_weight"]) == {str(w) for w in JUDGE_WEIGHTS}
    predictor = HeadlinePredictor.load(out)
    assert predictor.picker is not None
    assert predictor.picker.judge_weight == judged["judge_weight"]
    articles = [a for a, _ in read_set({"shared": "headline/zh/dev.jsonl",
                                        "source": "ccf-bdci2019-inews", "first": 5})]
    for article, headlines in zip(articles, predictor.headlines(articles, beam=2, n_best=1),
                                  strict=True):
        assert headlines.best and headlines.best in article
