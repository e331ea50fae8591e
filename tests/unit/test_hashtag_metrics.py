"""Specification of hashtag scoring (training/hashtag/metrics.py) and the Ext.TFIDF baseline
(training/hashtag/baseline.py)."""

import json

import pytest

from training.hashtag.baseline import TfidfExtractor, evaluate_baseline
from training.hashtag.data import read_pairs
from training.hashtag.metrics import CharTokenizer, score


def rouge1(predicted, reference, lang="en"):
    return score([predicted], [predicted], [reference], lang)["rouge1"]


def test_perfect_prediction_scores_one_and_f1_at_k_follows_fixed_k():
    result = score(
        [[["boston", "strong"], ["nyc", "marathon"]]],
        [[["boston", "strong"], ["nyc", "marathon"]]],
        [["BostonStrong", "NYCMarathon"]],
        "en",
    )
    assert result["rouge1"] == result["rouge2"] == result["rougeL"] == 1.0
    assert result["f1@1"] == 0.6667  # P = 1/1, R = 1/2
    assert result["f1@5"] == 0.5714  # P = 2/5, R = 2/2
    assert result["posts"] == 1


def test_disjoint_prediction_scores_zero():
    assert rouge1([["cat", "food"]], ["DogPark"]) == 0.0


def test_hash_separators_never_count_as_matches():
    """Both strings are `x # y`; if '#' were a token they would share it."""
    assert rouge1([["cat"], ["food"]], ["dog", "park"]) == 0.0
    assert rouge1([["cat"], ["food"]], ["cat", "park"]) == 0.5


def test_empty_prediction_scores_zero():
    result = score([[]], [[]], [["BostonStrong"]], "en")
    assert result["rouge1"] == result["f1@1"] == 0.0


def test_english_rouge_stems_words():
    assert rouge1([["run"]], ["running"]) == 1.0


def test_chinese_rouge_counts_characters():
    """rouge-score's default tokenizer would delete every Chinese character."""
    assert rouge1([["武", "汉"]], ["武汉加油"], "zh") == 0.6667  # P = 2/2, R = 2/4
    assert 0.0 < rouge1([["武", "汉", "必", "胜"]], ["武汉加油"], "zh") < 1.0
    assert CharTokenizer().tokenize("武汉 # AB") == ["武", "汉", "a", "b"]


def test_f1_at_k_hand_computed():
    ranked = [
        [["a"], ["b"], ["c"]],  # gold {b, d}: @1 misses; @2 P=1/2 R=1/2; @5 P=1/5 R=1/2
        [["x"]],  # gold {x}: @1 = 1; @2 P=1/2 R=1; @5 P=1/5 R=1
    ]
    result = score([[], []], ranked, [["b", "d"], ["X"]], "en", ks=(1, 2, 5))
    assert result["f1@1"] == 0.5
    assert result["f1@2"] == 0.5833  # (1/2 + 2/3) / 2
    assert result["f1@5"] == 0.3095  # (2/7 + 1/3) / 2


def test_f1_at_k_matches_whole_normalized_hashtags():
    ranked = [[["boston", "strong"], ["boston"]]]
    result = score([[]], ranked, [["Boston_Strong"]], "en")
    assert result["f1@1"] == 1.0


def test_score_needs_one_of_each_per_post():
    with pytest.raises(ValueError):
        score([[]], [[], []], [["a"]], "en")


def test_keywords_break_ties_by_text_position_and_keep_text_order():
    extractor = TfidfExtractor([["a", "b"], ["a", "c"], ["a", "d"]])
    assert extractor.keywords(["c", "b", "x", "y"], 2) == ["x", "y"]  # unseen words first
    assert extractor.keywords(["a", "c", "b"], 1) == ["c"]  # b and c tie: the earlier wins
    assert extractor.keywords(["b", "a", "d", "c", "c"], 2) == ["b", "c"]  # c (tf 2), then b


def write_jsonl(path, posts):
    path.write_text("".join(json.dumps(p, ensure_ascii=False) + "\n" for p in posts))
    return str(path)


def test_ext_tfidf_baseline_english(tmp_path):
    train = write_jsonl(tmp_path / "train.jsonl", [
        {"text": t, "hashtags": []}
        for t in ["the boston marathon", "the race today", "the city", "the day"]
    ])
    # boston idf log(4/2), marathon twice, `the` in every post; @user/<url> are not words
    test = write_jsonl(tmp_path / "test.jsonl", [
        {"text": "@user the boston marathon , the marathon ! <url>",
         "hashtags": ["BostonMarathon"]},
    ])
    result = evaluate_baseline(test, "en", read_pairs(train))
    assert result == {"rouge1": 1.0, "rouge2": 1.0, "rougeL": 1.0, "f1@1": 1.0, "f1@5": 0.3333,
                      "posts": 1, "model": "ext_tfidf"}


def test_ext_tfidf_baseline_chinese_uses_three_keywords(tmp_path):
    train = write_jsonl(tmp_path / "train.jsonl", [
        {"text": t, "hashtags": []} for t in ["今天 天气", "今天 武汉", "今天 加油"]
    ])
    # 疫情 unseen, 武汉/加油 in one post, 今天 everywhere; the [哈哈] emoticon is no word
    test = write_jsonl(tmp_path / "test.jsonl", [
        {"text": "武汉 加油 今天 [哈哈] 疫情", "hashtags": ["武汉加油"]},
    ])
    result = evaluate_baseline(test, "zh", read_pairs(train))
    assert result["rouge1"] == 0.8  # 武汉加油疫情 vs 武汉加油: P = 4/6, R = 4/4
    assert result["f1@1"] == 0.0


@pytest.mark.parametrize("text, hashtags, expected", [
    ("Boston strong! Proud of this city", ["BostonStrong"], True),
    ("Make America great again", ["maga"], False),
    ("武汉加油，抗击疫情", ["抗击疫情"], True),
    ("今天天气很好", ["周末"], False),
    ("a b c", ["a"], False),  # one-character hashtags would match almost any post
])
def test_a_hashtag_is_in_the_text_when_its_normalized_form_occurs_there(text, hashtags, expected):
    from training.hashtag.data import Pair
    from training.hashtag.evaluate import hashtag_in_text

    assert hashtag_in_text(Pair(text, hashtags)) is expected


def test_the_prior_gives_every_post_the_most_frequent_training_hashtags(tmp_path):
    from training.hashtag.baseline import evaluate_prior

    train = write_jsonl(tmp_path / "train.jsonl", [
        {"text": "x", "hashtags": tags}
        for tags in [["Love"], ["love", "tbt"], ["BostonStrong"], ["tbt"], ["love"]]
    ])  # love 3 times (any case), tbt twice, BostonStrong once
    test = write_jsonl(tmp_path / "test.jsonl", [
        {"text": "a sunny day", "hashtags": ["tbt"]},
        {"text": "boston", "hashtags": ["love"]},
    ])
    result = evaluate_prior(test, "en", read_pairs(train))
    assert result["hashtags"] == ["love", "tbt", "bostonstrong"]
    assert result["rouge1"] == 0.5  # "love" for both posts: right for one
    assert result["f1@1"] == 0.5 and result["f1@5"] == pytest.approx(1 / 3, abs=1e-4)


def test_collapse_counts_distinct_best_sequences_and_the_top_share():
    from nlp_models.hashtag.predictor import Generated
    from training.hashtag.evaluate import collapse

    def out(*tags):
        return Generated([t.split() for t in tags], [], False, "en")

    result = collapse([out("love"), out("love"), out("boston strong", "love"), out("love")])
    assert result == {"distinct_best": 2, "top_share": 0.75}
    assert collapse([]) == {"distinct_best": 0, "top_share": 0.0}


def test_predictions_file_has_one_json_line_per_post(tmp_path):
    import json

    from nlp_models.hashtag.predictor import Generated
    from training.hashtag.data import Pair
    from training.hashtag.evaluate import write_predictions

    path = tmp_path / "pred.jsonl"
    pairs = [Pair("boston strong today", ["BostonStrong"]), Pair("新冠 疫情", ["疫情"])]
    outputs = [Generated([["boston", "strong"], ["love"]], [], False, "en"),
               Generated([], [], False, "zh")]
    write_predictions(str(path), outputs, pairs, "en")
    rows = [json.loads(line) for line in path.read_text(encoding="utf-8").splitlines()]
    assert rows == [{"text": "boston strong today", "references": ["BostonStrong"],
                     "generated": ["bostonstrong", "love"]},
                    {"text": "新冠 疫情", "references": ["疫情"], "generated": []}]


def test_the_post_oracle_takes_the_post_candidate_that_best_matches_the_reference(tmp_path):
    from training.hashtag.baseline import evaluate_oracle

    test = write_jsonl(tmp_path / "test.jsonl", [
        # candidates: boston, marathon, finish, line and the adjacent pairs of them
        {"text": "the boston marathon finish line", "hashtags": ["BostonMarathon"]},
        {"text": "a sunny day at the beach", "hashtags": ["tbt"]},  # nothing to take
        {"text": "so so", "hashtags": ["love"]},  # no candidate at all
    ])
    result = evaluate_oracle(test, "en")
    # post 1: "boston marathon" is the reference (F 1.0; "boston" alone has F 2/3)
    assert result["rouge1"] == pytest.approx(1 / 3, abs=1e-4)
    assert result["rouge2"] == pytest.approx(1 / 3, abs=1e-4)
    assert result["posts"] == 3 and result["posts_with_overlap"] == pytest.approx(1 / 3, abs=1e-4)
