"""PosPredictor, the one inference path (Triton, evaluation, benchmarks)."""

import pytest
import torch

from nlp_models.pos.features import encode_tokens
from nlp_models.pos.predictor import PosPredictor, save_checkpoint
from nlp_models.pos.serving import PosService

from .test_pos_model import SENTS, VOCABS, make_model


@pytest.mark.parametrize("variant", ["dcnn", "bilstm", "bilstm_ctx", "bihyperlstm"])
def test_checkpoint_is_fp16_and_cached_token_rows_give_the_same_tags(variant, tmp_path):
    model = make_model(variant)
    path = tmp_path / "tagger.pt"
    save_checkpoint(path, model, VOCABS, {"note": "test"})
    assert all(v.dtype == torch.float16 for v in torch.load(path)["state"].values())

    predictor = PosPredictor(path)
    sentences = [s.tokens for s in SENTS] + [["unseen", "tokens", "lol"]]
    expected = predictor.model.tag_all(*encode_tokens(sentences, VOCABS))  # no cache
    for _ in range(2):  # the second call is served from the token cache
        tagged = predictor.tag_tokens(sentences)
        for i, sentence in enumerate(sentences):
            for head, ids in expected.items():
                itos = VOCABS.tags[head].itos
                assert tagged[i][head] == [itos[j] for j in ids[i, : len(sentence)].tolist()]
    assert "unseen" in predictor._token_cache


def test_a_request_of_empty_texts_alone_gets_empty_results(tmp_path):
    path = tmp_path / "tagger.pt"
    save_checkpoint(path, make_model("dcnn"), VOCABS, {})
    results = PosPredictor(path).tag_texts(["", "   "])  # a fresh predictor: nothing cached
    assert [r.tokens for r in results] == [(), ()]


def test_raw_texts_are_tokenized_with_offsets_and_long_ones_flagged(tmp_path):
    path = tmp_path / "tagger.pt"
    save_checkpoint(path, make_model("dcnn"), VOCABS, {})
    texts = ["RT @bob : so cool lol", "", "w " * 200]
    short, empty, long = PosPredictor(path).tag_texts(texts)
    assert [(t.text, texts[0][t.start : t.end]) for t in short.tokens][:2] == [
        ("RT", "RT"), ("@bob", "@bob"),
    ]
    assert short.tokens[0].ptb and short.tokens[0].ark  # both heads tag every token
    assert empty.tokens == () and not empty.truncated
    assert long.truncated and len(long.tokens) == 128


def test_the_service_tags_a_text_over_the_serving_limit_on_its_prefix_and_flags_it(tmp_path):
    path = tmp_path / "tagger.pt"
    save_checkpoint(path, make_model("dcnn"), VOCABS, {})
    service = PosService(path, max_chars=12)
    fits, cut = service.tag(["so cool lol", "so cool lol and more words"])
    assert not fits.truncated
    assert cut.truncated and max(t.end for t in cut.tokens) <= 12
    assert [t.text for t in cut.tokens] == [t.text for t in fits.tokens]


def test_a_hashtag_is_HT_in_the_ptb_tagset_and_left_to_the_model_in_ark(tmp_path):
    path = tmp_path / "tagger.pt"
    save_checkpoint(path, make_model("dcnn"), VOCABS, {})
    predictor = PosPredictor(path)
    sentence = ["#Blessed", "#win", "#6", "#", "to"]
    tagged = predictor.tag_tokens([sentence])[0]
    untouched = predictor.model.tag_all(*encode_tokens([sentence], VOCABS))
    assert tagged["ptb"][:2] == ["HT", "HT"]
    ptb_itos, ark_itos = VOCABS.tags["ptb"].itos, VOCABS.tags["ark"].itos
    assert tagged["ptb"][2:] == [ptb_itos[j] for j in untouched["ptb"][0, 2:5].tolist()]
    assert tagged["ark"] == [ark_itos[j] for j in untouched["ark"][0, :5].tolist()]
