"""Universal-tag gold (Lowlands.test): the TSV reader, the tag maps, placeholders, exclusion."""

import pytest
import torch

from bench.pos_peer import paired, raw_text_scores, score, universal_gold_tags
from training.pos.evaluate import shipped_checkpoint
from training.pos.tagmap import read_tagmap
from training.pos.universal import (
    ARK_TO_UNIVERSAL,
    PTB_TO_UNIVERSAL,
    UNIVERSAL_TAGS,
    read_universal_tsv,
    realistic,
    to_universal,
    universal_gold,
)

# Lowlands' layout: token, universal tag, supersense; a blank line after each tweet
LOWLANDS = (
    "Pls\tPRT\tO\nRT\tVERB\tB-verb.communication\nNUMBER\tNUM\tO\nof\tADP\tO\n"
    "@USER\tNOUN\tO\n#Jobs\tNOUN\tO\n:)\tX\tO\nURL\tNOUN\tO\n\n"
    "I'm\tVERB\tB-verb.stative\nin\tADP\tO\nRussia's\tNOUN\tB-noun.location\n.\t.\tO\n\n"
)
#: the 25 ARK-Twitter tags (../shared/data/pos/README.md)
ARK_TAGS = set("N O ^ S Z V A R ! D P & T X # @ ~ U E $ , G L M Y".split())


@pytest.fixture(scope="module")
def head_tags() -> dict[str, set[str]]:
    """The tags each head of the shipped model can emit, from its vocabulary."""
    ckpt = torch.load(shipped_checkpoint(), map_location="cpu", weights_only=True)
    return {head: set(itos) - {"<pad>"} for head, itos in ckpt["vocabs"]["tags"].items()}


def test_the_reader_keeps_token_and_universal_tag_per_tweet(tmp_path):
    path = tmp_path / "test.tsv"
    path.write_text(LOWLANDS, encoding="utf-8")
    first, second = read_universal_tsv(path)
    assert first.tokens == ["Pls", "RT", "NUMBER", "of", "@USER", "#Jobs", ":)", "URL"]
    assert first.tags == ["PRT", "VERB", "NUM", "ADP", "NOUN", "NOUN", "X", "NOUN"]
    assert second.tokens[-1] == "." and second.tags[-1] == "." and second.head == "universal"


def test_the_reader_keeps_the_last_tweet_without_a_final_blank_line(tmp_path):
    path = tmp_path / "test.tsv"
    path.write_text("so\tADV\tO\ncool\tADJ\tO\n", encoding="utf-8")
    (only,) = read_universal_tsv(path)
    assert only.tokens == ["so", "cool"] and only.tags == ["ADV", "ADJ"]


@pytest.mark.parametrize("line", ["cool\tJJ\tO", "cool", "cool ADJ"])
def test_the_reader_refuses_a_tag_outside_the_twelve(tmp_path, line):
    path = tmp_path / "test.tsv"
    path.write_text(f"so\tADV\tO\n{line}\n\n", encoding="utf-8")
    with pytest.raises(ValueError, match=":2:"):
        read_universal_tsv(path)


def test_the_ark_map_covers_exactly_the_25_ark_tags_and_what_our_ark_head_emits(head_tags):
    table = read_tagmap(ARK_TO_UNIVERSAL)
    assert head_tags["ark"] == ARK_TAGS  # the ARK tagger's tags are our head's
    assert set(table) == ARK_TAGS
    assert set(table.values()) == set(UNIVERSAL_TAGS)


def test_the_ptb_map_covers_every_tag_our_ptb_head_emits(head_tags):
    table = read_tagmap(PTB_TO_UNIVERSAL)
    assert head_tags["ptb"] <= set(table), head_tags["ptb"] - set(table)
    assert set(table.values()) == set(UNIVERSAL_TAGS)


def test_the_ptb_map_covers_the_gold_ptb_tags_of_the_shared_data():
    from training.paths import REPO_ROOT

    shared = REPO_ROOT.parent / "shared" / "data" / "pos" / "tagmaps" / "ptb_to_ark.tsv"
    if not shared.is_file():
        pytest.skip("no shared datasets")
    assert set(read_tagmap(shared)) <= set(read_tagmap(PTB_TO_UNIVERSAL))


def test_the_maps_follow_the_published_definitions():
    ark, ptb = read_tagmap(ARK_TO_UNIVERSAL), read_tagmap(PTB_TO_UNIVERSAL)
    # Petrov et al.'s en-ptb, as published (2012)
    assert [ptb[t] for t in ("MD", "TO", "EX", "PDT", "POS", "UH", "NNP", "#", "PRP$")] == [
        "VERB", "PRT", "DET", "DET", "PRT", "X", "NOUN", ".", "PRON"]
    # compounds: the verb decides L, M, Y; the noun S, Z; ARK X is EX/PDT
    assert [ark[t] for t in "LMYSZX"] == ["VERB", "VERB", "VERB", "NOUN", "NOUN", "DET"]
    # the two maps agree where the tagsets do
    for ptb_tag, ark_tag in (("UH", "!"), ("RT", "~"), ("USR", "@"), ("URL", "U"),
                             ("HT", "#"), ("CD", "$"), ("RP", "T"), ("CC", "&")):
        assert ptb[ptb_tag] == ark[ark_tag], (ptb_tag, ark_tag)


def test_placeholders_become_realistic_tokens():
    tokens = ["Pls", "RT", "NUMBER", "of", "@USER", "#Jobs", "URL", "URLs", "@USERS"]
    assert realistic(tokens) == ["Pls", "RT", "10", "of", "@user", "#Jobs",
                                 "http://t.co/x", "URLs", "@USERS"]


def test_links_mentions_and_hashtags_are_not_scored():
    tokens = ["Pls", "RT", "NUMBER", "@USER", "#Jobs", "#", ":)", "URL", "I'm"]
    tags = ["PRT", "VERB", "NUM", "NOUN", "NOUN", "NOUN", "X", "NOUN", "VERB"]
    assert universal_gold(tokens, tags) == [
        ("PRT", "scored"), ("VERB", "scored"), ("NUM", "scored"),
        (None, "mention_placeholder"), (None, "hashtag"), (None, "hashtag"),
        ("X", "scored"), (None, "url_placeholder"), ("VERB", "scored")]


def test_both_taggers_are_scored_through_the_same_map_on_the_same_tokens(tmp_path):
    path = tmp_path / "test.tsv"
    path.write_text(LOWLANDS, encoding="utf-8")
    sentences = read_universal_tsv(path)
    gold, excluded = universal_gold_tags(sentences)
    assert excluded == {"mention_placeholder": 1, "hashtag": 1, "url_placeholder": 1}
    table = read_tagmap(ARK_TO_UNIVERSAL)
    # ours calls "Pls" V and "RT" ~, ARK calls "Pls" ! and "RT" V; both tag links U
    ours = to_universal([["V", "~", "$", "P", "@", "^", "E", "U"],
                         ["L", "P", "Z", ","]], table)
    ark = to_universal([["!", "V", "$", "P", "@", "#", "E", "U"],
                        ["L", "P", "S", ","]], table)
    assert ours[0][:2] == ["VERB", "."] and ark[0][:2] == ["X", "VERB"]
    # 9 scored tokens; "Pls" is PRT: wrong for both; "RT" is VERB: only ARK right
    assert score(gold, ours) == (7, 9)
    assert score(gold, ark) == (8, 9)
    assert paired(gold, ours, ark) == {"only_ours_right": 0, "only_ark_right": 1}


def test_a_tag_the_map_lacks_is_an_error_not_a_silent_miss():
    with pytest.raises(KeyError):
        to_universal([["N", "NN"]], read_tagmap(ARK_TO_UNIVERSAL))


def test_raw_text_scores_map_both_taggers_and_keep_misaligned_tokens_wrong(monkeypatch):
    from types import SimpleNamespace

    from deploy import ark

    tokens = [["Im", "home", "http://t.co/x"]]
    gold = [["VERB", "NOUN", None]]  # text "Im home http://t.co/x"
    token = SimpleNamespace
    ours = SimpleNamespace(tokens=[token(start=0, end=2, ark="L"), token(start=3, end=7,
                                   ark="N"), token(start=8, end=21, ark="U")])
    predictor = SimpleNamespace(tag_texts=lambda texts: [ours])
    # the ARK tokenizer splits "Im" (it does not; a stand-in for a misaligned token)
    monkeypatch.setattr(ark, "tag_texts", lambda settings, texts, decoder: [
        [("I", "O"), ("m", "V"), ("home", "N"), ("http://t.co/x", "U")]])
    got = raw_text_scores(predictor, None, tokens, gold, "greedy",
                          read_tagmap(ARK_TO_UNIVERSAL))
    assert got["accuracy"] == {"ours": 100.0, "ark": 50.0}
    assert got["paired"] == {"only_ours_right": 1, "only_ark_right": 0}
