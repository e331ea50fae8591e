"""The extra-data conversion (training/headline/extra.py) on a tiny hand-made data folder,
and the training config's extra-data plumbing."""

import gzip
import json

from training.headline.extra import (
    EN_FILES,
    ZH_FILE,
    build,
    choose_phrase_en,
    choose_phrase_zh,
    truecase,
)
from training.headline.train import extra_data, selection_score

BODY = ("Senator Olympia Snowe of Maine said on Monday that the Senate passed her bill to "
        "help small businesses in Maine. The bill now goes to the House. It was passed "
        "unanimously. Snowe thanked her colleagues.")


def _gz(path, rows):
    path.parent.mkdir(parents=True, exist_ok=True)
    with gzip.open(path, "wt", encoding="utf-8") as f:
        for r in rows:
            f.write(json.dumps(r, ensure_ascii=False) + "\n")


def _en(id_, headline, article=BODY, source="x"):
    return {"id": id_, "source": source, "date": "2006-01-01", "headline": headline,
            "article": article}


def _data(tmp_path):
    extra = tmp_path / "extra"
    _gz(extra / "headline_en" / EN_FILES["allsides"], [
        _en("a1", "Senate  passes   small business bill", BODY),
        _en("a2", "Senate passes small business bill", BODY),  # duplicate after spaces
        _en("a3", "Bill", BODY),  # short
        _en("a4", "Reused test pair headline here", "Existing test article text. More."),
        _en("a5", "A BBC story about Maine", BODY, source="BBC News"),  # reserved
    ])
    _gz(extra / "headline_en" / EN_FILES["senate"], [
        _en("s1", "SEN. SNOWE PRAISES SENATE PASSAGE OF MAINE BILL",
            BODY.replace("small", "Maine small")),
        _en("s2", "Washington, D.C. -- Today the Senate passed a bill", BODY),
    ])
    _gz(extra / "headline_en" / EN_FILES["doj"], [])
    _gz(extra / "headline_en" / EN_FILES["fakehealth"], [
        _en("f1", "New drug helps Maine patients sleep", "A new drug helps patients in Maine "
            "sleep, doctors said. It is cheap. It works.")])
    zh = [{"date": f"2013010{i}", "title": "李克强主持召开国务院常务会议",
           "article": f"国务院总理李克强{i}日主持召开国务院常务会议，部署工作{i}。", "url": ""}
          for i in range(1, 6)]
    zh.append({"date": "20260101", "title": "新年新气象各地忙生产",
               "article": "新年伊始，各地忙生产，新年新气象。", "url": ""})
    _gz(extra / "headline_zh" / ZH_FILE, zh)
    for lang in ("en", "zh"):
        root = tmp_path / "headline" / lang
        root.mkdir(parents=True)
        test = {"article": "Existing test article text. More.",
                "headline": "Something else entirely", "phrase": "Something"}
        (root / "test.jsonl").write_text(json.dumps(test) + "\n")
    return tmp_path


def _lines(path):
    return [json.loads(line) for line in path.read_text().splitlines()]


def test_build_filters_counts_and_holds_out_dev(tmp_path):
    data = _data(tmp_path)
    result = build(data, tmp_path / "out")
    src = result["sources"]
    assert src["allsides"] == {"read": 5, "dropped_duplicate": 1, "dropped_short": 1,
                               "dropped_overlaps_existing": 1, "dropped_reserved_source": 1,
                               "kept_train_extra": 1}
    assert src["senate"]["dropped_senate_dateline"] == 1 and src["senate"]["truecased"] == 1
    assert src["fakehealth"]["kept_dev_ood"] == 1
    assert src["cctv"]["dropped_title_cap"] == 2 and src["cctv"]["kept_train_extra"] == 3
    assert src["cctv"]["kept_dev_ood"] == 1

    train = _lines(tmp_path / "out" / "en" / "train_extra.jsonl")
    assert [r["id"] for r in train] == ["a1", "s1"]
    assert train[0]["headline"] == "Senate passes small business bill"
    senate = train[1]
    assert senate["register"] == "press_release" and senate["headline_orig"].isupper()
    assert senate["headline"] == "Sen. Snowe praises Senate passage of Maine bill"
    assert senate["phrase"] in senate["headline"]
    dev = _lines(tmp_path / "out" / "en" / "dev_ood.jsonl")
    assert [r["source"] for r in dev] == ["fakehealth"]
    zh_dev = _lines(tmp_path / "out" / "zh" / "dev_ood.jsonl")
    assert [r["date"] for r in zh_dev] == ["20260101"]


def test_truecase_uses_the_articles_casing():
    assert truecase("SNOWE BACKS MAINE FISHERMEN", "Yesterday Snowe met fishermen in Maine.") \
        == "Snowe backs Maine fishermen"


def test_phrases_are_headline_substrings_found_in_the_article():
    assert choose_phrase_en("Senate passes small business bill", BODY) == ("Senate", True)
    assert choose_phrase_en("Olympia Snowe wins vote", BODY) == ("Olympia Snowe", True)
    title = "李克强主持召开国务院常务会议"
    phrase, found = choose_phrase_zh(title, title + "。")
    assert found and phrase in title and len(phrase) >= 2


def test_config_extra_data_filters_registers(tmp_path):
    path = tmp_path / "train_extra.jsonl"
    rows = [{"id": "1", "article": "a b c", "headline": "x y z", "register": "news"},
            {"id": "2", "article": "d e f", "headline": "u v w", "register": "press_release"}]
    path.write_text("".join(json.dumps(r) + "\n" for r in rows))
    dev = tmp_path / "dev_ood.jsonl"
    dev.write_text(json.dumps(rows[0]) + "\n")
    extra, ood = extra_data({"data": {"train_extra": [str(path)], "registers": ["news"],
                                      "dev_ood": str(dev)}})
    assert [p.id for p in extra] == ["1"] and len(ood) == 1
    assert extra_data({}) == ([], [])


def test_selection_weighs_both_dev_sets_equally():
    assert selection_score({"rougeL": 0.3}, None) == 0.3
    assert selection_score({"rougeL": 0.3}, {"rougeL": 0.1}) == 0.2


def test_section_labels_are_cut_from_headlines():
    from training.headline.extra import strip_kicker

    assert strip_kicker("OPINION: The Fed should wait") == ("The Fed should wait", True)
    assert strip_kicker("Fact check: Trump's claim on jobs") == ("Trump's claim on jobs", True)
    assert strip_kicker("EXCLUSIVE - Senate deal near") == ("Senate deal near", True)
    # a label only at the start and followed by its separator; names stay
    assert strip_kicker("Trump: I will sign the bill") == ("Trump: I will sign the bill", False)
    assert strip_kicker("Analysis shows rates rise") == ("Analysis shows rates rise", False)
