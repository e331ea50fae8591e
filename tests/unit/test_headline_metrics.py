"""Headline metrics: the paired bootstrap and the split of a difference by phrase inclusion."""

import random

import pytest

from training.headline.compare import _by_inclusion
from training.headline.data import Pair
from training.headline.metrics import paired_bootstrap


def test_a_constant_lead_has_a_zero_width_interval_at_that_lead():
    a = [0.1, 0.5, 0.3, 0.9]
    b = [x + 0.2 for x in a]
    assert paired_bootstrap(a, b) == {"diff": 0.2, "low": 0.2, "high": 0.2}


def test_the_interval_is_about_pairs_not_about_each_models_spread():
    """Scores that vary a lot between articles but hardly between models: the interval of
    the difference is narrow and excludes zero, though the two score ranges overlap."""
    rng = random.Random(1)
    a = [rng.random() for _ in range(500)]
    b = [x + 0.01 + rng.gauss(0, 0.01) for x in a]
    result = paired_bootstrap(a, b)
    assert 0 < result["low"] < result["diff"] < result["high"] < 0.02


def test_noise_around_no_difference_gives_an_interval_around_zero():
    rng = random.Random(2)
    a = [rng.random() for _ in range(400)]
    b = [x + rng.gauss(0, 0.1) for x in a]
    result = paired_bootstrap(a, b)
    assert result["low"] < 0 < result["high"]


def test_no_articles_is_an_error_not_a_nan():
    with pytest.raises(ValueError, match="no articles"):
        paired_bootstrap([], [])


def test_the_inclusion_split_accounts_for_the_whole_difference():
    pairs = [Pair(article="x", headline="h", phrase="Acme") for _ in range(4)]
    a_headlines = ["Acme buys", "Acme sells", "Ac me buys", "buys"]
    a_f, b_f = [0.5, 0.4, 0.1, 0.0], [0.6, 0.4, 0.5, 0.6]
    split = _by_inclusion(a_headlines, pairs, "en", a_f, b_f)
    assert split["included"]["articles"] == 2 and split["missed"]["articles"] == 2
    total = sum(b_f) / 4 - sum(a_f) / 4
    assert split["included"]["share"] + split["missed"]["share"] == pytest.approx(total, abs=1e-3)
    assert split["missed"]["share"] == pytest.approx(0.5 * (0.55 - 0.05), abs=1e-3)
