"""The unseen-source Chinese test set (training/headline/sina.py)."""

import json

import pytest

from training.headline.sina import CHANNELS, article_text, build

BODY = "新浪娱乐讯 " + "北京时间11月5日，某队在主场以三比一击败对手，取得联赛三连胜。" * 8


def test_the_body_loses_a_leading_repeat_of_its_title_and_its_indentation():
    raw = "           三连胜 北京主场击败对手\n\n\n\u3000\u3000本报讯 北京主场击败对手\n"
    assert article_text(raw, "三连胜 北京主场击败对手") == "本报讯 北京主场击败对手"


def _checkout(root, files):
    for channel in CHANNELS:
        (root / channel).mkdir(parents=True)
    for (channel, title), body in files.items():
        (root / channel / f"{title}.txt").write_text(body, encoding="utf-8")
    return root


def test_only_news_with_a_long_body_and_no_print_title_is_kept(tmp_path):
    sina = _checkout(tmp_path / "sina", {
        ("Entertainment", "某队主场三连胜"): BODY,
        ("testSport", "某队又赢了一场比赛"): "太短了",
        ("TechNews", "某公司发布新手机"): "原标题：某公司发布新手机 " + BODY,
    })
    (tmp_path / "sina" / "testEdu").mkdir()
    (tmp_path / "sina" / "testEdu" / "一百句英语口语.txt").write_text(BODY, encoding="utf-8")
    result = build(sina, tmp_path / "data", tmp_path / "out")
    rows = [json.loads(line) for line in (tmp_path / "out/zh/unseen_sina.jsonl").open()]
    assert [r["headline"] for r in rows] == ["某队主场三连胜"]
    assert rows[0]["phrase"] in rows[0]["article"] and rows[0]["id"] == "zh-sina-0000"
    assert result["sources"]["testSport"] == {"read": 1, "dropped_short_body": 1}
    assert result["sources"]["TechNews"] == {"read": 1, "dropped_original_title": 1}
    assert "testEdu" not in result["sources"]


def test_a_checkout_without_the_articles_is_refused(tmp_path):
    with pytest.raises(SystemExit, match="d1badb6"):
        build(tmp_path, tmp_path / "data", tmp_path / "out")
