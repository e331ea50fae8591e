"""The ARK-tagger peer comparison: PTB -> ARK gold mapping, scoring, and the real ARK tagger."""

import shutil

import pytest

from bench.pos_peer import (
    ark_gold_tags,
    locate,
    paired,
    score,
    without_chat_artifacts,
)
from services.settings import REPO_ROOT, Settings
from training.pos.data import Sentence, read_conll
from training.pos.evaluate import on_gold_tokens
from training.pos.tagmap import ark_gold, read_tagmap

TSV = (
    "# comment line: skipped\n"
    "# - another judgement call\n"
    "NN\tN\nNNP\t^\nDT\tD\nWDT\tD\nPRP\tO\nUH\t!\nHT\t#\nUSR\t@\nRT\t~\n:\t,\nVBP\tV\n"
    "#\tG\nPOS\tG\n.\t,\n"
)


@pytest.fixture()
def table(tmp_path):
    path = tmp_path / "ptb_to_ark.tsv"
    path.write_text(TSV, encoding="utf-8")
    return read_tagmap(path)


def test_the_tagmap_keeps_the_pound_row_and_skips_comments(table):
    assert table["#"] == "G" and table["NN"] == "N"
    assert len(table) == 14


def test_only_tokens_whose_ark_tag_is_determined_are_scored(table):
    tokens = ["RT", "@bob", ":", "this", "is", "the", "dog", "that", "im", "you", ":)",
              "lol", "please", "#win", "'s", "Paris", "?!"]
    tags = ["RT", "USR", ":", "DT", "VBP", "DT", "NN", "WDT", "PRP", "PRP", "UH",
            "UH", "UH", "HT", "POS", "NNP", "FOO"]
    got = ark_gold(tokens, tags, table)
    assert got == [
        ("~", "mapped"), ("@", "mapped"), (None, "colon_after_mention"),
        (None, "demonstrative"), ("V", "mapped"), ("D", "mapped"), ("N", "mapped"),
        (None, "wdt_that"), (None, "compound_pronoun"), ("O", "mapped"),
        (None, "uh_emoticon"), ("!", "mapped"), (None, "uh_please"), (None, "hashtag"),
        (None, "to_G"), ("^", "mapped"), (None, "unmapped"),
    ]


def test_both_taggers_are_scored_on_the_same_tokens(table):
    sent = Sentence(["this", "dog", "lol", ":)"], ["DT", "NN", "UH", "UH"], "ptb")
    gold, as_mapped, excluded = ark_gold_tags([sent], "ptb", table)
    assert gold == [[None, "N", "!", None]]
    assert as_mapped == [["D", "N", "!", "!"]]
    assert excluded == {"demonstrative": 1, "uh_emoticon": 1}
    ours, ark = [["O", "N", "!", "E"]], [["D", "V", "!", "E"]]
    assert score(gold, ours) == (2, 2)  # "this"/O and ":)"/E are not held against either
    assert score(gold, ark) == (1, 2)
    assert score(as_mapped, ours) == (2, 4) and score(as_mapped, ark) == (2, 4)
    assert paired(gold, ours, ark) == {"only_ours_right": 1, "only_ark_right": 0}


def test_irc_system_posts_and_anonymised_user_names_can_be_left_out():
    tokens = [["PART"], ["hi", "11-09-teensUser34", "lol"], ["ACTION", "waves"]]
    gold = [["V"], ["!", "^", None], ["N", "V"]]
    kept, removed = without_chat_artifacts(tokens, gold)
    assert kept == [[None], ["!", None, None], ["N", "V"]] and removed == 2


def test_ark_tagged_gold_is_used_as_is(table):
    sent = Sentence(["lol", ":)"], ["!", "E"], "ark")
    gold, as_mapped, excluded = ark_gold_tags([sent], "ark", table)
    assert gold == as_mapped == [["!", "E"]] and not excluded


@pytest.mark.slow
@pytest.mark.skipif(shutil.which("java") is None or shutil.which("mvn") is None,
                    reason="needs Java 17 and Maven (the ARK jar comes from Maven Central)")
def test_the_real_ark_tagger_is_accurate_on_tweets_it_was_trained_on():
    """DAILY547 is in the ARK model's training data, so it must score well above 0.9."""
    from deploy import ark

    sents = read_conll(REPO_ROOT / "tests" / "data" / "daily547_first60.conll", "ark")
    run = ark.tag(Settings.from_env(), [s.tokens for s in sents], repeats=1)
    correct, total = score([s.tags for s in sents], run.tags)
    assert total == 957 and correct / total > 0.9
    assert len(run.passes_s) == 2 and run.load_model_s > 0


def test_raw_text_scoring_counts_a_token_split_differently_as_wrong():
    gold = ["top-25", "&gt;", "lol"]  # text "top-25 &gt; lol"
    # a tokenizer that splits the hyphen and unescapes the entity
    theirs = ["top", "-", "25", ">", "lol"]
    spans = locate("top-25 &gt; lol", theirs)
    assert spans == [(0, 3), (3, 4), (4, 6), None, (12, 15)]
    tags = on_gold_tokens(gold, list(zip(spans, ["A", ",", "$", "&", "!"], strict=True)))
    assert tags == [None, None, "!"]
    assert on_gold_tokens(gold, [((0, 6), "A"), ((7, 11), "G"), ((12, 15), "!")]) == [
        "A", "G", "!"]


@pytest.mark.skipif(shutil.which("java") is None or shutil.which("mvn") is None,
                    reason="needs Java 17 and Maven (the ARK jar comes from Maven Central)")
@pytest.mark.slow
def test_the_real_ark_tagger_tokenizes_raw_text_itself():
    from deploy import ark

    (tweet,) = ark.tag_texts(Settings.from_env(), ["@bob lol u r sooo funny :) http://t.co/x"])
    assert [t for t, _ in tweet] == ["@bob", "lol", "u", "r", "sooo", "funny", ":)",
                                     "http://t.co/x"]
    assert [tag for _, tag in tweet][:1] + [tag for _, tag in tweet][-2:] == ["@", "E", "U"]
