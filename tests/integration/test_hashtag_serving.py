"""The hashtag generator as Triton serves it: the real tritonserver, the shipped weights.

Served hashtags must equal the in-process service's (one code path, same beam), languages
are routed or refused explicitly, long inputs are flagged, and malformed requests fail
with an error instead of a wrong answer.
"""

from __future__ import annotations

from dataclasses import replace

import numpy as np
import pytest
import torch
import tritonclient.grpc as grpcclient
from tritonclient.utils import InferenceServerException

from deploy.testing import TritonInfo
from nlp_models.contract import HashtagResult, hashtags_from_json
from nlp_models.hashtag.blocklist import Blocklist
from nlp_models.hashtag.serving import HashtagService
from training.hashtag.evaluate import shipped_checkpoint
from training.repository import serving_dir

pytestmark = pytest.mark.integration

POSTS = [
    ("Lakers beat the Heat 102-98 in overtime, what a game tonight", "en"),
    ("Just finished my first marathon in Boston, legs are dead but so happy", "en"),
    ("New study shows coffee drinkers live longer <url>", ""),
    ("Hoy es un gran día para la ciencia", "es"),
]


def strings(name: str, values: list[str]) -> grpcclient.InferInput:
    arr = np.array([v.encode() for v in values], dtype=object).reshape(-1, 1)
    tensor = grpcclient.InferInput(name, list(arr.shape), "BYTES")
    tensor.set_data_from_numpy(arr)
    return tensor


def generate(url: str, texts: list[str], langs: list[str]) -> tuple[list[HashtagResult], str]:
    client = grpcclient.InferenceServerClient(url)
    result = client.infer("hashtag_generator", [strings("TEXT", texts), strings("LANG", langs)])
    rows = [hashtags_from_json(x) for x in result.as_numpy("HASHTAGS_JSON").reshape(-1)]
    return rows, result.get_response().model_version


def served_min_score() -> float:
    """The English checkpoint's threshold (`training tune hashtag`), -inf when it has none."""
    meta = torch.load(shipped_checkpoint("en"), map_location="cpu", weights_only=False)["meta"]
    return meta["min_score"] if meta.get("min_score") is not None else float("-inf")


def served_param(key: str) -> int:
    config = (serving_dir("hashtag_generator").parent / "config.pbtxt").read_text()
    line = config.split(f'key: "{key}"')[1]
    return int(line.split('string_value: "')[1].split('"')[0])


def test_served_hashtags_equal_the_in_process_service(triton: TritonInfo) -> None:
    texts, langs = [t for t, _ in POSTS], [lang for _, lang in POSTS]
    rows, version = generate(triton.grpc_url, texts, langs)
    assert version.isdigit()
    local = HashtagService(shipped_checkpoint("en").parent, beam=served_param("beam"),
                           n_best=served_param("n_best"))
    for served, expected in zip(rows, local.generate(texts, langs), strict=True):
        assert [t for t, _ in served.hashtags] == [t for t, _ in expected.hashtags]
        assert [s for _, s in served.hashtags] == pytest.approx(
            [s for _, s in expected.hashtags], abs=1e-3)  # thread counts differ
        assert replace(served, hashtags=()) == replace(expected, hashtags=())


def test_english_posts_get_confident_hashtags_and_unsupported_languages_say_so(
    triton: TritonInfo,
) -> None:
    rows, _ = generate(triton.grpc_url, [t for t, _ in POSTS], [lang for _, lang in POSTS])
    # A post may get none: the threshold hides hashtags the model is not confident of.
    assert any(row.hashtags for row in rows[:3])
    for row in rows[:3]:
        assert row.status == "ok" and row.lang == "en"
        tags = [t for t, _ in row.hashtags]
        assert all(t and " " not in t and not t.startswith("#") for t in tags)
        assert len({t.lower() for t in tags}) == len(tags)  # duplicates removed
        # best first by the served score, none below the checkpoint's threshold
        assert all(score >= served_min_score() for _, score in row.hashtags)
    assert rows[3] == HashtagResult((), "es", "unsupported_language", truncated=False, blocked=0)


def test_chinese_posts_are_routed_by_language_or_script(triton: TritonInfo) -> None:
    texts = ["今天国内油价下调，汽柴油每吨降低",
             "全场比赛结束，巴塞罗那主场5:0战胜西班牙人，梅西上演帽子戏法"]
    rows, _ = generate(triton.grpc_url, texts, ["zh-Hans", ""])  # named, and by script
    zh_shipped = (serving_dir("hashtag_generator") / "hashtag_zh.pt").exists()
    local = HashtagService(serving_dir("hashtag_generator"), beam=served_param("beam"),
                           n_best=served_param("n_best")).generate(texts, ["zh", "zh"])
    for row, expected in zip(rows, local, strict=True):
        assert row.lang == "zh"
        if zh_shipped:  # the Chinese model answered; a post may get none above the threshold
            assert row.status == "ok"
            assert [t for t, _ in row.hashtags] == [t for t, _ in expected.hashtags]
        else:
            assert row.status == "unsupported_language" and row.hashtags == ()
    assert any(row.hashtags for row in rows) == zh_shipped


def test_long_text_is_flagged_truncated(triton: TritonInfo) -> None:
    rows, _ = generate(triton.grpc_url, ["word " * 30_000, "short post about the weather"],
                       ["en", "en"])
    assert rows[0].truncated is True and rows[0].status == "ok"
    assert rows[1].truncated is False


def test_text_and_lang_of_different_lengths_are_an_error(triton: TritonInfo) -> None:
    client = grpcclient.InferenceServerClient(triton.grpc_url)
    with pytest.raises(InferenceServerException):
        client.infer("hashtag_generator",
                     [strings("TEXT", ["a post", "another"]), strings("LANG", ["en"])])


def test_a_blocklisted_hashtag_makes_room_for_the_next_candidate_and_is_counted(tmp_path):
    shipped = shipped_checkpoint("en")
    (tmp_path / shipped.name).symlink_to(shipped.resolve())
    text = [POSTS[0][0]]
    unfiltered = HashtagService(tmp_path, beam=4).generate(text, ["en"])[0]
    first = unfiltered.hashtags[0][0]
    (tmp_path / "blocklist.txt").write_text(f"# test\n{first}\n", encoding="utf-8")
    filtered = HashtagService(tmp_path, beam=4).generate(text, ["en"])[0]
    assert unfiltered.blocked == 0 and filtered.blocked >= 1
    assert filtered.hashtags, "another candidate of the beam takes the blocked one's place"
    assert not any(Blocklist([first]).blocks(t) for t, _ in filtered.hashtags)
    assert filtered.hashtags[0][1] <= unfiltered.hashtags[0][1]
