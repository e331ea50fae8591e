"""POS tags for a batch of post texts: the logic the Triton model wraps.

Kept out of the Triton entry point (triton_backend.py) so the benchmarks' in-process path
and the served path run the same code, as for the other models (hashtag/serving.py,
headline/serving.py). A text longer than MAX_POST_CHARS is tagged on its first
MAX_POST_CHARS code points and flagged ``truncated``, so the flag always means "the tokens
do not cover the whole text" (the predictor sets it too when its own token limit cuts).
"""

from __future__ import annotations

from dataclasses import replace
from pathlib import Path

from nlp_models.contract import TagResult
from nlp_models.limits import MAX_POST_CHARS
from nlp_models.pos.predictor import PosPredictor


class PosService:
    """The tagger of one checkpoint, with the serving limit on text length."""

    def __init__(self, checkpoint: str | Path, max_chars: int = MAX_POST_CHARS):
        self.predictor = PosPredictor(str(checkpoint))
        self.max_chars = max_chars

    def tag(self, texts: list[str]) -> list[TagResult]:
        cut = [t[: self.max_chars] for t in texts]
        return [replace(result, truncated=result.truncated or len(short) < len(text))
                for text, short, result in zip(texts, cut, self.predictor.tag_texts(cut),
                                               strict=True)]
