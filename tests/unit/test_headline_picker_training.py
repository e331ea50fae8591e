"""`python -m training picker` on a small data set: the picker is trained, its epoch and
judge weight are chosen on the dev set, and the checkpoint it writes serves the picked span."""

from __future__ import annotations

import json
import random

import pytest
import torch

from nlp_models.headline.predictor import HeadlinePredictor
from training.headline.picker import JUDGE_WEIGHTS, set_rules, train_picker
from training.repository import serving_dir

SERVED_ZH = serving_dir("headline_generator") / "headline_zh.pt"  # its picker is replaced

PLACES = ["北京", "上海", "广州", "深圳", "杭州", "成都", "武汉", "西安"]
EVENTS = ["发布新能源汽车补贴政策", "举办国际马拉松比赛", "开通第三条地铁线路",
          "启动老旧小区改造工程", "召开科技创新大会", "推出人才引进计划"]


def pairs(n: int, seed: int) -> list[dict]:
    """Articles whose headline is the news clause of the second sentence, after a byline."""
    rng = random.Random(seed)
    out = []
    for _ in range(n):
        place, event = rng.choice(PLACES), rng.choice(EVENTS)
        article = (f"本报记者{rng.choice(PLACES)}报道，{rng.randint(1, 12)}月{rng.randint(1, 28)}日"
                   f"消息。{place}市政府今天宣布，{place}{event}，市民反响热烈。"
                   f"相关负责人表示，后续还将有更多措施。")
        out.append({"article": article, "headline": f"{place}{event}"})
    return out


def test_training_chooses_epoch_and_judge_weight_and_the_checkpoint_serves_spans(tmp_path):
    for name, rows in (("train", pairs(40, 0)), ("dev", pairs(12, 1))):
        (tmp_path / f"{name}.jsonl").write_text(
            "".join(json.dumps(r, ensure_ascii=False) + "\n" for r in rows), encoding="utf-8")
    config = tmp_path / "picker.toml"
    config.write_text(f"""
[data]
train = [{{ path = "{tmp_path / 'train.jsonl'}" }}]
dev = [{{ name = "dev", path = "{tmp_path / 'dev.jsonl'}" }}]

[train]
tau = 0.2
epochs = 2
lr = 0.01
seed = 0
""")
    out = tmp_path / "run" / "best.pt"
    result = train_picker(str(config), str(SERVED_ZH), str(out))
    record = json.loads((tmp_path / "run" / "run.json").read_text())
    assert result["best_epoch"] in (1, 2) and len(record["curve"]) == 3  # 2 epochs + judge
    judged = record["curve"][-1]
    assert judged["judge_weight"] in JUDGE_WEIGHTS
    assert set(judged["by_weight"]) == {str(w) for w in JUDGE_WEIGHTS}
    assert result["mean"] > 0.8  # the news clause is learnable: picked on most dev articles
    predictor = HeadlinePredictor.load(out)
    assert predictor.picker is not None
    assert predictor.picker.judge_weight == judged["judge_weight"]
    dev = pairs(5, 2)
    found = predictor.headlines([p["article"] for p in dev], beam=2, n_best=1)
    for pair, headlines in zip(dev, found, strict=True):
        assert headlines.best in pair["article"]


def test_set_rules_keeps_the_pickers_weights_and_records_the_derivation(tmp_path):
    out = tmp_path / "rules" / "best.pt"
    result = set_rules(str(SERVED_ZH), 2, str(out))
    before = torch.load(SERVED_ZH, map_location="cpu", weights_only=False)["meta"]["picker"]
    after = torch.load(out, map_location="cpu", weights_only=False)["meta"]["picker"]
    assert result["rules"] == after["rules"] == 2
    assert after["judge_weight"] == before["judge_weight"]
    assert all(torch.equal(after["weights"][k], v) for k, v in before["weights"].items())
    record = json.loads((tmp_path / "rules" / "run.json").read_text())
    assert record["derived_from"]["bytes"] == SERVED_ZH.stat().st_size
    assert record["rules"]["after"] == 2
    assert HeadlinePredictor.load(out).picker.rules == 2


def test_set_rules_refuses_unknown_rules_and_checkpoints_without_a_picker(tmp_path):
    with pytest.raises(SystemExit, match="rules 1 to"):
        set_rules(str(SERVED_ZH), 99, str(tmp_path / "x.pt"))
    bare = tmp_path / "bare.pt"
    state = torch.load(SERVED_ZH, map_location="cpu", weights_only=False)
    state["meta"] = {k: v for k, v in state["meta"].items() if k != "picker"}
    torch.save(state, bare)
    with pytest.raises(SystemExit, match="no clause picker"):
        set_rules(str(bare), 2, str(tmp_path / "y.pt"))
