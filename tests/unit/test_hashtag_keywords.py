"""The keyword model of the post's words, and the calibration that ranks them against the
generator's hashtags."""

from collections import Counter

import pytest

from nlp_models.beam import Hypothesis
from nlp_models.hashtag.keywords import (
    FEATURES,
    KeywordModel,
    KeywordStats,
    PostText,
    features,
    hashtag_words,
)
from nlp_models.hashtag.predictor import Calibration, Candidate, HashtagPredictor
from nlp_models.hashtag.text import post_candidate_words, post_candidates, zh_segmenter, zh_tokens
from training.hashtag.data import Pair
from training.hashtag.keywords import collect_stats, train_keywords
from training.hashtag.tune import fit_calibration, held_out_set

STATS = KeywordStats(posts=100, df={"the": 90, "rain": 10, "calgary": 2},
                     tag_words={"yyc": 5, "rain": 2}, tags={"yyc": 5, "rain": 2}, lang="en")


def feature(words: list[str], text: str, **own) -> dict[str, float]:
    values = features(words, PostText.read(text, "en"), STATS, **own)
    return dict(zip(FEATURES, values, strict=True))


def test_a_word_no_training_post_has_is_the_rarest_and_was_never_a_hashtag():
    rare = feature(["snaptu"], "loving Snaptu on my phone")
    assert rare["idf"] == pytest.approx(4.6052, abs=1e-4)  # log(100 / 1), the maximum
    assert rare["tag_count"] == 0.0 and rare["tag_word_count"] == 0.0
    assert feature(["rain"], "rain again")["idf"] < rare["idf"]


def test_a_training_post_s_own_hashtags_and_document_count_are_left_out():
    own = feature(["rain"], "rain again", own_words=Counter({"rain": 2}),
                  own_tags=Counter({"rain": 2}), own_post=True)
    assert own["tag_count"] == 0.0 and own["tag_word_count"] == 0.0
    assert own["idf"] == pytest.approx(feature(["rain"], "rain")["idf"] + 0.0953, abs=1e-4)


def test_names_position_pairs_and_repeats_are_read_from_the_post():
    text = "Flood in Calgary, calgary flood again <url>"
    assert feature(["calgary"], text)["cased"] == 0.0  # also written in lower case
    assert feature(["flood"], "Flood in Calgary")["cased"] == 1.0
    pair = feature(["flood", "again"], text)
    assert pair["pair"] == 1.0 and pair["chars"] == len("floodagain")
    assert feature(["again"], text)["position"] == pytest.approx(5 / 6)
    assert feature(["calgary"], text)["repeats"] == 2.0


def test_chinese_candidates_are_read_as_jieba_words_and_are_never_cased():
    text = "今天国内油价下调"
    assert post_candidate_words(text, "zh")[-2:] == [["国内", "油价"], ["油价", "下调"]]
    assert post_candidates(text, "zh") == [list("".join(w)) for w in post_candidate_words(text,
                                                                                          "zh")]
    stats = KeywordStats(posts=10, df={"油价": 4}, tag_words={"油价": 3}, tags={"油价下调": 1},
                         lang="zh")
    post = PostText.read(text, "zh")
    values = dict(zip(FEATURES, features(["油价", "下调"], post, stats), strict=True))
    assert post.tokens == ["今天", "国内", "油价", "下调"]
    assert values["cased"] == 0.0 and values["pair"] == 1.0 and values["chars"] == 4.0
    assert values["position"] == 0.5 and values["tag_count"] == pytest.approx(0.6931, abs=1e-4)
    assert hashtag_words("油价下调", "zh") == ["油价", "下调"]


def test_the_keyword_model_learns_which_words_become_hashtags_and_survives_a_round_trip():
    # users tag the rare, capitalised place name, never the common word
    pairs = [Pair(f"Stuck in {city} traffic again today", [city]) for city in
             ("Calgary", "Boston", "Denver", "Austin", "Dallas", "Toronto", "Chicago")] * 20
    model = train_keywords(pairs, "en", batch=64)
    city, common = model.log_probs([["calgary"], ["traffic"]], "Calgary traffic is bad")
    assert city > common
    again = KeywordModel.from_state(model.to_state())
    assert again.log_probs([["calgary"], ["traffic"]], "Calgary traffic is bad") == \
        pytest.approx([city, common])
    assert collect_stats(pairs, "en").posts == len(pairs)


def cand(score: float, keyword: float | None = None) -> Candidate:
    """A candidate whose rank score (λ = 0, no length penalty) is `score`."""
    return Candidate(Hypothesis([7], score, True, 0.0), 0.0, keyword)


def test_calibrated_log_odds_put_both_kinds_on_one_scale():
    calibration = Calibration(generated=(0.5, -2.0), post=(1.0, 1.0))
    favourite, word = cand(-1.0), cand(0.0, keyword=-3.0)
    assert calibration.log_odds(favourite, 0.0) == pytest.approx(-2.5)
    assert calibration.log_odds(word, 0.0) == pytest.approx(-2.0)  # the post word wins
    assert Calibration().log_odds(favourite, 0.0) == -1.0  # identity before tuning


def test_calibration_learns_that_on_the_held_out_source_post_words_are_right_and_favourites_not():
    found = [[cand(-0.5), cand(-4.0, keyword=-1.0), cand(-4.0, keyword=-5.0)]
             for _ in range(50)]
    labels = [[0.0, 1.0, 0.0] for _ in range(50)]
    calibration = fit_calibration(found, labels, weight=0.0)
    odds = [calibration.log_odds(c, 0.0) for c in found[0]]
    assert odds[1] > odds[0] and odds[1] > odds[2]
    assert calibration.post[0] > 0  # a likelier keyword is likelier right


def test_with_a_keyword_model_the_post_s_words_are_ranked_by_it(tmp_path, monkeypatch):
    from tests.unit.test_hashtag_rerank import english_predictor

    predictor: HashtagPredictor = english_predictor(tmp_path, known=["love"])
    stats = KeywordStats(posts=10, df={}, tag_words={}, tags={}, lang="en")
    predictor.keywords = KeywordModel(stats)
    # the keyword model's logit is the word length: the longest word is the likeliest
    monkeypatch.setattr(KeywordModel, "forward", lambda self, x: x[:, FEATURES.index("chars")])
    out = predictor.generate(["the boston marathon is on today"], beam=2, n_best=20)[0]
    words = [w for w, _ in out.ranked]
    assert words.index(["boston", "marathon"]) < words.index(["marathon"]) < \
        words.index(["boston"])
    offered = predictor.candidates(["the boston marathon is on today"], 2, 2, True)[0][0]
    post = [c for c in offered if c.keyword is not None]
    assert len(post) == 4 and all(c.hyp.logprob == 0.0 and c.prior == 0.0 for c in post)


def test_a_chinese_post_s_words_reach_the_keyword_model_as_jieba_words(tmp_path, monkeypatch):
    from tests.unit.test_hashtag_rerank import chinese_predictor

    predictor: HashtagPredictor = chinese_predictor(tmp_path, {"post_candidates": True})
    predictor.keywords = KeywordModel(KeywordStats(posts=10, df={}, tag_words={}, tags={},
                                                   lang="zh"))
    seen: list[list[str]] = []
    monkeypatch.setattr(KeywordModel, "log_probs",
                        lambda self, words, text: seen.extend(words) or [-1.0] * len(words))
    out = predictor.generate(["今天国内油价下调"], beam=2, n_best=20)[0]
    assert ["油价", "下调"] in seen and ["国内"] in seen
    assert "油价下调" in {tag for tag, _ in out.hashtags()}


def test_the_held_out_set_must_be_named_and_be_one_of_the_dev_files():
    dev = ["../shared/data/hashtag/en/dev.jsonl", "data/hashtag/en/dev_ood.jsonl"]
    assert held_out_set("data/hashtag/en/dev_ood.jsonl", dev) == dev[1]
    with pytest.raises(SystemExit, match="--held-out"):
        held_out_set(None, dev)
    with pytest.raises(SystemExit, match="must be one of the --dev files"):
        held_out_set("data/hashtag/en/unseen.jsonl", dev)


def test_chinese_training_topics_stay_whole_and_jieba_s_own_dictionary_is_untouched():
    assert "华晨宇" not in zh_tokens("华晨宇的高音")  # jieba alone: 华晨 + 宇
    segmenter = zh_segmenter(["华晨宇"])
    assert "华晨宇" in zh_tokens("华晨宇的高音", segmenter)
    assert "华晨宇" not in zh_tokens("华晨宇的高音")
    pairs = [Pair("华晨宇的高音", ["华晨宇"]), Pair("油价下调", ["油价", "2020高考"])]
    assert collect_stats(pairs, "zh").phrases == ["华晨宇", "油价"]
    model = KeywordModel(collect_stats(pairs, "zh"))
    assert ["华晨宇"] in post_candidate_words("华晨宇的高音", "zh", model.segmenter)
