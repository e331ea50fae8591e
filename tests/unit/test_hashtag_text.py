"""Specification of the hashtag word protocol (nlp_models/hashtag/text.py)."""

import pytest

from nlp_models.hashtag.text import (
    join_words,
    normalize_hashtag,
    post_candidates,
    split_generated,
    split_hashtag,
    target_words,
)


@pytest.mark.parametrize(
    ("tag", "words"),
    [
        ("BostonStrong", ["boston", "strong"]),
        ("NYCMarathon", ["nyc", "marathon"]),
        ("HappyBirthdayPrinceGeorge", ["happy", "birthday", "prince", "george"]),
        ("iPhone", ["iphone"]),
        ("covid19", ["covid", "19"]),
        ("Boston_Strong", ["boston", "strong"]),
    ],
)
def test_english_hashtags_split_where_the_user_marked_words(tag, words):
    assert split_hashtag(tag, "en") == words


@pytest.mark.parametrize(
    ("tag", "words"),
    [
        ("yycflood", ["yyc", "flood"]),
        ("Bostonstrong", ["boston", "strong"]),
        ("BOSTONSTRONG", ["boston", "strong"]),
        ("gameofthrones", ["game", "of", "thrones"]),
    ],
)
def test_unmarked_english_hashtags_are_segmented_by_wordsegment(tag, words):
    assert split_hashtag(tag, "en") == words


@pytest.mark.parametrize("tag", ["covid", "selfie", "brexit"])
def test_words_newer_than_wordsegment_s_counts_are_not_shattered(tag):
    """wordsegment alone gives co+vid, self+ie, br+exit."""
    assert split_hashtag(tag, "en") == [tag]


def test_chinese_hashtags_split_into_lowercase_characters():
    assert split_hashtag("武汉 加油#", "zh") == ["武", "汉", "加", "油"]
    assert split_hashtag("iPhone抗疫", "zh") == ["i", "p", "h", "o", "n", "e", "抗", "疫"]


def test_cached_split_returns_a_fresh_list():
    split_hashtag("BostonStrong", "en").append("oops")
    assert split_hashtag("BostonStrong", "en") == ["boston", "strong"]


def test_target_words_put_a_hash_between_hashtags_only():
    assert target_words(["BostonStrong", "NYCMarathon"], "en") == [
        "boston", "strong", "#", "nyc", "marathon",
    ]
    assert target_words(["抗疫"], "zh") == ["抗", "疫"]


def test_hashtags_without_words_leave_no_empty_slot():
    assert target_words(["!!!", "BostonStrong", "__"], "en") == ["boston", "strong"]


@pytest.mark.parametrize(
    ("tags", "lang"),
    [(["BostonStrong", "covid19", "yycflood"], "en"), (["武汉加油", "抗疫"], "zh")],
)
def test_split_generated_inverts_target_words(tags, lang):
    assert split_generated(target_words(tags, lang)) == [split_hashtag(t, lang) for t in tags]


def test_split_generated_drops_empty_hashtags():
    assert split_generated(["#", "a", "#", "#", "b", "c", "#"]) == [["a"], ["b", "c"]]
    assert split_generated([]) == []


def test_join_words_makes_one_hashtag():
    assert join_words(["boston", "strong"], "en") == "bostonstrong"
    assert join_words(["Boston", "Strong"], "en") == "bostonstrong"
    assert join_words(["武", "汉"], "zh") == "武汉"


def test_normalize_hashtag_ignores_case_spaces_and_hash():
    assert normalize_hashtag("#Boston Strong") == "bostonstrong"
    assert normalize_hashtag("武汉 加油") == "武汉加油"


def test_chinese_post_candidates_are_content_words_and_adjacent_pairs_as_characters():
    offered = ["".join(c) for c in post_candidates("今天国内油价下调了！[哈哈] @user <url>", "zh")]
    assert offered == ["国内", "油价", "下调", "国内油价", "油价下调"]


def test_chinese_pairs_join_only_words_that_are_adjacent_in_the_post():
    offered = ["".join(c) for c in post_candidates("油价下调。安徽境内", "zh")]
    assert "下调安徽" not in offered and "油价下调" in offered
