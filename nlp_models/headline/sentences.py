"""Sentence splitting shared by the clause picker (served) and the training baselines."""

from __future__ import annotations

import re

SENTENCE_BREAK = {
    "en": re.compile(r"(?<=[.!?])[\"')\]]*\s+(?=[\"'(\[]?[A-Z0-9])"),
    "zh": re.compile(r"(?<=[。！？!?])"),
}


def sentences(article: str, lang: str) -> list[str]:
    """The article's sentences in order, every paragraph, blank ones left out."""
    return [s.strip() for paragraph in article.splitlines()
            for s in SENTENCE_BREAK[lang].split(paragraph) if s.strip()]
