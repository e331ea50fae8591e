"""The output blocklist: whole-word matching on split hashtags, substrings for Chinese."""

import pytest

from nlp_models.hashtag.blocklist import Blocklist
from training.repository import serving_dir

# the newest version's list, the one Triton serves
SHIPPED = serving_dir("hashtag_generator") / "blocklist.txt"


@pytest.fixture(scope="module")
def blocklist() -> Blocklist:
    return Blocklist(["women suck", "libtard", "bitch", "傻逼"])


@pytest.mark.parametrize("tag", ["womensuck", "WomenSuck", "women_suck", "stupidlibtard", "bitch",
                                 "傻逼你好"])
def test_hashtags_containing_an_entry_as_words_are_blocked(blocklist, tag):
    assert blocklist.blocks(tag)


@pytest.mark.parametrize("tag", ["women", "suck", "bitchin", "love", "抗击疫情", "womenrock"])
def test_other_hashtags_pass(blocklist, tag):
    assert not blocklist.blocks(tag)


def test_the_shipped_list_catches_what_the_demo_generated_and_spares_common_tags():
    shipped = Blocklist.load(SHIPPED)
    assert shipped.blocks("womensuck")
    assert shipped.blocks("whitegenocide") and shipped.blocks("WhitePower")
    common = ["love", "maga", "tbt", "fathersday", "shoes", "pakistan", "scunthorpe", "cockpit",
              "skills", "spicy", "hoedown", "whitesox", "powerball", "hitlerdocumentary",
              "抗击疫情", "武汉加油"]
    assert [t for t in common if shipped.blocks(t)] == []


def test_comments_and_blank_lines_are_not_entries(tmp_path):
    path = tmp_path / "blocklist.txt"
    path.write_text("# a comment\n\nfoo bar\n", encoding="utf-8")
    loaded = Blocklist.load(path)
    assert loaded.blocks("foobar") and not loaded.blocks("acomment")


def test_a_hashtag_with_no_entry_in_its_letters_is_passed_without_splitting_it(monkeypatch):
    import nlp_models.hashtag.blocklist as module

    def split_must_not_run(tag: str, lang: str) -> list[str]:
        raise AssertionError(f"split {tag}")

    monkeypatch.setattr(module, "split_hashtag", split_must_not_run)
    assert not Blocklist(["women suck"]).blocks("bostonmarathon")
    assert not Blocklist([]).blocks("anything")
