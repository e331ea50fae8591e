"""ARK word-cluster features of the POS tagger (nlp_models/pos/clusters.py).

A small cluster file written here stands in for 50mpaths2, so these tests need neither
Maven nor the resolved artifact.
"""

import pytest
import torch

from nlp_models.pos.clusters import (
    BITS,
    ClusterFileMissing,
    Clusters,
    ark_normalize,
    lookup,
    prefixes,
)
from nlp_models.pos.features import Vocabularies, encode_tokens
from nlp_models.pos.model import Tagger, TaggerConfig
from training.pos.data import Sentence, make_batch

LINES = [
    ("0010", "lol", 100),
    ("0010", "lmao", 50),
    ("11100", "cool", 80),
    ("111011", "<@MENTION>", 1000),
    ("0111101", "<URL-bit.ly>", 300),
    ("01111", "<URL-youtube.com>", 300),
    ("1010101010101010", "don't", 70),
    ("10", "so", 500),
    ("110", "good", 90),
]


@pytest.fixture()
def cluster_file(tmp_path):
    path = tmp_path / "50mpaths2"
    path.write_text("".join(f"{b}\t{w}\t{n}\n" for b, w, n in LINES), encoding="utf-8")
    return path


@pytest.fixture()
def table(cluster_file):
    return Clusters(cluster_file).table


def test_normalization_follows_ark_lower_case_urls_by_host_and_mentions():
    assert ark_normalize("LOL") == "lol"
    assert ark_normalize("@Bob_99") == "<@MENTION>"
    assert ark_normalize("http://www.youtube.com/watch?v=x") == "<URL-youtube.com>"
    assert ark_normalize("https://bit.ly/abc") == "<URL-bit.ly>"
    assert ark_normalize("bit.ly/abc") == "<URL-bit.ly>"
    assert ark_normalize("#Hashtag") == "#hashtag"
    assert ark_normalize("2:30") == "2:30"  # ARK keeps digits as they are


def test_lookup_finds_words_by_their_ark_key(table):
    assert lookup(table, "LOL") == "0010"
    assert lookup(table, "@someone") == "111011"
    assert lookup(table, "http://youtube.com/x") == "01111"


def test_words_absent_from_the_file_are_retried_in_fuzzier_forms(table):
    assert lookup(table, "loooool") == "0010"  # letter runs shortened
    assert lookup(table, "coool") == "11100"
    assert lookup(table, "sooo") == "10"
    assert lookup(table, "don’t") == "1010101010101010"  # typographic apostrophe
    assert lookup(table, "cool!!") == "11100"  # punctuation stripped
    assert lookup(table, "good/cool") == "110"  # first punctuation-separated part


def test_words_absent_in_every_form_have_no_cluster(table):
    assert lookup(table, "xqzzyv") is None
    assert lookup(table, "http://unknown-site.org/x") is None  # URLs are not split
    assert lookup(table, "") is None


def test_prefix_features_pad_to_16_bits_and_mark_unknown_words():
    assert prefixes("0010") == [f"{b}:{'0010'.ljust(16, '0')[:b]}" for b in BITS]
    assert prefixes("0010")[:2] == ["2:00", "4:0010"]
    assert prefixes(None) == [f"{b}:<none>" for b in BITS]


def test_unknown_words_get_the_none_features_not_padding(cluster_file):
    clusters = Clusters(cluster_file)
    unknown = clusters.ids("xqzzyv")
    assert len(unknown) == len(BITS) and 0 not in unknown
    assert unknown == [clusters.index[f"{b}:<none>"] for b in BITS]
    assert clusters.ids("lol") == clusters.ids("LOOOL") != unknown
    assert clusters.ids("lol")[:2] == clusters.ids("lmao")[:2]


def test_a_model_needs_the_same_cluster_file_it_was_trained_with(cluster_file, tmp_path):
    saved = Clusters(cluster_file).to_json()
    other = tmp_path / "other"
    other.write_text("0\tlol\t1\n", encoding="utf-8")
    with pytest.raises(ClusterFileMissing, match="not the cluster file"):
        Clusters.from_json(saved, other)
    with pytest.raises(ClusterFileMissing, match="deploy.local prepare"):
        Clusters.from_json(saved, tmp_path / "missing")
    assert Clusters.from_json(saved, cluster_file).features == saved["features"]


def test_missing_default_file_gives_a_clear_error(tmp_path, monkeypatch):
    monkeypatch.setenv("NLP_POS_CLUSTERS", str(tmp_path / "nope" / "50mpaths2"))
    with pytest.raises(ClusterFileMissing, match="edu.cmu.cs:ark-tweet-nlp:0.3.2"):
        Clusters()


SENTS = [
    Sentence("RT @bob : so cool lol".split(), "RT USR : RB JJ UH".split(), "ptb"),
    Sentence("ikr smh :)".split(), "! G E".split(), "ark"),
]


def test_unknown_words_get_char_and_cluster_features(cluster_file):
    """A word never seen in training is <unk> for the word embedding, but still has its
    spelling and (if ARK clustered it) its cluster: 'looool' shares lol's cluster."""
    vocabs = Vocabularies.build(SENTS, clusters=Clusters(cluster_file))
    enc = encode_tokens([["looool", "lol", "xqzzyv"]], vocabs)
    unk = vocabs.words.unk
    assert enc.words[0].tolist() == [unk, vocabs.words.id("lol"), unk]
    assert enc.clusters.shape == (4, len(BITS))  # row 0: padding
    assert enc.clusters[0].tolist() == [0] * len(BITS)
    assert enc.clusters[1].tolist() == enc.clusters[2].tolist()  # looool ~ lol
    assert enc.clusters[3].tolist() != enc.clusters[1].tolist()
    assert (enc.chars[1] != 0).sum() == len("looool")

    torch.manual_seed(0)
    cfg = TaggerConfig(
        n_words=len(vocabs.words), n_chars=len(vocabs.chars),
        tagsets={h: len(v) for h, v in vocabs.tags.items()}, word_dim=8, char_dim=4,
        char_filters=3, context_hidden=4, hidden=6, hyper_hidden=4, hyper_embed=2,
        dropout=0.0, n_cluster_features=len(vocabs.clusters), cluster_dim=5,
    )
    model = Tagger(cfg).eval()
    feats = model.type_features(enc.chars, enc.clusters)
    assert feats.shape == (4, model.chars.out_dim + 5)
    cluster_part = feats[:, model.chars.out_dim :]
    assert torch.equal(cluster_part[1], cluster_part[2])
    assert not torch.equal(cluster_part[1], cluster_part[3])
    assert not torch.equal(feats[1], feats[2])  # different spellings
    with pytest.raises(ValueError, match="cluster"):
        model.type_features(enc.chars, None)

    b = make_batch(SENTS[:1], vocabs)
    scores = model(b.words, b.types, b.chars, b.lengths, "ptb", b.clusters)
    assert scores.shape == (1, 6, len(vocabs.tags["ptb"]))


def test_vocabularies_round_trip_with_clusters(cluster_file):
    vocabs = Vocabularies.build(SENTS, clusters=Clusters(cluster_file), extra_words=["wow"])
    assert "wow" in vocabs.words.stoi
    again = Vocabularies.from_json(vocabs.to_json(), cluster_file)
    assert again.clusters.features == vocabs.clusters.features
    assert again.clusters.ids("cool") == vocabs.clusters.ids("cool")
    assert again.words.itos == vocabs.words.itos


def test_cached_token_rows_with_clusters_give_the_uncached_tags(cluster_file, tmp_path):
    """PosPredictor caches each token string's projected [word ; char-CNN ; clusters]; its
    tags must equal a plain forward pass that computes the cluster features from scratch."""
    from nlp_models.pos.predictor import PosPredictor, save_checkpoint

    vocabs = Vocabularies.build(SENTS, clusters=Clusters(cluster_file))
    torch.manual_seed(1)
    cfg = TaggerConfig(
        n_words=len(vocabs.words), n_chars=len(vocabs.chars),
        tagsets={h: len(v) for h, v in vocabs.tags.items()}, word_dim=8, char_dim=4,
        char_filters=3, context_hidden=4, hidden=6, hyper_hidden=4, hyper_embed=2,
        dropout=0.0, n_cluster_features=len(vocabs.clusters), cluster_dim=5,
    )
    path = tmp_path / "tagger.pt"
    save_checkpoint(path, Tagger(cfg).eval(), vocabs, {})
    predictor = PosPredictor(path, cluster_file)
    sentences = [s.tokens for s in SENTS] + [["soooo", "coool", "@x", "xqzzyv"]]
    with torch.no_grad():
        expected = predictor.model.tag_all(*encode_tokens(sentences, predictor.vocabs))
    for _ in range(2):  # the second call is served from the cache
        tagged = predictor.tag_tokens(sentences)
        for i, sentence in enumerate(sentences):
            for head, ids in expected.items():
                itos = vocabs.tags[head].itos
                assert tagged[i][head] == [itos[j] for j in ids[i, : len(sentence)].tolist()]
    # the cached rows are the projections of representations computed from scratch
    enc = encode_tokens(sentences, predictor.vocabs)
    with torch.no_grad():
        x = predictor.model.represent(enc.words, enc.types, enc.chars, enc.clusters)
        fresh = predictor.model.project_tokens(x.flatten(0, 1)).view(*x.shape[:2], -1)
        rows, types = predictor._token_rows(sentences)
    assert torch.equal(types, enc.types)
    real = enc.types != 0
    assert torch.allclose(rows[types][real], fresh[real], atol=1e-6)
