"""Hashtags for a batch of (text, language) pairs: the logic the Triton model wraps.

Kept out of model.py (the Triton entry point) so the benchmark's in-process path and the
served path run exactly the same code. A post is routed to the model of its language;
an empty language is guessed from the script (mostly CJK -> zh, else en); any other
language gets status "unsupported_language" and no hashtags rather than English guesses.
Hashtags scoring below the checkpoint's threshold (`min_score`, chosen on dev by
`training tune hashtag`) are not shown; candidate sequences with a hashtag matching the
version's `blocklist.txt` (see blocklist.py) are passed over, their blocked hashtags counted
in `blocked`.
"""

from __future__ import annotations

from pathlib import Path

from nlp_models.contract import HashtagResult
from nlp_models.hashtag.blocklist import Blocklist
from nlp_models.hashtag.predictor import HashtagPredictor
from nlp_models.language import resolve_language
from nlp_models.limits import MAX_POST_CHARS

LANGUAGES = ("en", "zh")


class HashtagService:
    """Predictors per language, loaded from `hashtag_<lang>.pt` files in one directory, and
    the directory's `blocklist.txt` when there is one."""

    def __init__(self, directory: str | Path, beam: int = 4, n_best: int = 1):
        self.beam, self.n_best = beam, n_best
        self.predictors = {
            lang: HashtagPredictor(path)
            for lang in LANGUAGES
            if (path := Path(directory) / f"hashtag_{lang}.pt").exists()
        }
        if not self.predictors:
            raise FileNotFoundError(f"no hashtag_en.pt or hashtag_zh.pt in {directory}")
        blocklist = Path(directory) / "blocklist.txt"
        self.blocklist = Blocklist.load(blocklist) if blocklist.exists() else Blocklist([])
        for predictor in self.predictors.values():
            predictor.blocklist = self.blocklist

    def generate(self, texts: list[str], langs: list[str]) -> list[HashtagResult]:
        """One result per text (nlp_models/contract.py)."""
        results: list[HashtagResult | None] = [None] * len(texts)
        by_lang: dict[str, list[int]] = {}
        for i, (text, lang) in enumerate(zip(texts, langs, strict=True)):
            resolved = resolve_language(lang, text)
            if resolved in self.predictors:
                by_lang.setdefault(resolved, []).append(i)
            else:
                results[i] = HashtagResult((), resolved, "unsupported_language", False)
        for lang, idx in by_lang.items():
            cut = [texts[i][:MAX_POST_CHARS] for i in idx]
            predictor = self.predictors[lang]
            outputs = predictor.generate(cut, beam=self.beam, n_best=self.n_best)
            for i, short, out in zip(idx, cut, outputs, strict=True):
                kept = tuple((t, round(s, 4)) for t, s in out.hashtags(predictor.min_score))
                results[i] = HashtagResult(kept, lang, "ok",
                                           out.truncated or len(short) < len(texts[i]),
                                           out.blocked)
        return results
