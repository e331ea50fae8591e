"""The clause picker (nlp_models/headline/picker.py): which spans of a Chinese article are
candidates, their features, and the served contract: the best headline is a span of the
article, the generated ones follow it."""

from __future__ import annotations

import pytest
import torch

from nlp_models.headline.model import HeadlineConfig, HeadlineGenerator
from nlp_models.headline.picker import (
    CAPTION,
    DENSE_FEATURES,
    LINK,
    MIN_CHARS,
    RULES,
    SOURCE,
    ClausePicker,
    balanced,
    candidates,
    features,
    headline_like,
    without_byline,
)
from nlp_models.headline.predictor import HeadlinePredictor, save_checkpoint
from nlp_models.headline.sentences import sentences
from nlp_models.headline.vocab import CharVocab

ARTICLE = ("新华社北京11月3日电，国家统计局今天发布数据，前三季度经济增长百分之五。"
           "专家表示，消费是主要动力。\n记者：王明")


@pytest.mark.parametrize(("first", "rest"), [
    ("新浪娱乐讯 据香港媒体报道，艺人猝死", "据香港媒体报道，艺人猝死"),
    ("中新社约翰内斯堡3月30日电 南非排外势力再次蠢蠢欲动", "南非排外势力再次蠢蠢欲动"),
    ("本报讯（记者 邹强 通讯员 赵程）消防演练今天举行", "消防演练今天举行"),
])
def test_no_candidate_carries_the_byline_that_opens_the_article(first, rest):
    picker = ClausePicker()
    sents, cands = picker.candidates(first + "。专家表示，消费是主要动力。")
    assert sents[0] == rest + "。" and without_byline([first]) == [rest]
    assert not any(c.text.startswith(first[:3]) for c in cands)


def test_a_picker_keeps_the_candidate_rules_it_was_trained_with():
    article = "新浪娱乐讯 他说：“我们今天一定会赢，明天也会赢。”比赛在北京举行。"
    state = ClausePicker().to_state()
    assert state["rules"] == RULES == 6
    del state["rules"]  # a picker published before the byline and balance rules
    old = ClausePicker.from_state(state)
    sents, cands = old.candidates(article)
    assert sents[0].startswith("新浪娱乐讯") and not all(balanced(c.text) for c in cands)
    sents, cands = ClausePicker().candidates(article)
    assert sents[0].startswith("他说") and all(balanced(c.text) for c in cands)


@pytest.mark.parametrize("sentence", ["不少饶舌界歌手得知他的死讯", "云通讯 今天发布新品",
                                      "中国江苏网6月19日讯"])
def test_words_that_end_in_the_byline_characters_stay(sentence):
    assert without_byline([sentence, "二"]) == [sentence, "二"]


def test_candidates_are_runs_of_up_to_three_clauses_without_their_closing_mark():
    sents = sentences(ARTICLE, "zh")
    assert sents == ["新华社北京11月3日电，国家统计局今天发布数据，前三季度经济增长百分之五。",
                     "专家表示，消费是主要动力。", "记者：王明"]
    texts = [c.text for c in candidates(sents, rules=3)]  # rules 4 leave out the credit
    assert "新华社北京11月3日电" in texts  # one clause, its comma dropped
    assert "国家统计局今天发布数据，前三季度经济增长百分之五。" in texts  # two clauses
    assert ARTICLE.splitlines()[0].split("专家")[0] in texts  # the whole first sentence
    assert "专家表示" not in texts  # shorter than MIN_CHARS
    assert all(len(t) >= MIN_CHARS for t in texts[:-1])
    assert texts[-1] == "记者：王明"  # no run is long enough: the sentence is taken whole
    assert all(t in ARTICLE for t in texts)


def test_spans_the_degenerate_measure_would_flag_are_no_candidates():
    assert headline_like("国家统计局发布数据")
    assert not headline_like("王明。")  # under four characters
    assert not headline_like("金庸武侠剧和金庸武侠剧")  # a trigram twice
    assert not headline_like("哈哈哈大笑")  # a character three times in a row


@pytest.mark.parametrize(("span", "ok"), [
    ("“雷人”的禁毒标语", True), ("金庸在《神雕侠侣》如是说", True), ("（图）男子落水获救", True),
    ("“是防民甚于防兵", False), ("34岁，达州市通川区人）过程中遭到嫌疑人", False),
    ("”他说，“我们会赢", False), ("蒋介石说：“我不穿", False),
])
def test_a_span_leaves_no_bracket_or_quote_open_or_unopened(span, ok):
    assert balanced(span) is ok


@pytest.mark.parametrize(("span", "caption"), [
    ("图为卢丽手捧“寻女启事”", True), ("通缉令 （资料图）", True), ("新华社记者 张三 摄", True),
    ("警方供图", True), ("图片来源：网络", True), ("该片将于明年开始拍摄", False),
    ("图书馆开放时间延长", False), ("陕西米脂县一女子脖颈卡防护栏后死亡", False),
])
def test_photo_captions_and_credits_are_told_from_news(span, caption):
    assert bool(CAPTION.search(span)) is caption


def test_a_caption_is_no_candidate_for_a_picker_with_the_caption_rule():
    sents = ["图为卢丽手捧“寻女启事”。", "卢丽寻找失踪女儿已有十年。"]
    assert [c.text for c in candidates(sents, rules=2)][0].startswith("图为")
    assert [c.text for c in candidates(sents)] == ["卢丽寻找失踪女儿已有十年。"]


@pytest.mark.parametrize(("span", "source"), [
    ("本文原载新京报", True), ("来源：科技日报百岁老人通常能延缓衰老", True),
    ("（文/yui、布布）月九剧作为富士台曾经的招牌档", True), ("责任编辑：张三", True),
    ("记者：王明", True), ("转载请注明出处", True), ("本文来自太平洋电脑网提起诺基亚", True),
    ("原标题：吃夜宵遭拒踢垃圾桶出气", False), ("记者从市公安局获悉，嫌疑人已落网", False),
    ("新京报记者走访了多家医院", False), ("文化部发布新规", False),
])
def test_source_and_credit_lines_are_told_from_news(span, source):
    assert bool(SOURCE.search(span)) is source


def test_a_source_line_is_no_candidate_for_a_picker_with_the_source_rule():
    sents = ["本文原载新京报。", "卢丽寻找失踪女儿已有十年。"]
    assert [c.text for c in candidates(sents, rules=3)][0] == "本文原载新京报。"
    assert [c.text for c in candidates(sents)] == ["卢丽寻找失踪女儿已有十年。"]


@pytest.mark.parametrize(("span", "link"), [
    ("http://t.cn/EwhKVKS", True), ("'//n.sinaimg.cn/sports/320/w640h480/x.jpg'", True),
    ("投稿邮箱：2479502403@qq.com", True), ("详见www.gov.cn", True), ("详情见http", True),
    ("拥有独立域名weishi.com。", False), ("苏宁注册“suningbank.com”的域名", False),
])
def test_links_and_mail_addresses_are_told_from_news(span, link):
    assert bool(LINK.search(span)) is link


def test_neither_a_link_nor_the_clause_after_a_credits_colon_is_a_candidate():
    sents = ["来源：猫眼电影蓝洁瑛去世之后，演艺界人士纷纷悼念。", "详情见http://t.cn/EwhKVKS。"]
    texts = [c.text for c in candidates(sents)]
    assert texts == ["演艺界人士纷纷悼念。"]
    assert "猫眼电影蓝洁瑛去世之后" in [c.text for c in candidates(sents, rules=4)]


def test_no_candidate_is_cut_from_inside_a_quote():
    sents = ["他说：“我们今天一定会赢，明天也会赢。”比赛在北京举行，观众很多。"]
    assert all(balanced(c.text) for c in candidates(sents))
    assert any(c.text.startswith("他说：“我们今天") for c in candidates(sents))
    texts = [c.text for c in candidates(["钱德勒。", "金庸武侠剧和金庸武侠剧的故事。"])]
    assert texts == []


def test_the_whole_flag_marks_exactly_the_full_sentences():
    cands = candidates(sentences(ARTICLE, "zh"), rules=3)  # rules 4 leave out the credit
    assert {c.text for c in cands if c.whole} == {
        "新华社北京11月3日电，国家统计局今天发布数据，前三季度经济增长百分之五。",
        "专家表示，消费是主要动力。", "记者：王明"}


def test_max_chars_leaves_out_long_spans():
    texts = [c.text for c in candidates(sentences(ARTICLE, "zh"), max_chars=12)]
    assert texts and all(len(t) <= 12 for t in texts)
    assert "新华社北京11月3日电" in texts


def test_features_have_one_row_and_some_buckets_per_candidate():
    sents = sentences(ARTICLE, "zh")
    cands = candidates(sents)
    dense, buckets = features(sents, cands)
    assert dense.shape == (len(cands), DENSE_FEATURES)
    assert all(row for row in buckets)
    single = candidates(["天气很好的一天"])  # one sentence: no rest to compare with
    assert features(["天气很好的一天"], single)[0].isfinite().all()


def test_a_picker_picks_a_span_of_the_article_with_a_log_probability():
    torch.manual_seed(0)
    picker = ClausePicker()
    pick = picker.pick(ARTICLE)
    assert pick is not None and pick.text in ARTICLE and pick.log_prob <= 0
    assert picker.pick("") is None and picker.pick(" \n ") is None


def test_training_signal_moves_the_pick_and_the_state_round_trips():
    sents = sentences(ARTICLE, "zh")
    cands = candidates(sents)
    target = next(i for i, c in enumerate(cands) if "增长" in c.text and not c.whole)
    picker = ClausePicker()
    optimizer = torch.optim.Adam(picker.parameters(), lr=0.05)
    dense, buckets = features(sents, cands)
    for _ in range(50):
        loss = -picker(dense, buckets).log_softmax(0)[target]
        optimizer.zero_grad()
        loss.backward()
        optimizer.step()
    assert picker.pick(ARTICLE).text == cands[target].text
    restored = ClausePicker.from_state(picker.to_state())
    assert restored.pick(ARTICLE).text == cands[target].text


@pytest.fixture(scope="module")
def predictor_with_picker(tmp_path_factory):
    torch.manual_seed(0)
    vocab = CharVocab(sorted(set(ARTICLE)))
    model = HeadlineGenerator(HeadlineConfig(len(vocab), variant="xl-cc", d_model=32, n_heads=2,
                                             enc_layers=1, dec_layers=1, d_ff=64,
                                             segment_len=16, mem_len=16, max_source=128,
                                             max_target=12))
    path = tmp_path_factory.mktemp("zh") / "headline_zh.pt"
    save_checkpoint(path, model, vocab, "zh", "generator",
                    {"run": "t", "picker": ClausePicker().to_state()})
    return HeadlinePredictor.load(path)


def test_served_best_headline_is_the_picked_span_then_generated_ones(predictor_with_picker):
    p = predictor_with_picker
    [one] = p.headlines([ARTICLE], beam=2, n_best=1)
    assert one.best == p.picker.pick(ARTICLE).text
    [three] = p.headlines([ARTICLE], beam=3, n_best=3)
    assert three.candidates[0][0] == one.best and len(three.candidates) >= 2
    assert len({text for text, _ in three.candidates}) == len(three.candidates)


def test_the_generator_judges_the_shortlist_when_it_has_a_weight(predictor_with_picker):
    p = predictor_with_picker
    shortlist = p.picker.shortlist(ARTICLE)
    assert len(shortlist) > 2 and shortlist[0] == p.picker.pick(ARTICLE)
    judged = p.judge(ARTICLE, [s.text for s in shortlist])
    assert len(judged) == len(shortlist) and all(-50 < j < 0 for j in judged)
    def served() -> str:
        return p.headlines([ARTICLE], beam=2, n_best=1)[0].best

    assert served() == p.picker.pick(ARTICLE).text  # weight 0: the picker alone
    p.picker.judge_weight = 1000.0  # the generator decides
    try:
        best = max(range(len(judged)), key=judged.__getitem__)
        assert served() == shortlist[best].text
    finally:
        p.picker.judge_weight = 0.0


def test_an_article_without_a_sentence_falls_back_to_generation(predictor_with_picker):
    [out] = predictor_with_picker.headlines(["。。。"], beam=2, n_best=1)
    assert predictor_with_picker.picker.pick("。。。") is None
    assert out.truncated is False  # generated (possibly nothing to say), never an error


def test_a_span_opening_with_a_connective_is_no_candidate_under_rules_6():
    article = ("勇士队昨天主场输给雄鹿队。而且勇士还遭遇了雪上加霜的情况，库里再次受伤。"
               "并购案今天宣布。")
    texts = [c.text for c in ClausePicker().candidates(article)[1]]
    assert texts and not any(t.startswith("而且") for t in texts)
    assert any(t.startswith("库里") for t in texts) and any(t.startswith("并购") for t in texts)
    older = [c.text for c in ClausePicker(rules=5).candidates(article)[1]]
    assert any(t.startswith("而且") for t in older)
