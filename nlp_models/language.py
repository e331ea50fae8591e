"""Which model a text goes to: the given language tag, else a guess from its script."""

from __future__ import annotations


def is_cjk(c: str) -> bool:
    return "\u4e00" <= c <= "\u9fff" or "\u3400" <= c <= "\u4dbf"


def resolve_language(lang: str, text: str) -> str:
    """'zh-Hans' -> 'zh', 'EN' -> 'en', '' -> guessed: mostly CJK letters -> 'zh', else 'en'."""
    base = lang.strip().lower().replace("_", "-").split("-")[0]
    if base:
        return base
    letters = [c for c in text[:2000] if c.isalpha()]
    cjk = sum(is_cjk(c) for c in letters)
    return "zh" if letters and cjk / len(letters) >= 0.3 else "en"
