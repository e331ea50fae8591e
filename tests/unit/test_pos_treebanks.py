"""Gold PTB tags from UD treebanks (training/pos/treebanks.py), on a small CoNLL-U file
written here in the treebanks' format."""

import json

import pytest

from training.pos.data import read_conll
from training.pos.treebanks import build, map_tag

CONLLU = """\
# newdoc id = email-1
# sent_id = email-1-0001
# text = I don't like it :)
1\tI\tI\tPRON\tPRP\t_\t3\tnsubj\t_\t_
2-3\tdon't\t_\t_\t_\t_\t_\t_\t_\t_
2\tdo\tdo\tAUX\tVBP\t_\t4\taux\t_\t_
3\tn't\tnot\tPART\tRB\t_\t4\tadvmod\t_\t_
4\tlike\tlike\tVERB\tVB\t_\t0\troot\t_\t_
5\tit\tit\tPRON\tPRP\t_\t4\tobj\t_\t_
6\t:)\t:)\tSYM\tNFP\t_\t4\tdiscourse\t_\t_

# sent_id = email-1-0002
1\tpre\tpre\tADJ\tAFX\t_\t2\tamod\t_\t_
2\twar\twar\tNOUN\tNN\t_\t0\troot\t_\t_

# sent_id = email-1-0003
1\tsee\tsee\tVERB\tVB\t_\t0\troot\t_\t_
2\twww.example.com\twww.example.com\tX\tADD\t_\t1\tobj\t_\t_
3\t(\t(\tPUNCT\t-LRB-\t_\t1\tpunct\t_\t_
4\tsic\tsic\tX\tFW\t_\t1\tdep\t_\t_
5\t)\t)\tPUNCT\t-RRB-\t_\t1\tpunct\t_\t_
6\t***\t***\tPUNCT\tNFP\t_\t1\tpunct\t_\t_
"""


def test_ud_tags_map_onto_ours_and_unknown_tags_have_none():
    assert map_tag(":)", "NFP") == "UH"  # emoticon, as in Ritter's tweets
    assert map_tag("***", "NFP") == ":"
    assert map_tag("-", "HYPH") == ":"
    assert map_tag("a@b.com", "ADD") == "URL"
    assert map_tag("(", "-LRB-") == "("
    assert map_tag("dog", "NN") == "NN"
    assert map_tag("pre", "AFX") is None


def test_build_writes_syntactic_words_and_drops_sentences_with_unmapped_tags(tmp_path):
    sources = tmp_path / "ewt" / "not-to-release" / "sources" / "email"
    sources.mkdir(parents=True)
    (sources / "email-1.conllu").write_text(CONLLU, encoding="utf-8")
    out = tmp_path / "out"
    summary = build(out, tmp_path / "ewt", None, {"ewt": "abc"})

    sents = read_conll(out / "ud_ewt" / "all.conll", "ptb")
    assert [s.tokens for s in sents] == [
        ["I", "do", "n't", "like", "it", ":)"],  # "don't" split as UD and PTB do
        ["see", "www.example.com", "(", "sic", ")", "***"],
    ]
    assert sents[0].tags == ["PRP", "VBP", "RB", "VB", "PRP", "UH"]
    assert sents[1].tags == ["VB", "URL", "(", "FW", ")", ":"]
    assert summary["ud_ewt"]["sentences"] == 2
    assert summary["ud_ewt"]["tokens"] == 12
    assert summary["ud_ewt"]["sentences_dropped_for_tags"] == {"AFX": 1}
    assert json.loads((out / "SOURCES.json").read_text())["ud_ewt"]["commit"] == "abc"


def test_gum_keeps_only_openly_licensed_genres(tmp_path):
    sources = tmp_path / "gum" / "not-to-release" / "sources"
    sources.mkdir(parents=True)
    one = "1\tHi\thi\tINTJ\tUH\t_\t0\troot\t_\t_\n\n"
    for name in ("GUM_news_a", "GUM_whow_b", "GUM_fiction_c", "GUM_vlog_d"):
        (sources / f"{name}.conllu").write_text(one, encoding="utf-8")
    summary = build(tmp_path / "out", None, tmp_path / "gum", {})
    assert summary["ud_gum"]["documents"] == 2  # news and vlog; wikiHow and fiction are NC


def test_config_splits_under_data_are_repository_files_with_a_hint_when_missing(tmp_path):
    from training.paths import REPO_ROOT
    from training.pos.train import conll_path, load_split

    assert conll_path("ritter/train", tmp_path) == tmp_path / "ritter" / "train.conll"
    assert conll_path("data/pos/ud_ewt/all", tmp_path) == REPO_ROOT / "data/pos/ud_ewt/all.conll"
    with pytest.raises(SystemExit, match="python -m training data pos"):
        load_split({"data/pos/no_such_treebank/all": "ptb"}, tmp_path)
