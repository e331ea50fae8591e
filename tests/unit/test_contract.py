"""The contract both sides of Triton share (nlp_models/contract.py): the tensor names are
those of the models' config.pbtxt, and every record survives its wire format."""

from __future__ import annotations

import re

import pytest

from nlp_models import contract
from nlp_models.contract import HashtagResult, HeadlineResult, TaggedToken, TagResult
from training.paths import REPO_ROOT

TENSORS = {  # model -> (inputs, output) as the clients and backend classes use them
    "pos_tagger": ({contract.TEXT}, contract.TAGS_JSON),
    "hashtag_generator": ({contract.TEXT, contract.LANG}, contract.HASHTAGS_JSON),
    "headline_generator": ({contract.ARTICLE, contract.LANG, contract.CANDIDATES},
                           contract.HEADLINES_JSON),
    "constrained_headline_generator": (
        {contract.ARTICLE, contract.LANG, contract.PHRASE, contract.STRATEGY,
         contract.CANDIDATES}, contract.HEADLINES_JSON),
}


@pytest.mark.parametrize("model", sorted(TENSORS))
def test_the_contract_names_the_tensors_of_the_model_config(model: str) -> None:
    config = (REPO_ROOT / "model_repository" / model / "config.pbtxt").read_text()
    inputs = config.split("output")[0].split("input")[1]
    outputs = config.split("output")[1]
    names = re.compile(r'name: "([A-Z_]+)"')
    assert set(names.findall(inputs)) == TENSORS[model][0]
    assert names.findall(outputs)[:1] == [TENSORS[model][1]]


@pytest.mark.parametrize(("record", "encode", "decode"), [
    (TagResult((TaggedToken("Obama", 0, 5, "NNP", "^"), TaggedToken("!", 6, 7, ".", ",")),
               truncated=True), contract.tags_to_json, contract.tags_from_json),
    (HashtagResult((("election", -0.5), ("北京", -1.25)), "en", "ok", False, blocked=2),
     contract.hashtags_to_json, contract.hashtags_from_json),
    (HeadlineResult((), "phrase_too_long", "en", False, message="too long", phrase="x" * 3),
     contract.headlines_to_json, contract.headlines_from_json),
    (HeadlineResult((("Toyota recalls cars", -3.5),), "ok", "en", True, phrase="Toyota",
                    strategy="tok-b"), contract.headlines_to_json, contract.headlines_from_json),
])
def test_records_survive_their_wire_format(record, encode, decode) -> None:
    assert decode(encode(record)) == record


@pytest.mark.parametrize("decode", [contract.tags_from_json, contract.hashtags_from_json,
                                    contract.headlines_from_json])
@pytest.mark.parametrize("raw", [b"not json", b"{}", b'{"tokens": [["x"]]}', b"[]"])
def test_malformed_answers_are_a_value_error(decode, raw) -> None:
    with pytest.raises(ValueError):
        decode(raw)
