"""The second unseen-source Chinese test set (training/headline/portal.py)."""

import json

import pytest

from training.headline.portal import FOLDER, build, site

BODY = "中新社北京3月30日电 " + "某队在主场以三比一击败对手，取得联赛三连胜。" * 10


def _item(url: str, title: str, content: str) -> str:
    return json.dumps({"url": url, "title": title, "content": content, "time": 1463021700},
                      ensure_ascii=False)


def _checkout(root, files: dict[str, list[str]]):
    folder = root / FOLDER
    folder.mkdir(parents=True)
    for name, lines in files.items():
        (folder / name).write_text("\n".join(lines) + "\n", encoding="utf-8")
    return root


def test_a_url_names_its_site():
    assert site("http://toutiao.com/i6283632153850806785/") == "toutiao.com"
    assert site("https://www.news.qq.com/a/1.htm") == "news.qq.com"


def test_only_new_news_with_a_long_body_no_print_title_and_no_sina_is_kept(tmp_path):
    portal = _checkout(tmp_path / "portal", {
        "0.txt": [_item("http://toutiao.com/i1/", "某队主场三连胜", BODY),
                  _item("http://toutiao.com/i1/", "某队主场三连胜", BODY),
                  _item("http://toutiao.com/i2/", "某队又赢了一场比赛", "太短了")],
        "1.txt": [_item("http://news.163.com/a.html", "某公司发布新手机",
                        "（原标题：某公司发布新手机） " + BODY),
                  _item("http://news.qq.com/b.htm", "某队赢球后庆祝", "据新浪体育报道，" + BODY)],
    })
    result = build(portal, tmp_path / "data", tmp_path / "out")
    rows = [json.loads(line) for line in (tmp_path / "out/zh/unseen_portal.jsonl").open()]
    assert [r["headline"] for r in rows] == ["某队主场三连胜"]
    assert rows[0]["phrase"] in rows[0]["article"] and rows[0]["id"] == "zh-portal-0000"
    assert rows[0]["site"] == "toutiao.com" and rows[0]["date"] == "2016"
    assert result["sources"]["toutiao.com"] == {"read": 3, "kept": 1, "dropped_duplicate_url": 1,
                                                "dropped_short_body": 1}
    assert result["sources"]["news.163.com"] == {"read": 1, "dropped_original_title": 1}
    assert result["sources"]["news.qq.com"] == {"read": 1, "dropped_mentions_sina": 1}


def test_a_checkout_without_the_crawled_items_is_refused(tmp_path):
    with pytest.raises(SystemExit, match="58c576e"):
        build(tmp_path, tmp_path / "data", tmp_path / "out")
