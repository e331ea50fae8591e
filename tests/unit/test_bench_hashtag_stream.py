"""The stream bench's pure parts: how a post is re-written and the trending baseline."""

from __future__ import annotations

from bench.hashtag_stream import memory_latency, message, steps, trending
from nlp_models.hashtag.text import split_hashtag
from services.hashtags import author_hashtags, without_edge_hashtags
from services.pb import messages_pb2 as pb
from training.hashtag.streams import shown, with_hashtags


def test_hashtags_are_re_attached_the_way_each_language_writes_them() -> None:
    assert with_hashtags("Great game", ["nba", "Lakers"], "en") == "Great game #nba #Lakers"
    assert with_hashtags("大雨", ["北京暴雨", "出行"], "zh") == "大雨 #北京暴雨##出行#"
    assert with_hashtags("plain", [], "en") == "plain"


def test_the_worker_reads_back_exactly_the_authors_hashtags_and_text() -> None:
    for lang, text, tags in (("en", "Great game tonight", ["nba", "Lakers"]),
                             ("zh", "今天下大雨", ["北京暴雨", "出行"])):
        row = {"id": "x", "text": text, "hashtags": tags, "created_at": "2009-06-01T00:00:00Z"}
        post = pb.Post.FromString(message(row, lang, "")[1])
        assert author_hashtags(post) == tags
        assert without_edge_hashtags(post.text, lang == "zh") == text


def test_trending_is_the_most_used_hashtag_of_the_previous_tagged_posts() -> None:
    posts = [{"hashtags": tags} for tags in
             (["a"], [], ["b"], ["B", "c"], ["a"], ["x"])]
    assert trending(posts) == [[], ["a"], ["a"], ["a"], ["b"], ["a"]]


def test_a_step_ends_at_its_nth_tagged_post_and_carries_the_untagged_ones_before_it() -> None:
    posts = [{"id": i, "hashtags": tags} for i, tags in
             enumerate((["a"], [], ["b"], [], [], ["c"], []))]
    assert [[p["id"] for p in chunk] for chunk in steps(posts, 2)] == [[0, 1, 2], [3, 4, 5, 6]]


def test_memory_latency_reads_quantiles_off_the_workers_histogram() -> None:
    text = "\n".join([
        "# HELP nlp_hashtag_memory_seconds ...",
        'nlp_hashtag_memory_seconds_bucket{le="0.01"} 50.0',
        'nlp_hashtag_memory_seconds_bucket{le="0.05"} 99.0',
        'nlp_hashtag_memory_seconds_bucket{le="0.1"} 100.0',
        'nlp_hashtag_memory_seconds_bucket{le="+Inf"} 100.0',
        "nlp_hashtag_memory_seconds_count 100.0"])
    assert memory_latency(text) == {"lookups": 100, "p50_s_at_most": 0.01,
                                    "p99_s_at_most": 0.05}
    assert memory_latency("") == {"lookups": 0, "p50_s_at_most": None, "p99_s_at_most": None}


def test_precision_shown_counts_every_hashtag_a_reader_sees_once_per_post() -> None:
    posts = [{"hashtags": ["BostonStrong", "marathon"]}, {"hashtags": ["nba"]},
             {"hashtags": ["rain"]}]
    predictions = [["#bostonstrong", "#prayforboston", "#BostonStrong"],  # one twice
                   ["#nba", "#tcot", "#news", "#quote", "#win"],  # noise around a hit
                   []]  # silence
    ranked = [[split_hashtag(t, "en") for t in tags] for tags in predictions]
    assert shown(ranked, posts, "en") == {"precision_shown": round(2 / 7, 4),
                                          "shown_per_post": round(7 / 3, 2),
                                          "silent_share": round(1 / 3, 4)}
    assert shown([[], []], posts[:2], "en") == {"precision_shown": 0.0, "shown_per_post": 0.0,
                                                "silent_share": 1.0}
