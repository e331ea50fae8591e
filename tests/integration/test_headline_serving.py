"""The headline generators as Triton serves them: the real tritonserver, the shipped weights.

Served candidates equal the in-process services' run with the version's own serving code
(its nlp_models.zip, as Triton runs it; one code path, same beam), every
constrained candidate contains its phrase in all four generation orders, articles longer
than one segment are read whole (segment recurrence), and each kind of bad input gets its
defined status instead of a crash or a wrong answer.
"""

from __future__ import annotations

import json
import re
import subprocess
import sys
import textwrap

import numpy as np
import pytest
import tritonclient.grpc as grpcclient

from deploy.testing import TritonInfo
from nlp_models.contract import HeadlineResult, headlines_from_json
from training.headline.evaluate import CONSTRAINED_MODEL, FULL_MODEL
from training.headline.metrics import contains_phrase
from training.repository import serving_dir

pytestmark = pytest.mark.integration

ARTICLE = ("Toyota Motor Corp said on Tuesday it would recall about 1.2 million vehicles in "
           "Japan and the United States to fix faulty brake pedals, the largest recall in the "
           "company's history. The carmaker said no accidents had been reported.")
ZH_ARTICLE = ("据新华社报道，丰田汽车公司周二宣布，将在日本和美国召回约120万辆汽车，"
              "以修复刹车踏板缺陷。")


def strings(name: str, values: list[str]) -> grpcclient.InferInput:
    arr = np.array([v.encode() for v in values], dtype=object).reshape(-1, 1)
    tensor = grpcclient.InferInput(name, list(arr.shape), "BYTES")
    tensor.set_data_from_numpy(arr)
    return tensor


def infer(url: str, model: str, **inputs: list[str]) -> tuple[list[HeadlineResult], str]:
    client = grpcclient.InferenceServerClient(url)
    result = client.infer(model, [strings(k, v) for k, v in inputs.items()])
    rows = [headlines_from_json(x) for x in result.as_numpy("HEADLINES_JSON").reshape(-1)]
    return rows, result.get_response().model_version


# The in-process service of a version: its own nlp_models.zip first on the path, in a fresh
# interpreter (this process has imported the checkout's nlp_models, which may be newer).
LOCAL = textwrap.dedent("""
    import json, sys
    version_dir, request = sys.argv[1], json.loads(sys.argv[2])
    sys.path.insert(0, version_dir + "/nlp_models.zip")
    from nlp_models.contract import headlines_to_json
    from nlp_models.headline.serving import ConstrainedHeadlineService, HeadlineService
    service = (HeadlineService if request["full"] else ConstrainedHeadlineService)(
        version_dir, beam=request["beam"], n_best=request["n_best"])
    print(json.dumps([headlines_to_json(r) for r in service.generate(*request["inputs"])]))
""")


def in_process(model: str, *inputs: list[str]) -> list[HeadlineResult]:
    request = {"full": model == FULL_MODEL, "beam": param(model, "beam"),
               "n_best": param(model, "n_best"), "inputs": inputs}
    out = subprocess.run([sys.executable, "-c", LOCAL, str(serving_dir(model)),
                          json.dumps(request)], capture_output=True, text=True, timeout=600)
    assert out.returncode == 0, out.stderr[-2000:]
    return [headlines_from_json(x) for x in json.loads(out.stdout.strip().splitlines()[-1])]


def shipped(model: str, lang: str) -> bool:
    return (serving_dir(model) / f"headline_{lang}.pt").exists()


def param(model: str, key: str) -> int:
    config = (serving_dir(model).parent / "config.pbtxt").read_text()
    return int(re.search(rf'key: "{key}" value: {{ string_value: "(\d+)" }}', config).group(1))


def test_served_full_headlines_equal_the_in_process_service(triton: TritonInfo) -> None:
    articles, langs = [ARTICLE, ZH_ARTICLE], ["en", ""]
    rows, version = infer(triton.grpc_url, "headline_generator", ARTICLE=articles, LANG=langs)
    assert version.isdigit()
    for served, expected in zip(rows, in_process(FULL_MODEL, articles, langs), strict=True):
        assert [t for t, _ in served.candidates] == [t for t, _ in expected.candidates]
        assert [s for _, s in served.candidates] == pytest.approx(
            [s for _, s in expected.candidates], abs=1e-3)
    assert rows[0].status == "ok" and rows[0].candidates
    assert rows[1].lang == "zh"  # guessed from the script
    # Chinese is served once its weights are shipped; until then the outcome is explicit.
    zh_status = "ok" if shipped(FULL_MODEL, "zh") else "unsupported_language"
    assert rows[1].status == zh_status and bool(rows[1].candidates) == (zh_status == "ok")


@pytest.mark.parametrize("strategy", ["seq-b", "seq-f", "tok-b", "tok-f", ""])
def test_every_constrained_candidate_contains_its_phrase(triton: TritonInfo, strategy) -> None:
    articles = [ARTICLE, ARTICLE, ZH_ARTICLE]
    phrases = ["brake pedals", "Honda", "丰田"]  # "Honda" is not in the article
    rows, _ = infer(triton.grpc_url, "constrained_headline_generator", ARTICLE=articles,
                    LANG=["en", "en", "zh"], PHRASE=phrases, STRATEGY=[strategy] * 3)
    for row, phrase, lang in zip(rows, phrases, ["en", "en", "zh"], strict=True):
        if not shipped(CONSTRAINED_MODEL, lang):
            assert row.status == "unsupported_language"
            continue
        assert row.status == "ok" and row.candidates, row
        assert all(contains_phrase(text, phrase, lang) for text, _ in row.candidates)
        assert row.strategy in ((strategy,) if strategy else ("tok-b", "he"))


def test_strategy_input_is_optional_and_served_equals_in_process(triton: TritonInfo) -> None:
    rows, _ = infer(triton.grpc_url, "constrained_headline_generator", ARTICLE=[ARTICLE],
                    LANG=["en"], PHRASE=["Toyota"])
    (expected,) = in_process(CONSTRAINED_MODEL, [ARTICLE], ["en"], ["Toyota"], [""])
    assert [t for t, _ in rows[0].candidates] == [t for t, _ in expected.candidates]


def test_long_articles_are_read_whole_up_to_the_model_budget(triton: TritonInfo) -> None:
    four_hundred_words = " ".join([ARTICLE] * 9)  # ~400 words, several XL segments
    huge = " ".join([ARTICLE] * 100)  # ~5,000 words: beyond the 4,096 tokens a model reads
    rows, _ = infer(triton.grpc_url, "headline_generator", ARTICLE=[four_hundred_words, huge],
                    LANG=["en", "en"])
    assert rows[0].status == "ok" and rows[0].truncated is False
    assert rows[1].status == "ok" and rows[1].truncated is True


def test_bad_input_gets_a_defined_status(triton: TritonInfo) -> None:
    cases = [  # (article, lang, phrase, strategy) -> status
        (("  ", "en", "Toyota", ""), "empty_article"),
        ((ARTICLE, "es", "Toyota", ""), "unsupported_language"),
        ((ARTICLE, "en", " ", ""), "empty_phrase"),
        ((ARTICLE, "en", " ".join(["brake"] * 60), ""), "phrase_too_long"),
        ((ARTICLE, "en", "丰田汽车公司", ""), "unsupported_phrase"),
        ((ARTICLE, "en", "Toyota", "sideways"), "invalid_strategy"),
    ]
    columns = list(zip(*[c for c, _ in cases], strict=True))
    rows, _ = infer(triton.grpc_url, "constrained_headline_generator", ARTICLE=list(columns[0]),
                    LANG=list(columns[1]), PHRASE=list(columns[2]), STRATEGY=list(columns[3]))
    assert [r.status for r in rows] == [status for _, status in cases]
    assert all(r.candidates == () and r.message for r in rows)
    full, _ = infer(triton.grpc_url, "headline_generator", ARTICLE=["", ARTICLE],
                    LANG=["en", "fr"])
    assert [r.status for r in full] == ["empty_article", "unsupported_language"]
