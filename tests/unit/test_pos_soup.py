"""Specification of the greedy model soup of POS fine-tunes (training/pos/soup.py)."""

import pytest
import torch

from nlp_models.pos.features import Vocabularies
from nlp_models.pos.model import Tagger, TaggerConfig
from nlp_models.pos.predictor import load_checkpoint, save_checkpoint
from training.pos.data import Sentence
from training.pos.soup import average, soup

SENTS = [
    Sentence("RT @bob : this is so cool lol".split(), "RT USR : DT VBZ RB JJ UH".split(), "ptb"),
    Sentence("Stocks fell sharply .".split(), "NNS VBD RB .".split(), "ptb"),
    Sentence("ikr smh :)".split(), "! G E".split(), "ark"),
]


def tagger(seed: int, vocabs: Vocabularies) -> Tagger:
    torch.manual_seed(seed)
    return Tagger(TaggerConfig(
        variant="dcnn", n_words=len(vocabs.words), n_chars=len(vocabs.chars),
        tagsets={h: len(v) for h, v in vocabs.tags.items()}, word_dim=16, char_dim=8,
        char_filters=4, context_hidden=8, hidden=12, hyper_hidden=6, hyper_embed=3,
        dropout=0.0)).eval()


@pytest.fixture
def dev_sets(tmp_path, monkeypatch):
    """The two selection sets, as tiny CoNLL files in a data directory of their own."""
    for rel, sent in (("ritter/dev", SENTS[0]), ("ark_oct27/test", SENTS[2])):
        path = tmp_path / "pos" / f"{rel}.conll"
        path.parent.mkdir(parents=True)
        lines = [f"{w}\t{t}\n" for w, t in zip(sent.tokens, sent.tags, strict=True)]
        path.write_text("".join(lines) + "\n")
    monkeypatch.setenv("NLP_DATA_DIR", str(tmp_path))
    return tmp_path


def test_average_is_the_element_wise_mean_and_keeps_counters():
    a = {"w": torch.tensor([1.0, 3.0]), "n": torch.tensor(7)}
    b = {"w": torch.tensor([3.0, 5.0]), "n": torch.tensor(9)}
    out = average([a, b])
    assert torch.equal(out["w"], torch.tensor([2.0, 4.0]))
    assert out["n"].item() == 7


def test_soup_of_two_fine_tunes_is_their_mean_or_the_better_one(dev_sets, tmp_path):
    vocabs = Vocabularies.build(SENTS)
    paths = []
    for seed in (1, 2):
        paths.append(str(tmp_path / f"ft{seed}.pt"))
        save_checkpoint(paths[-1], tagger(seed, vocabs), vocabs, {})
    result = soup(paths, str(tmp_path / "soup.pt"))

    chosen = [i["checkpoint"] for i in result["soup"]]
    assert sorted(chosen + result["left_out"]) == sorted(paths)
    weights = [load_checkpoint(p)[0].state_dict() for p in chosen]
    souped = load_checkpoint(tmp_path / "soup.pt")[0].state_dict()
    for name, value in souped.items():
        expected = torch.stack([w[name] for w in weights]).mean(0)
        # fp16 on disk: the mean is stored to half precision
        assert torch.allclose(value, expected.half().float(), atol=1e-3), name


def test_taggers_of_different_vocabularies_are_refused(dev_sets, tmp_path):
    small = Vocabularies.build(SENTS[:1])
    large = Vocabularies.build(SENTS)
    save_checkpoint(tmp_path / "a.pt", tagger(1, small), small, {})
    save_checkpoint(tmp_path / "b.pt", tagger(1, large), large, {})
    with pytest.raises(SystemExit, match="only fine-tunes of one checkpoint"):
        soup([str(tmp_path / "a.pt"), str(tmp_path / "b.pt")], str(tmp_path / "soup.pt"))
