"""Specification of the Twitter-aware tokenizer (nlp_models/pos/tokenizer.py)."""

import pytest

from nlp_models.pos.tokenizer import is_emoticon, tokenize


def words(text: str) -> list[str]:
    return [t.text for t in tokenize(text)]


@pytest.mark.parametrize(
    "text",
    ["RT @bob: see http://t.co/x1 #win :-) 😂😂", "  spaced   out\ttext\n", "", "日本語 テキスト"],
)
def test_offsets_point_at_the_token_in_the_original_text(text):
    for tok in tokenize(text):
        assert text[tok.start : tok.end] == tok.text
        assert tok.text.strip() == tok.text != ""


def test_twitter_entities_stay_whole():
    assert words("RT @bob_1: read https://t.co/AbC?x=1 now #BostonStrong") == [
        "RT", "@bob_1", ":", "read", "https://t.co/AbC?x=1", "now", "#BostonStrong",
    ]


def test_emoticons_and_emoji_are_tokens():
    assert words("so happy :) <3 :-( 😂😂") == ["so", "happy", ":)", "<3", ":-(", "😂", "😂"]


def test_contractions_stay_one_token_as_in_ark_twitter():
    assert words("I'm sure it's fine, don't worry") == [
        "I'm", "sure", "it's", "fine", ",", "don't", "worry",
    ]


def test_punctuation_runs_and_numbers():
    assert words("wait... what?!? $5.99 at 5pm") == [
        "wait", "...", "what", "?!?", "$5.99", "at", "5pm",
    ]


def test_hyphenated_words_and_numbers_stay_whole_as_in_ark_twitter():
    assert words("anti-establishment top-25 6-8 at 8:30 or 8pm 2pac 11-09-teensUser34") == [
        "anti-establishment", "top-25", "6-8", "at", "8:30", "or", "8pm", "2pac",
        "11-09-teensUser34",
    ]


def test_titles_w_slash_entities_and_arrows_are_tokens():
    assert words("Mr. Smith w/ St. Louis &amp; co -> go <-- now") == [
        "Mr.", "Smith", "w/", "St.", "Louis", "&amp;", "co", "->", "go", "<--", "now",
    ]


def test_runs_of_sentence_punctuation_and_quotes_stay_together_as_in_twokenize():
    assert words('yes..." no!: "hi", **') == ['yes', '..."', 'no', '!:', '"', 'hi', '",', '**']


def test_is_emoticon_is_true_for_a_whole_emoticon_only():
    assert is_emoticon(":-)") and is_emoticon("<3")
    assert not is_emoticon("8pm") and not is_emoticon("***")


def test_slash_joined_words_stay_whole_as_twokenize_keeps_them():
    assert words("he/she got a GPS/DVD/USB radio w/ 10/27/2010 on it / fine") == [
        "he/she", "got", "a", "GPS/DVD/USB", "radio", "w/", "10/27/2010", "on", "it", "/",
        "fine",
    ]


def test_a_clitic_stays_on_a_hashtag_or_mention_as_on_a_word():
    assert words("#Syria's war, @bob's cat and @amy' ok") == [
        "#Syria's", "war", ",", "@bob's", "cat", "and", "@amy", "'", "ok",
    ]


def test_dotted_initials_stay_whole_with_or_without_the_last_dot():
    assert words("L.A and U.S.A, e.g. U.S.Army at 5 p.m") == [
        "L.A", "and", "U.S.A", ",", "e.g.", "U.S.", "Army", "at", "5", "p.m",
    ]


def test_hyphens_plus_and_dollar_stay_on_a_words_edges_as_twokenize_keeps_them():
    assert words("-Drake in TX- wants Google+ CD+DVD for +1 or 10+ CA$H - now -- ok") == [
        "-Drake", "in", "TX-", "wants", "Google+", "CD+DVD", "for", "+1", "or", "10+",
        "CA$H", "-", "now", "--", "ok",
    ]


def test_an_html_entity_is_one_token_and_ends_a_link():
    assert words("&#8220;hi&#8221; &amp; http://t.co/HaK&#8230;") == [
        "&#8220;", "hi", "&#8221;", "&amp;", "http://t.co/HaK", "&#8230;",
    ]


def test_eye_emoticons_with_a_dot_or_underscore_are_one_token():
    assert words("ugh -.- >.> =_= -_- but ^_^") == [
        "ugh", "-.-", ">.>", "=_=", "-_-", "but", "^_^",
    ]
