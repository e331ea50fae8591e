"""The headline ranker: a candidate's features, the pairwise fit, its order, its state."""

from __future__ import annotations

import random
from pathlib import Path

import pytest
import torch

from nlp_models.headline.compressor import Compressor, CompressorConfig, tokens
from nlp_models.headline.lead import first_sentence
from nlp_models.headline.model import HeadlineConfig, HeadlineGenerator
from nlp_models.headline.predictor import HeadlinePredictor, save_checkpoint
from nlp_models.headline.ranker import (
    FEATURES,
    Candidate,
    Ranker,
    aligned,
    article_vocabulary,
    features,
    withheld_because,
)
from nlp_models.headline.vocab import SubwordVocab
from training.headline.compression import vocabularies
from training.headline.lead import set_lead
from training.headline.ranker import collect, evaluate, fit, read_rows

ARTICLE = ("A federal judge in Denver sentenced a Colorado business owner to four years in "
           "prison on Tuesday for evading taxes on his restaurant income.")
SENTENCE = [w.lower() for w in ARTICLE.rstrip(".").split()]


def feats(text: str, logits: list[float] | None = None) -> dict[str, float]:
    pairs, words = article_vocabulary(ARTICLE)
    return features(text, "compressed", -1.0, SENTENCE, logits or [1.0] * len(SENTENCE),
                    pairs, words, target=8)


def test_a_deletion_is_aligned_to_its_sentence_and_a_rewrite_is_not() -> None:
    assert aligned(["a", "judge", "in", "denver", "sentenced"], ["judge", "sentenced"]) == [1, 4]
    assert aligned(["a", "judge", "sentenced"], ["sentenced", "judge"]) is None


def test_one_run_of_the_sentence_reads_as_the_article_wrote_it() -> None:
    whole = feats("Colorado business owner to four years in prison")
    glued = feats("Colorado, Denver to tax evading restaurant four")
    assert whole["is_deletion"] == 1.0 and whole["runs"] == 1.0
    assert whole["pair_support"] == 1.0 and whole["novel_words"] == 0.0
    assert glued["is_deletion"] == 0.0  # "Denver" before "Colorado": no deletion of it
    assert glued["pair_support"] < 0.5
    assert whole["length_gap"] == 0.0 and whole["abs_length_gap"] == 0.0


def test_the_compressor_is_less_sure_of_a_deletion_that_keeps_what_it_would_drop() -> None:
    logits = [-3.0 if w in {"a", "federal", "in", "on", "for", "his"} else 3.0
              for w in SENTENCE]
    sure = feats("judge Denver sentenced Colorado business owner", logits)
    forced = feats("a federal judge in Denver sentenced a Colorado", logits)
    assert sure["decision_logprob"] > forced["decision_logprob"]
    assert sure["min_kept_logit"] > forced["min_kept_logit"]


def row(rng: random.Random) -> dict:
    """An article whose candidates' ROUGE-L follows pair_support, with the judge as noise."""
    cands = []
    for source in ("beam", "compressed", "compressed", "trimmed"):
        support = rng.random()
        f = {name: 0.0 for name in FEATURES}
        f.update(pair_support=support, judge=rng.gauss(-2, 1),
                 from_beam=float(source == "beam"))
        cands.append({"text": f"{source} {support:.3f}", "source": source, "features": f,
                      "rougeL": 0.6 * support + rng.gauss(0, 0.02)})
    return {"headline": "h", "candidates": cands, "withheld": 0}


def test_the_fit_learns_what_brings_a_candidate_closer_to_the_editors() -> None:
    rng = random.Random(7)
    ranker = fit([row(rng) for _ in range(200)])
    assert ranker.weights["pair_support"] > 0
    assert abs(ranker.weights["judge"]) < ranker.weights["pair_support"]
    result = evaluate([row(rng) for _ in range(100)], ranker)
    assert result["rougeL"]["ranker"] > result["rougeL"]["judge_best"] + 5
    assert result["rougeL"]["ranker"] >= result["rougeL"]["oracle"] - 2


def test_the_ranker_orders_by_its_weights_and_survives_its_state() -> None:
    ranker = Ranker({"pair_support": 2.0, "abs_length_gap": -0.5}, bias=0.1)
    good = Candidate("Colorado business owner sentenced", "compressed",
                     {"pair_support": 1.0, "abs_length_gap": 1.0})
    glued = Candidate("Colorado Denver tax four", "beam",
                      {"pair_support": 0.2, "abs_length_gap": 1.0})
    assert ranker.order([glued, good]) == [good, glued]
    again = Ranker.from_state(ranker.to_state())
    assert again.score(good) == pytest.approx(ranker.score(good))
    with pytest.raises(ValueError, match="unknown features"):
        Ranker.from_state({"weights": {"fluency": 1.0}})


def test_a_candidate_that_stops_on_a_function_word_is_marked() -> None:
    assert feats("judge sentenced Colorado business owner for")["ends_with_function_word"] == 1
    assert feats("A federal judge sentenced Colorado owner")["opens_with_function_word"] == 1
    whole = feats("judge sentenced Colorado business owner")
    assert whole["ends_with_function_word"] == whole["opens_with_function_word"] == 0


def test_a_candidate_is_withheld_with_its_reason() -> None:
    assert withheld_because("Colorado business owner sentenced", ARTICLE) is None
    assert withheld_because("Colorado owner sentenced to 14 years", ARTICLE) == "unsupported"
    assert withheld_because("Colorado owner sentenced, owner jailed", ARTICLE) == "repeats"
    assert withheld_because("Colorado owner", ARTICLE) == "length"


NEWS = ("SAN DIEGO -- Mayo Clinic researchers have found that an oral drug, apixaban, "
        "prevents clots in patients with cancer. The study followed 300 patients.")


@pytest.fixture(scope="module")
def generator_with_compressor(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """A tiny untrained English generator with a tiny compressor as lead spans."""
    torch.manual_seed(0)
    corpus = [NEWS, "The central bank raised interest rates by a quarter point on Tuesday."] * 30
    vocab = SubwordVocab.build(corpus, size=200)
    model = HeadlineGenerator(HeadlineConfig(len(vocab), variant="xl-cc", d_model=32, n_heads=2,
                                             enc_layers=1, dec_layers=1, d_ff=64,
                                             segment_len=16, mem_len=16, max_source=64,
                                             max_target=16))
    home = tmp_path_factory.mktemp("ranker")
    save_checkpoint(home / "headline_en.pt", model, vocab, "en", "generator", {"run": "t"})
    words, suffixes = vocabularies([{"tokens": tokens(s)} for s in corpus[:2] * 2])
    compressor = Compressor(CompressorConfig(len(words), len(suffixes), word_dim=8,
                                             suffix_dim=4, hidden=8, layers=1), words, suffixes)
    torch.save(compressor.to_state(), home / "compressor.pt")
    set_lead(str(home / "headline_en.pt"), 0.75, 1.5, str(home / "best.pt"),
             spans="compressed", target=6, compressor=str(home / "compressor.pt"))
    return home / "best.pt"


def test_collect_proposes_from_every_source_and_counts_what_it_withholds(
        generator_with_compressor: Path, tmp_path: Path) -> None:
    pred = HeadlinePredictor.load(generator_with_compressor)
    pair = {"id": "p1", "article": NEWS, "headline": "Oral drug prevents clots in cancer"}
    assert collect(pred, [pair], 6, tmp_path / "c.jsonl") == 1
    [written] = read_rows([tmp_path / "c.jsonl"])
    cands = written["candidates"]
    assert {"compressed", "trimmed"} <= {c["source"] for c in cands}
    assert set(written["withheld"]) <= {"unsupported", "repeats", "length"}
    for c in cands:
        assert set(c["features"]) == set(FEATURES) and 0.0 <= c["rougeL"] <= 1.0
        assert withheld_because(c["text"], NEWS) is None
    first = tokens(first_sentence(NEWS))
    for c in cands:
        if c["source"] == "compressed":  # a deletion: the lead's tokens in the lead's order
            rest = iter(first)
            assert all(t in rest for t in tokens(c["text"]))
            assert c["features"]["is_deletion"] == 1.0
