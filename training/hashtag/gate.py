"""The hashtag generator's gate (``python -m training publish hashtag_generator``): ROUGE-1
on the dev sets at most 0.5 points below the serving version's, and the share of posts
given the single most frequent hashtag at most 2 points above."""

from __future__ import annotations

from pathlib import Path

from training.gate import Checkpoint, GateSet, ModelGate, Rule, generator_sets

# The served decoding (`parameters` of model_repository/hashtag_generator/config.pbtxt): the
# gate compares what users would get. At the paper's protocol (beam 20, top 10) a checkpoint
# tuned for beam 4 can look collapsed: a wide beam finds the favourites its prior weight was
# never tuned against (Chinese version 7: top_share 0.83 at beam 20, 0.04 at beam 4).
SERVED_BEAM, SERVED_N_BEST = 4, 3


def load(path: Path) -> Checkpoint:
    from nlp_models.hashtag.predictor import HashtagPredictor

    lang = HashtagPredictor(path).lang
    return Checkpoint(f"hashtag_{lang}.pt", lang, {"lang": lang})


def evaluate(model: Path, gate_set: GateSet) -> dict:
    from training.hashtag.evaluate import evaluate

    return evaluate(str(gate_set.path), gate_set.option, str(model), beam=SERVED_BEAM,
                    n_best=SERVED_N_BEST)


GATE = ModelGate(Rule("rouge1", 0.005, {"top_share": 0.02}), load, generator_sets("hashtag"),
                 evaluate)
