"""Headline data: pre-training pairs (data.lead_gap_pairs), baselines and metrics."""

from __future__ import annotations

import json
from pathlib import Path

from training.headline.data import Pair, lead_gap_pairs

DATA = Path(__file__).resolve().parents[1] / "data"


def test_the_lead_sentence_becomes_the_target_and_leaves_the_article():
    lead = "Toyota will recall 10,000 cars in Japan, the company said on Tuesday."
    rest = "The recall covers sedans built in 2024. Dealers will replace the brakes."
    [pair] = lead_gap_pairs([Pair(f"{lead} {rest}", "Toyota recalls cars")], "en")
    assert (pair.headline, pair.article) == (lead, rest)


def test_a_stop_inside_a_number_or_before_a_lowercase_word_does_not_end_a_sentence():
    article = "U.S. output rose 3.5 pct in May from April. Analysts had expected more growth."
    [pair] = lead_gap_pairs([Pair(article, "")], "en")
    assert pair.headline == "U.S. output rose 3.5 pct in May from April."


def test_chinese_sentences_end_at_full_width_stops():
    article = "日前，某公司发布了新产品，引起关注。调查发现，该公司没有自己的工厂。"
    [pair] = lead_gap_pairs([Pair(article, "")], "zh")
    assert pair.headline == "日前，某公司发布了新产品，引起关注。"
    assert pair.article == "调查发现，该公司没有自己的工厂。"


def test_single_sentence_or_tiny_articles_give_no_pair():
    pairs = [Pair("One sentence only, nothing to predict it from.", ""),
             Pair("Short lead. " + "Then a long rest of the article follows here.", ""),
             Pair("A lead sentence of enough words here. Too short.", "")]
    assert lead_gap_pairs(pairs, "en") == []


def test_the_constrained_lead_is_the_first_sentence_with_the_phrase_in_any_paragraph():
    from training.headline.data import first_sentence_with

    article = "Markets fell on Monday. Oil rose.\n\nToyota said sales slowed. Toyota shares fell."
    assert first_sentence_with(article, "Toyota", "en") == "Toyota said sales slowed."
    assert first_sentence_with(article, "Honda", "en") is None
    assert first_sentence_with("股市周一下跌。丰田销量放缓。", "丰田", "zh") == "丰田销量放缓。"


def test_the_baselines_first_sentence_does_not_end_at_a_title_or_an_initial():
    """"Sens." is no Lead-1 and "... Attorney General Richard E." no sentence holding a
    phrase: the baselines split English as the served lead rule does."""
    from training.headline.data import first_sentence_with, lead_sentence, split_lead

    release = ("Sens. Olympia J. Snowe and Susan Collins announced a grant for Bangor today. "
               "The grant funds a clinic.\n\nMore to come.")
    assert lead_sentence(release, "en") == (
        "Sens. Olympia J. Snowe and Susan Collins announced a grant for Bangor today.")
    assert split_lead(release, "en")[0] == "Sens."  # training data keeps its plain split
    plea = ("A Houston man pleaded guilty today, announced Assistant Attorney General Richard E. "
            "Zuckerman of the Tax Division. He faces three years in prison.")
    assert first_sentence_with(plea, "Houston", "en") == plea.split(" He faces")[0]
    assert lead_sentence("股市周一下跌。丰田销量放缓。", "zh") == "股市周一下跌。"


def test_phrase_baselines_always_contain_the_phrase_and_the_bare_phrase_is_fully_precise():
    from training.headline.evaluate import evaluate_phrase_baselines

    result = evaluate_phrase_baselines(str(DATA / "headline_en_sample.jsonl"))
    assert result["articles"] == 4
    assert result["phrase"]["success_rate"] == result["lead_with_phrase"]["success_rate"] == 1.0
    assert result["phrase"]["rouge1"]["p"] == 1.0  # test phrases come from the headlines
    assert result["lead_with_phrase"]["rouge1"]["r"] > result["phrase"]["rouge1"]["r"]


def test_a_headline_repeats_a_word_only_when_a_long_word_comes_back():
    from training.headline.metrics import repeated_word_rate

    assert repeated_word_rate(["NASD says SEC rules for SEC", "U.S. to buy U.S. debt",
                               "Gull sees higher earnings", "a b a b"]) == 0.25


def test_he_input_keeps_the_articles_extended_ids_and_numbers_phrase_only_unknowns_after():
    """So a copying He et al. model can copy an unknown word from the phrase or the article."""
    from nlp_models.headline.vocab import SEP, CharVocab
    from training.headline.data import Pair, encode

    vocab = CharVocab(list("股市下跌丰田销量"))
    pair = Pair(article="股市鑫跌。丰田销量", headline="丰田淼鑫下跌", phrase="丰田淼")
    example = encode(pair, vocab, max_source=64, max_target=16)
    he = example.prefixed.source
    v = len(vocab)
    assert example.source.oovs == ["鑫", "。"] and he.oovs == ["鑫", "。", "淼"]
    assert he.ext_ids[:4] == [*vocab.encode("丰田"), v + 2, SEP]  # 淼 is the phrase's own
    assert he.ext_ids[4:] == example.source.ext_ids  # the article's ids are unchanged
    assert example.prefixed.target[2:4] == [v + 2, v]  # 淼 and 鑫 can be copied


def test_the_sentence_oracle_takes_the_sentence_closest_to_the_reference_in_any_paragraph():
    from training.headline.evaluate import best_sentence

    article = "Markets fell on Monday.\nToyota recalls 10,000 cars in Japan. Dealers will help."
    assert best_sentence(Pair(article, "Toyota recalls cars in Japan"), "en") == (
        "Toyota recalls 10,000 cars in Japan.", 1)
    assert best_sentence(Pair("股市周一下跌。丰田召回汽车。", "丰田召回一万辆汽车"), "zh") == (
        "丰田召回汽车。", 1)
    assert best_sentence(Pair("  ", "anything"), "en") == ("", 0)


def test_baselines_carry_evaluates_self_checks_and_the_editors_own_headlines_get_them_too(
        tmp_path):
    """The floor of `degenerate` and `unsupported`: a newsroom's own headlines may repeat a
    word or name what the article lacks, and the baseline reports how often."""
    from training.headline.evaluate import evaluate_lead, evaluate_phrase_baselines

    article = "Acme Corp said on Monday its profit rose. Analysts in Boston had expected less."
    rows = [{"article": article, "headline": "Acme profit rises", "phrase": "Acme"},
            {"article": article, "headline": "Acme profit rises, Acme says", "phrase": "Acme"},
            {"article": article, "headline": "Acme profit rises, Zenith says", "phrase": "Acme"},
            {"article": article, "headline": "Acme profit up 40 %", "phrase": "Acme"}]
    data = tmp_path / "newsroom.jsonl"
    data.write_text("".join(json.dumps(r) + "\n" for r in rows))
    train = [str(DATA / "headline_en_sample.jsonl"), str(data)]

    for result in (evaluate_lead(str(data), "en", train),
                   evaluate_phrase_baselines(str(data), "en", train)):
        editors = result["editors"]
        assert editors["degenerate"] == 0.25  # "Acme" twice
        assert editors["unsupported_name"] == 0.25  # Zenith
        assert editors["unsupported_number"] == 0.25  # 40 %
    lead = evaluate_lead(str(data), "en", train)
    assert lead["degenerate"] == 0.0 and lead["unsupported"] == 0.0  # the article's own sentence
