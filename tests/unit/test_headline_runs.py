"""The whole-run rule of the Chinese headline generator (nlp_models/headline/runs.py): its
numbers and Latin words are the article's."""

from __future__ import annotations

import torch

from nlp_models.headline.runs import WholeRuns, alnum_runs
from nlp_models.headline.vocab import EOS, CharVocab

VOCAB = CharVocab(list("0123456789万元超增长"))
RULE = WholeRuns(VOCAB)
ART = RULE.article("今年增长100万元，2025年超５０００元", [])


def ids(text: str) -> list[int]:
    return VOCAB.encode(text)


def allowed(before: str, cut: bool = False) -> set[str]:
    logp = torch.zeros(1, len(VOCAB))
    out = RULE.block(logp, [ids(before)], [ART], cut)[0]
    return {"<eos>" if t == EOS else VOCAB.surface(t)
            for t in range(len(VOCAB)) if out[t] > float("-inf") and (t == EOS or t > 3)}


def test_alnum_runs_read_full_width_digits_as_ascii():
    assert alnum_runs("超５０００元, 3.5%") == ["5000", "3", "5"]


def test_a_number_starts_only_as_an_article_number_does():
    digits = {c for c in allowed("增长") if c.isdigit()}
    assert digits == {"1", "2", "5"}
    assert {"万", "元", "<eos>"} <= allowed("增长")  # text without digits is untouched


def test_an_unfinished_number_must_go_on_with_its_next_digit():
    assert allowed("增长10") == {"0"}  # 10 is not an article number: only 100 can follow


def test_at_the_length_limit_a_digit_must_finish_an_article_number():
    assert {c for c in allowed("超", cut=True) if c.isdigit()} == set()  # 5 is not 5000
    assert allowed("增长10", cut=True) == {"0"}  # 100 is the article's
    assert {c for c in allowed("超500", cut=True) if c.isdigit()} == {"0"}


def test_a_finished_number_may_end_or_grow_into_a_longer_one():
    after_100 = allowed("增长100")
    assert "万" in after_100 and "<eos>" in after_100
    assert not {c for c in after_100 if c.isdigit()}  # no article number begins with 1000
    assert {c for c in allowed("超202") if c.isdigit()} == {"5"}


def test_copied_unknown_digits_follow_the_rule_too():
    art = RULE.article("共有１２人", ["１", "２"])  # full-width digits copied as unknowns
    logp = torch.zeros(1, len(VOCAB) + 2)
    out = RULE.block(logp, [[len(VOCAB)]], [art])[0]  # "１" so far
    assert out[len(VOCAB) + 1] == 0 and out[VOCAB.stoi["2"]] == 0  # either "2" goes on
    assert out[VOCAB.stoi["3"]] == float("-inf") and out[EOS] == float("-inf")


# written for this test: short news items full of numbers
ARTICLES = [
    "记者从铁路部门获悉，今年春运期间全国铁路预计发送旅客5.1亿人次，同比增长6.2%，"
    "其中1月28日当天发送旅客1350万人次，创单日历史新高。",
    "国家统计局17日发布数据，2025年全年国内生产总值达到134万亿元，比上年增长5%，"
    "全年粮食产量14130亿斤，城镇新增就业1256万人。",
    "本市今年新建公园32个，改造老旧小区480个，新增停车位2.6万个，"
    "全市公园总数达到1050个，人均公园绿地面积16.5平方米。",
]


def test_the_shipped_chinese_generator_writes_only_article_numbers() -> None:
    from nlp_models.headline.predictor import HeadlinePredictor
    from training.repository import shipped

    predictor = HeadlinePredictor.load(shipped("headline_generator", "headline_zh.pt"))
    assert isinstance(predictor.words, WholeRuns)
    for article, out in zip(ARTICLES, predictor.headlines(ARTICLES), strict=True):
        for headline, _ in out.candidates:
            assert set(alnum_runs(headline)) <= set(alnum_runs(article)), headline


LATIN = CharVocab(list("2018MAmusicwrds音乐奖在举行"))
LATIN_RULE = WholeRuns(LATIN)
MAMA = LATIN_RULE.article("2018MAMA在举行，Music Awards", [])


def latin_allowed(before: str) -> set[str]:
    out = LATIN_RULE.block(torch.zeros(1, len(LATIN)), [LATIN.encode(before)], [MAMA])[0]
    return {"<eos>" if t == EOS else LATIN.surface(t)
            for t in range(len(LATIN)) if out[t] > float("-inf") and (t == EOS or t > 3)}


def test_a_latin_word_is_written_only_as_the_article_spells_it():
    assert latin_allowed("2018MAM") == {"A"}  # not 2018MAMusic...: a run must be the article's
    assert latin_allowed("2018MAMA") >= {"在", "<eos>"}  # finished: it may end
    assert {c for c in latin_allowed("在") if c.isalnum() and c.isascii()} == {"2", "M", "A"}
    assert latin_allowed("Mus") == {"i"}  # case is kept: "Mus" goes on only as "Music"
