"""The POS tagger as Triton serves it: the real tritonserver, the shipped weights.

Served tags must equal the in-process model's (one code path, the same ARK cluster file:
the artifact `deploy.local prepare` resolved), Twitter entities keep their offsets and
tags, and limits are flagged. Publishing a new version under traffic is
tests/integration/test_refresh.py.
"""

from __future__ import annotations

import json

import numpy as np
import pytest
import tritonclient.grpc as grpcclient

from deploy import clusters
from deploy.testing import TritonInfo
from nlp_models.pos.predictor import PosPredictor
from training.pos.evaluate import shipped_checkpoint

pytestmark = pytest.mark.integration

TWEETS = [
    "RT @nytimes: Obama wins the election http://nyti.ms/abc #election2012",
    "lol i cant believe its friday already :) <3",
    "Stocks fell sharply on Monday as investors worried about the economy .",
    # out-of-vocabulary spellings: tagged from characters and ARK clusters (fuzzy lookup)
    "@Some_One sooo coooool!!! gonna c u 2morrow at teh mall lmaooo www.example.com/x",
]


def tag(url: str, texts: list[str]) -> tuple[list[dict], str]:
    """(parsed TAGS_JSON per text, model version) from one gRPC request."""
    client = grpcclient.InferenceServerClient(url)
    arr = np.array([t.encode() for t in texts], dtype=object).reshape(-1, 1)
    inp = grpcclient.InferInput("TEXT", list(arr.shape), "BYTES")
    inp.set_data_from_numpy(arr)
    result = client.infer("pos_tagger", [inp])
    rows = [json.loads(x) for x in result.as_numpy("TAGS_JSON").reshape(-1)]
    return rows, result.get_response().model_version


def test_served_tags_equal_the_in_process_model(triton: TritonInfo) -> None:
    rows, _ = tag(triton.grpc_url, TWEETS)
    cluster_file = clusters.resolve(triton.settings)  # the file the server was given
    local = PosPredictor(shipped_checkpoint(), cluster_file).tag_texts(TWEETS)
    for row, expected in zip(rows, local, strict=True):
        assert [(t[0], t[3], t[4]) for t in row["tokens"]] == [
            (t.text, t.ptb, t.ark) for t in expected.tokens
        ]
    assert len(rows[-1]["tokens"]) > 10


def test_offsets_slice_the_text_and_twitter_entities_get_their_tags(triton: TritonInfo) -> None:
    rows, version = tag(triton.grpc_url, TWEETS)
    assert version.isdigit()
    for text, row in zip(TWEETS, rows, strict=True):
        assert not row["truncated"]
        for token, start, end, ptb, ark in row["tokens"]:
            assert text[start:end] == token and ptb and ark
    by_token = {t[0]: (t[3], t[4]) for t in rows[0]["tokens"]}
    assert by_token["@nytimes"] == ("USR", "@")
    assert by_token["http://nyti.ms/abc"] == ("URL", "U")
    assert by_token["RT"] == ("RT", "~")


def test_empty_text_has_no_tokens_and_long_text_is_flagged(triton: TritonInfo) -> None:
    rows, _ = tag(triton.grpc_url, ["", "word " * 30_000])
    assert rows[0] == {"tokens": [], "truncated": False}
    assert rows[1]["truncated"] is True
    assert len(rows[1]["tokens"]) == 128
