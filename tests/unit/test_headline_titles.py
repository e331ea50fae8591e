"""The English full generator reads titles before names as headlines write them
(nlp_models/headline/titles.py)."""

import pytest

from nlp_models.headline.titles import headline_titles


@pytest.mark.parametrize(("article", "read"), [
    ("U.S. Senator Olympia J. Snowe (R-Maine) today", "Sen. Olympia J. Snowe (R-Maine) today"),
    ("U.S. Senators Olympia J. Snowe and Susan Collins",
     "Sens. Olympia J. Snowe and Susan Collins"),
    ("Nevada Senator Harry Reid made", "Nevada Sen. Harry Reid made"),
    ("Congresswoman Jane Doe and Representative John Roe", "Rep. Jane Doe and Rep. John Roe"),
    ("Governor John Baldacci said", "Gov. John Baldacci said"),
])
def test_a_title_before_a_name_is_shortened(article: str, read: str) -> None:
    assert headline_titles(article) == read


def test_a_title_without_a_name_after_it_stays() -> None:
    text = "the Senator said the senators and the Governor of Maine agreed."
    assert headline_titles(text) == text


def test_a_constrained_headlines_spans_read_short_titles_unless_the_phrase_needs_the_long_one():
    from nlp_models.headline.titles import titled_holding

    release = "U.S. Senator Olympia J. Snowe today hailed the grant."
    assert titled_holding(release, "Snowe") == "Sen. Olympia J. Snowe today hailed the grant."
    assert titled_holding(release, "U.S. Senator") == release
