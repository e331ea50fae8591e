"""Language routing of the served hashtag generator (no model weights needed)."""

import pytest

from nlp_models.language import resolve_language


@pytest.mark.parametrize(
    ("lang", "text", "expected"),
    [
        ("en", "anything", "en"),
        ("zh-Hans", "anything", "zh"),
        ("ZH_tw", "anything", "zh"),
        ("es", "hola amigos", "es"),
        ("", "今天天气很好，我们去公园", "zh"),
        ("", "Great game tonight!", "en"),
        ("", "看 NBA finals tonight with friends", "en"),  # mostly Latin letters
        ("", "🙂🙂", "en"),
    ],
)
def test_language_is_the_given_one_else_guessed_from_the_script(lang, text, expected):
    assert resolve_language(lang, text) == expected
