"""The serving package stands alone: in the venv the local Triton's stub runs (created by
`deploy.local prepare` with nlp_models/requirements.txt only, as the Triton image), each
model's serving version loads from its own nlp_models.zip and answers, while the
repository's other packages and the training-only libraries cannot even be imported.
"""

from __future__ import annotations

import json
import subprocess
import textwrap

import pytest

from deploy.testing import TritonInfo
from deploy.triton import SERVING_REQUIREMENTS, serving_venv
from training.repository import SERVING_CODE, serving_dir

pytestmark = pytest.mark.integration

SCRIPT = textwrap.dedent("""
    import importlib.util, json, sys
    zips = json.loads(sys.argv[1])
    absent = [m for m in ("training", "services", "deploy", "rouge_score", "faust",
                          "elasticsearch", "grpc", "gensim") if importlib.util.find_spec(m)]
    out = {"importable_but_should_not_be": absent}

    def load(model):
        sys.path.insert(0, zips[model])
        for name in [m for m in sys.modules if m.split(".")[0] == "nlp_models"]:
            del sys.modules[name]   # each model with its own version's code
        import nlp_models
        out.setdefault("code", {})[model] = nlp_models.__file__

    load("pos_tagger")
    from nlp_models.pos.predictor import PosPredictor
    tagger = PosPredictor(zips["pos_tagger"].replace("nlp_models.zip", "pos_tagger.pt"))
    out["pos"] = [t.ptb for t in tagger.tag_texts(["I love this game !"])[0].tokens]
    from nlp_models.contract import hashtags_to_json, headlines_to_json

    load("hashtag_generator")
    from nlp_models.hashtag.serving import HashtagService
    hashtags = HashtagService(zips["hashtag_generator"][: -len("/nlp_models.zip")])
    out["hashtags"] = [json.loads(hashtags_to_json(r)) for r in hashtags.generate(
        ["Great win for the Lakers tonight", "今天北京下雪了"], ["en", "zh"])]

    load("headline_generator")
    from nlp_models.headline.serving import HeadlineService
    article = ("The central bank raised interest rates by half a point on Tuesday, its "
               "third increase this year, citing persistent inflation.")
    full = HeadlineService(zips["headline_generator"][: -len("/nlp_models.zip")])
    out["headline"] = [json.loads(headlines_to_json(r))
                       for r in full.generate([article], ["en"], [1])]

    load("constrained_headline_generator")
    from nlp_models.headline.serving import ConstrainedHeadlineService
    constrained = ConstrainedHeadlineService(
        zips["constrained_headline_generator"][: -len("/nlp_models.zip")])
    out["constrained"] = [json.loads(headlines_to_json(r)) for r in constrained.generate(
        [article], ["en"], ["interest rates"], [""], [1])]
    print(json.dumps(out, ensure_ascii=False))
""")

MODELS = ("pos_tagger", "hashtag_generator", "headline_generator",
          "constrained_headline_generator")


@pytest.fixture(scope="module")
def served(triton: TritonInfo) -> dict:
    """What the four serving versions answer inside the serving venv (which the `triton`
    fixture's prepare step made)."""
    python = serving_venv(triton.settings) / "bin" / "python"
    zips = {m: str(serving_dir(m, triton.settings.model_repository) / SERVING_CODE)
            for m in MODELS}
    env = {"NLP_POS_CLUSTERS": str(triton.settings.state_dir / "ark-clusters" / "50mpaths2"),
           "PATH": "/usr/bin:/bin", "OMP_NUM_THREADS": "1"}
    done = subprocess.run([str(python), "-I", "-c", SCRIPT, json.dumps(zips)], env=env,
                          capture_output=True, text=True, timeout=600, cwd="/")
    assert done.returncode == 0, done.stderr[-3000:]
    return json.loads(done.stdout.splitlines()[-1])


def test_the_venv_holds_only_the_serving_requirements(triton: TritonInfo) -> None:
    python = serving_venv(triton.settings) / "bin" / "python"
    frozen = subprocess.run([str(python), "-m", "pip", "freeze"], capture_output=True,
                            text=True, check=True).stdout.lower()
    for line in SERVING_REQUIREMENTS.read_text().splitlines():
        requirement = line.split("#")[0].strip().lower()
        if requirement:
            assert requirement in frozen  # pinned as in requirements.lock
    for other in ("faust", "elasticsearch", "grpcio", "rouge-score", "gensim", "nlp-stream"):
        assert other not in frozen


def test_nothing_but_the_serving_package_is_importable(served: dict) -> None:
    assert served["importable_but_should_not_be"] == []


def test_every_model_runs_its_own_versions_code(served: dict) -> None:
    for model in MODELS:
        assert served["code"][model].endswith(f"{SERVING_CODE}/nlp_models/__init__.py")
        assert f"/{model}/" in served["code"][model]


def test_all_four_models_answer(served: dict) -> None:
    assert served["pos"] == ["PRP", "VBP", "DT", "NN", "."]
    assert [r["lang"] for r in served["hashtags"]] == ["en", "zh"]
    assert [r["status"] for r in served["hashtags"]] == ["ok", "ok"]
    headline, _score = served["headline"][0]["candidates"][0]
    assert len(headline.split()) >= 3
    constrained, _score = served["constrained"][0]["candidates"][0]
    assert "interest rates" in constrained
