"""Vocabularies of the hashtag generator: shared special ids, lossless target round trips."""

from nlp_models.hashtag.vocab import HASH, SEP, SPECIALS, CharVocab, SubwordVocab, from_state

TEXTS = ["the boston marathon is on today", "flood in calgary again", "love my family"] * 30


def test_both_vocabularies_put_the_specials_first():
    sub = SubwordVocab.build(TEXTS + ["boston strong # yyc flood"], size=120)
    chars = CharVocab.build(["今天天气很好"] * 3)
    assert sub.encode_words(["love", "#", "family"]).count(HASH) == 1
    assert chars.encode_words(["天", "#", "气"]) == [chars.stoi["天"], HASH, chars.stoi["气"]]
    assert [sub.sp.id_to_piece(i) for i in range(len(SPECIALS))] == SPECIALS
    assert chars.itos[: len(SPECIALS)] == SPECIALS


def test_english_targets_round_trip_with_one_id_per_separator():
    vocab = SubwordVocab.build(TEXTS + ["boston strong # yyc flood"], size=120)
    words = ["boston", "strong", "#", "yyc", "flood"]
    ids = vocab.encode_words(words)
    assert ids.count(HASH) == 1 and SEP not in ids
    assert vocab.decode_words(ids) == words


def test_user_text_cannot_smuggle_special_tokens():
    vocab = SubwordVocab.build(TEXTS, size=120)
    assert 3 not in vocab.encode("[SEG] [S] [SEP]")  # lower-cased, so never the specials


def test_chinese_is_characters_with_unknowns_mapped_to_unk():
    vocab = CharVocab.build(["今天天气很好", "今天下雨"], min_count=2)
    assert vocab.encode("今天 好") == [vocab.stoi["今"], vocab.stoi["天"], 1]
    words = ["今", "天", "#", "天"]
    assert vocab.decode_words(vocab.encode_words(words)) == words


def test_vocabularies_survive_a_checkpoint_round_trip():
    vocab = SubwordVocab.build(TEXTS, size=120)
    again = from_state(vocab.to_state())
    assert again.encode("boston marathon today") == vocab.encode("boston marathon today")
