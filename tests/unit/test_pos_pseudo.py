"""Which raw tweets become pseudo-labelled training text: only those all teachers agree on."""

import pytest

from training.pos.pseudo import unanimous

SENTS = [["i", "run"], ["lol", "ok"], ["go", "home"]]


def test_a_tweet_is_kept_only_when_every_teacher_gives_every_token_the_same_tag():
    votes = [
        [["PRP", "VBP"], ["UH", "UH"], ["VB", "NN"]],
        [["PRP", "VBP"], ["UH", "JJ"], ["VB", "NN"]],
        [["PRP", "VBP"], ["UH", "UH"], ["VB", "RB"]],
    ]
    assert unanimous(SENTS, votes) == [(["i", "run"], ["PRP", "VBP"])]


def test_one_teacher_keeps_everything_and_none_is_an_error():
    votes = [[["PRP", "VBP"], ["UH", "UH"], ["VB", "NN"]]]
    assert [tags for _, tags in unanimous(SENTS, votes)] == votes[0]
    with pytest.raises(ValueError):
        unanimous(SENTS, [])
