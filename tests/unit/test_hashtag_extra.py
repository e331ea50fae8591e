"""The extra hashtag pairs and the held-out-source dev set (training/hashtag/extra.py), with
tiny inline samples of each raw form."""

import gzip
import json

import pytest

from training.hashtag.data import Pair, cap_recurring, selection_score, training_pairs
from training.hashtag.extra import (
    AV,
    HOWYOU,
    TAKG,
    Deduplicator,
    Stats,
    build,
    dev_ood,
    english_edges,
    filter_pairs,
    howyou_pairs,
    normalize,
    read_takg,
    takg_pairs,
)

# ---------------------------------------------------------------- the edge rule, per form


def test_raw_tweet_edge_hashtags_are_targets_and_mid_text_ones_stay_as_words():
    text, tags = english_edges("#Monday RT @bob: I love the #sun in the park today #Sunny #fun!")
    assert tags == ["Monday", "Sunny", "fun"]
    assert text == "I love the sun in the park today"


def test_trailing_block_may_be_followed_by_urls_and_decorations():
    text, tags = english_edges("off to the beach with all my friends #summer \U0001f60d "
                               "http://t.co/x !!")
    assert tags == ["summer"]
    assert text == "off to the beach with all my friends <url>"


def test_a_mention_ends_the_trailing_block_and_mention_runs_collapse():
    text, tags = english_edges("@a @b @c thank you!! the power of #social #media!  @d #aande @e")
    assert tags == ["aande"]
    assert text == "@user @user thank you!! the power of social media! @user"


def test_numbers_are_not_hashtags_and_repeats_are_removed_case_insensitively():
    text, tags = english_edges("we are #1 in the league this year #Win #win")
    assert tags == ["Win"]
    assert text == "we are 1 in the league this year"


def test_the_av_copy_loses_its_mojibake_emoji():
    text, tags = english_edges("safe ways to heal your #acne \u00f0\u009f\u0098 fast!! "
                               "#altwaystoheal #healthy\u00e2\u0080\u00a6", ascii_only=True)
    assert tags == ["altwaystoheal", "healthy"]
    assert text == "safe ways to heal your acne fast!!"


def test_howyoutagtweets_lists_targets_separately_and_every_listed_tag_is_kept():
    rows = [("Data/train.csv", 1, "this be the guy behind the budget\t4303\trupee\tRupee\t2016"),
            ("Data/train.csv", 2, "by xdylanox\t92\tlovato")]
    raws = list(howyou_pairs(rows))
    assert raws[0].hashtags == ["rupee"]  # `Rupee` is a repeat, `2016` has no letter
    assert raws[0].text == "this be the guy behind the budget"
    assert (raws[0].source, raws[0].orig_id) == (HOWYOU, "Data/train.csv:1")
    stats = Stats()
    kept = filter_pairs(raws, "en", Deduplicator(50), stats)
    assert len(kept) == 1 and stats.dropped == {"short_text": 1}


def test_takg_topics_are_split_on_semicolons_and_the_segmentation_is_undone():
    rows = [("data/Weibo/valid_src.txt", 1, "失联 的 mh370 航班 最后 传出 信息 是 在 高空",
             "马航 飞机 失联;" + "长" * 31)]
    (raw,) = takg_pairs(rows)
    assert raw.text == "失联的 mh370 航班最后传出信息是在高空"
    assert raw.hashtags == ["马航飞机失联"]  # the 31-character topic is dropped
    assert raw.source == TAKG


def test_takg_train_targets_without_sources_are_counted_not_converted(tmp_path):
    for name, lines in [("valid_src", ["今天 天气 很 好 我们 去 公园 散步 吧"]),
                        ("valid_trg", ["春天"]), ("test_src", []), ("test_trg", []),
                        ("train_trg", ["a", "b", "c"])]:
        with gzip.open(tmp_path / f"data__Weibo__{name}.txt.gz", "wt") as f:
            f.write("".join(line + "\n" for line in lines))
    stats = Stats()
    kept = filter_pairs(takg_pairs(list(read_takg(tmp_path, stats))), "zh",
                        Deduplicator(30), stats)
    assert [k["hashtags"] for k in kept] == [["春天"]]
    assert stats.read == 4 and stats.dropped == {"no_source_text": 3}


# ---------------------------------------------------------------- deduplication


def test_normalization_ignores_case_urls_mentions_rt_punctuation_and_emoticons():
    assert normalize("RT @user: Hello, World! <url> [哈哈]") == "helloworld"


def test_a_shared_50_character_prefix_counts_as_a_duplicate():
    dedup = Deduplicator(50)
    base = "this is a fairly long tweet that goes on and on about the weather "
    assert dedup.add(base + "today")
    assert not dedup.add(base.upper() + "tomorrow!!")
    assert dedup.add("short one")
    assert not dedup.add("Short one.")
    assert dedup.add("short one more")  # under 50 characters: only equality counts
    assert dedup.match("SHORT ONE!") == "extra"


def _write_gz(path, text):
    path.parent.mkdir(parents=True, exist_ok=True)
    with gzip.open(path, "wt", encoding="utf-8") as f:
        f.write(text)


def _shared(tmp_path):
    en = tmp_path / "hashtag" / "en"
    en.mkdir(parents=True)
    rows = {
        "train": [{"id": "en-train-000000", "text": "we are going to the game with all of them",
                   "hashtags": ["go"], "source": "cardiffnlp/tweeteval", "orig_id": "1"},
                  {"id": "en-train-000001", "text": "i do not like it when the bus is late again",
                   "hashtags": ["bus"], "source": "t-davidson/hate-speech-and-offensive-language",
                   "orig_id": "2"}],
        "dev": [],
        "test": [{"id": "en-test-000000", "text": "@user this is the best day of my life so far",
                  "hashtags": ["best"], "source": "Pratsa09/x", "orig_id": "3"}],
    }
    for split, items in rows.items():
        (en / f"{split}.jsonl").write_text("".join(json.dumps(r) + "\n" for r in items))
    extra = tmp_path / "extra" / "hashtag_en"
    _write_gz(extra / "av_twitter_hate" / "train_E6oV3lV.csv.gz",
              "id,label,tweet\n"
              "1,0, @user this is the best day of my life so far!!  #happy #life\n"
              "2,0,i am so glad that it is friday and the week is over #tgif\n")
    _write_gz(extra / "av_twitter_hate" / "test_tweets_anuFYb8.csv.gz", "id,tweet\n")
    for split in ("train", "valid", "test"):
        body = ("we be go to the game with all of them\t7\tsports\n" if split == "train" else "")
        _write_gz(extra / "howyoutagtweets" / f"Data__{split}.csv.gz", body)
    return tmp_path


def test_a_duplicate_of_a_test_pair_is_dropped_and_new_pairs_are_written(tmp_path):
    shared, out = _shared(tmp_path / "shared"), tmp_path / "out"
    report = build(shared, out, ["en"])
    av = report["en"]["av_twitter_hate"]
    assert av == {"read": 2, "kept": 1, "dropped": {"duplicate_of_test": 1}}
    rows = [json.loads(line) for line in (out / "en" / "extra.jsonl").open()]
    texts = [r["text"] for r in rows]
    assert "@user this is the best day of my life so far!!" not in texts  # test pair's copy
    assert texts[0] == "i am so glad that it is friday and the week is over"
    assert rows[0]["hashtags"] == ["tgif"] and rows[0]["source"] == AV
    assert rows[0]["id"] == "en-extra-000000"
    # lemmatised text is not caught as a copy of the train pair: only normalization counts
    assert report["en"]["howyoutagtweets"]["kept"] == 1


def test_unseen_feeds_become_a_test_set_deduplicated_against_everything(tmp_path):
    shared, out = _shared(tmp_path / "shared"), tmp_path / "out"
    tweets = shared / "extra" / "tweets_en"
    _write_gz(tweets / "snap_tweets2009_sample" / "datasets__test1-1000.txt.gz",
              "T\t2009-06-11 10:00:00\nU\thttp://twitter.com/x\n"
              "W\t#musicmonday what are you all listening to on this rainy day http://bit.ly/x\n\n"
              "T\t2009-06-11 10:01:00\nU\thttp://twitter.com/y\nW\tNo Post Title\n")
    _write_gz(tweets / "sentiment140_100k" / "data__tweets_100k__positive.txt.gz",
              "i am so glad that it is friday and the week is over #tgif\n"  # an extra pair's
              "off to the beach with all of my friends for the day #summer\n")
    report = build(shared, out, ["en"])
    assert report["en"]["snap_tweets2009_sample"]["kept"] == 1
    assert report["en"]["sentiment140_100k"]["dropped"] == {"duplicate_of_extra": 1}
    rows = [json.loads(line) for line in (out / "en" / "unseen.jsonl").open()]
    assert [(r["text"], r["hashtags"]) for r in rows] == [
        ("what are you all listening to on this rainy day <url>", ["musicmonday"]),
        ("off to the beach with all of my friends for the day", ["summer"])]
    assert rows[0]["id"] == "en-unseen-000000"


# ---------------------------------------------------------------- dev_ood


def test_dev_ood_holds_out_one_whole_source_and_training_excludes_it(tmp_path):
    shared, out = _shared(tmp_path / "shared"), tmp_path / "out"
    build(shared, out, ["en"])
    held = [json.loads(line) for line in (out / "en" / "dev_ood.jsonl").open()]
    assert [d["source"] for d in held] == ["t-davidson/hate-speech-and-offensive-language"]
    assert held[0]["from_id"] == "en-train-000001" and held[0]["id"] == "en-dev_ood-000000"
    train = [Pair(d["text"], d["hashtags"], d["source"])
             for d in map(json.loads, (shared / "hashtag/en/train.jsonl").open())]
    extra = [Pair(d["text"], d["hashtags"], d["source"])
             for d in map(json.loads, (out / "en/extra.jsonl").open())]
    ood = [Pair(d["text"], d["hashtags"], d["source"]) for d in held]
    kept = training_pairs(train + extra, ood)
    assert {p.source for p in kept}.isdisjoint({p.source for p in ood})
    assert len(kept) == len(train) + len(extra) - 1


def test_a_large_source_is_sampled_reproducibly_to_the_cap():
    train = [{"text": f"t{i}", "source": "big" if i % 2 else "other"} for i in range(100)]
    first, second = dev_ood(train, "zh", "big", limit=10), dev_ood(train, "zh", "big", limit=10)
    assert first == second and len(first) == 10
    assert {d["source"] for d in first} == {"big"}


@pytest.mark.parametrize(("dev", "ood", "score"), [(0.3, None, 0.3), (0.3, 0.1, 0.2)])
def test_selection_uses_the_mean_of_both_dev_rouge1_scores(dev, ood, score):
    assert selection_score({"rouge1": dev}, None if ood is None else {"rouge1": ood}) == \
        pytest.approx(score)


def test_recurring_targets_are_capped_reproducibly_and_the_rest_kept_in_order():
    pairs = [Pair(f"post {i}", ["最新疫情地图"] if i % 2 else [f"topic{i}"]) for i in range(40)]
    pairs.append(Pair("same topic, other spelling", ["#最新疫情地图 "]))
    kept = cap_recurring(pairs, cap=3)
    assert kept == cap_recurring(pairs, cap=3)
    assert sum(p.hashtags != [f"topic{p.text.split()[-1]}"] for p in kept) == 3
    assert [p for p in kept if p.hashtags[0].startswith("topic")] == \
        [p for p in pairs if p.hashtags[0].startswith("topic")]
    assert kept == [p for p in pairs if p in kept]  # original order
