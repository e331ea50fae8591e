"""degenerate / unsupported on hand-made headlines (training/headline/quality.py; the
unsupported rules themselves: test_headline_faithful.py)."""

import pytest
import torch

from training.headline.quality import (
    degenerate_reasons,
    degenerate_shares,
    repeated_as_written,
    training_vocabulary,
    unsupported_rates,
    vocabulary_from_files,
)

BRITISH = ("The Prime Minister told Parliament on Tuesday that the government would raise "
           "the minimum wage by 40 pence from April, a move welcomed by unions in London.")
VOCAB = training_vocabulary(["AOL shares rose as investors cheered the deal",
                             "The minister said the wage would rise"], "en")


def test_an_invented_word_is_degenerate():
    assert degenerate_reasons("AOLels raise minimum wage", BRITISH, VOCAB, "en") == [
        "unknown_word"]
    # the same word spelled as the training data spell it is fine
    assert degenerate_reasons("AOL shares rise on wage", BRITISH, VOCAB, "en") == []


def test_a_token_that_glues_known_words_is_an_unknown_word():
    # "government" and "s" are known words, "government's" is not in the article
    assert degenerate_reasons("Minister's government's wage", BRITISH, VOCAB, "en") == [
        "unknown_word"]
    assert degenerate_reasons("Minimum-wage rise in 2005", BRITISH, VOCAB, "en") == [
        "unknown_word"]
    assert degenerate_reasons("The 40-pence minimum wage rise", BRITISH, VOCAB, "en") == []


def test_a_repeated_word_is_degenerate():
    assert "repeated" in degenerate_reasons("Minister raises wage wage", BRITISH, VOCAB, "en")


def test_a_short_word_twice_in_a_row_is_degenerate_but_twice_apart_is_not():
    assert "repeated" in degenerate_reasons("AOL AOL shares rise", BRITISH, VOCAB, "en")
    assert "repeated" in degenerate_reasons("The wage would be be raised", BRITISH, VOCAB, "en")
    assert degenerate_reasons("A minister on wage on Tuesday", BRITISH, VOCAB, "en") == []


def test_fewer_than_three_words_is_degenerate():
    assert degenerate_reasons("Minimum wage", BRITISH, VOCAB, "en") == ["too_short"]


def test_degenerate_shares_count_headlines_and_say_which_check_each_trips():
    heads = ["Government would raise minimum wage", "wage wage wage", "Minimum wage"]
    assert degenerate_shares(heads, [BRITISH] * 3, VOCAB, "en") == {
        "degenerate": 0.6667,
        "degenerate_by_reason": {"unknown_word": 0.0, "repeated": 0.3333, "too_short": 0.3333},
        "repeated_as_written": 0.0}


def test_a_repeat_the_article_writes_so_is_told_apart_from_a_loop():
    article = ("Senate Democratic Leader Harry Reid and House Democratic Leader Nancy Pelosi "
               "urged their colleagues to back the bill, and the bill passed.")
    assert repeated_as_written("Democratic Leader Harry Reid and House Democratic Leader", article)
    assert repeated_as_written("Back the bill, and the bill passed", article)
    assert not repeated_as_written("Reid urged bill bill", article)  # a loop
    # trimmed as the lead rule trims ("Harry", "House" and "Nancy" dropped)
    assert repeated_as_written("Democratic Leader Reid and Democratic Leader Pelosi", article)
    assert not repeated_as_written("Reid urged Democratic colleagues and Democratic leaders",
                                   article)  # not the article's order
    assert not repeated_as_written("Senate Leader Harry Reid urged colleagues", article)  # none
    shares = degenerate_shares(["Democratic Leader Harry Reid and House Democratic Leader",
                                "Leader Reid urged leader Pelosi"], [article] * 2, VOCAB, "en")
    assert shares["degenerate_by_reason"]["repeated"] == 1.0
    assert shares["repeated_as_written"] == 0.5


def test_unsupported_rates_count_headlines_by_what_they_lack():
    heads = ["Wage rise for Paris", "Wage rise for London", "Wage rises 40%"]
    assert unsupported_rates(heads, [BRITISH] * 3, "en") == {
        "unsupported": 0.6667, "unsupported_number": 0.3333, "unsupported_name": 0.3333,
        "unsupported_claim": 0.0}


ZH_ARTICLE = "国务院总理李克强12日在北京主持召开国务院常务会议，部署稳就业工作。"


def test_chinese_degenerate_rules():
    vocab = training_vocabulary(["国务院常务会议部署稳就业"], "zh")
    assert degenerate_reasons("李克强主持召开国务院常务会议", ZH_ARTICLE, vocab, "zh") == []
    assert "unknown_word" in degenerate_reasons("李克强主持召开会議", ZH_ARTICLE, vocab, "zh")
    assert "repeated" in degenerate_reasons("稳就业稳就业工作", ZH_ARTICLE, vocab, "zh")
    assert "repeated" in degenerate_reasons("部署工作会会会", ZH_ARTICLE, vocab, "zh")
    assert degenerate_reasons("会议", ZH_ARTICLE, vocab, "zh") == ["too_short"]


def test_a_chinese_headline_s_latin_word_is_a_word_only_as_the_article_or_training_has_it():
    article = "第十届2018MAMA颁奖礼在香港举行，Music Awards由Mnet主办。"
    vocab = training_vocabulary(["苹果发布iPhone新品"], "zh")
    assert degenerate_reasons("2018MAMA在香港举行", article, vocab, "zh") == []
    assert degenerate_reasons("苹果iPhone在香港举行", article, vocab, "zh") == []
    assert degenerate_reasons("2018MAMusiards在香港举行", article, vocab,
                              "zh") == ["unknown_word"]


def test_decoding_settings_are_stored_with_the_checkpoint_and_keep_its_word_list(tmp_path):
    from nlp_models.headline.predictor import HeadlinePredictor
    from training.headline.quality import add_word_list
    from training.paths import REPO_ROOT
    from training.repository import shipped

    source = shipped("headline_generator", "headline_en.pt")
    source_meta = torch.load(source, weights_only=False)["meta"]
    stored = source_meta["whole_words"]
    out = tmp_path / "run" / "best.pt"
    add_word_list(source, out, None, unsupported_penalty=1.5, length_penalty=1.4)
    predictor = HeadlinePredictor.load(out)
    assert predictor.alpha == 1.4 and predictor.words.unsupported_penalty == 1.5
    assert predictor.meta["whole_words"] == stored  # no --train-data: the run's own list

    sample = REPO_ROOT / "tests" / "data" / "headline_en_sample.jsonl"
    add_word_list(source, out, [sample])
    meta = torch.load(out, weights_only=False)["meta"]
    assert set(meta["whole_words"]) == vocabulary_from_files([sample], "en")
    assert meta.get("length_penalty") == source_meta.get("length_penalty")  # not given: kept


def test_a_minimum_count_keeps_only_words_the_training_text_repeats(tmp_path):
    texts = ["Shares rose on the news", "Shares fell; the mus of it", "the news"]
    assert training_vocabulary(texts, "en", min_count=2) == {"shares", "the", "news"}
    assert "mus" in training_vocabulary(texts, "en")


def test_a_word_list_by_count_needs_the_training_data_to_count_in(tmp_path):
    from training.headline.quality import add_word_list
    from training.paths import REPO_ROOT
    from training.repository import shipped

    source = shipped("headline_generator", "headline_en.pt")
    with pytest.raises(SystemExit, match="--train-data"):
        add_word_list(source, tmp_path / "best.pt", None, min_count=3)
    sample = REPO_ROOT / "tests" / "data" / "headline_en_sample.jsonl"
    add_word_list(source, tmp_path / "best.pt", [sample], min_count=3)
    meta = torch.load(tmp_path / "best.pt", weights_only=False)["meta"]
    assert set(meta["whole_words"]) == vocabulary_from_files([sample], "en", 3)
    assert set(meta["whole_words"]) < vocabulary_from_files([sample], "en")
