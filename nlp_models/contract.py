"""What each served model takes and answers: its tensor names, and its answers as typed
records with their wire format, one JSON string per input row in the model's BYTES output
(TAGS_JSON, HASHTAGS_JSON, HEADLINES_JSON).

Both sides of Triton use this module: the models build the records and `to_json` them
(nlp_models/triton_backend.py), the services parse them back with `*_from_json`
(services/triton.py). Standard library only, so the services import it without torch.
The wire format is stable: services parse answers of older served versions too.
"""

from __future__ import annotations

import json
from dataclasses import asdict, dataclass

# Tensor names of the models' config.pbtxt (inputs, then each model's one output).
TEXT, LANG, ARTICLE, PHRASE, STRATEGY, CANDIDATES = (
    "TEXT", "LANG", "ARTICLE", "PHRASE", "STRATEGY", "CANDIDATES")
TAGS_JSON, HASHTAGS_JSON, HEADLINES_JSON = "TAGS_JSON", "HASHTAGS_JSON", "HEADLINES_JSON"


@dataclass(frozen=True)
class TaggedToken:
    """A token of the text with its character offsets and one tag per tagset ("" when the
    model has no head for that tagset)."""

    text: str
    start: int
    end: int
    ptb: str
    ark: str


@dataclass(frozen=True)
class TagResult:
    """Tokens of one text; `truncated` when only a prefix was tagged."""

    tokens: tuple[TaggedToken, ...]
    truncated: bool


@dataclass(frozen=True)
class HashtagResult:
    """Generated hashtags of one text, best first, with scores (nlp_models/hashtag/
    predictor.py); `status` "ok" or "unsupported_language"; `blocked`: how many hashtags
    the blocklist removed from the candidates."""

    hashtags: tuple[tuple[str, float], ...]
    lang: str
    status: str
    truncated: bool
    blocked: int = 0


@dataclass(frozen=True)
class HeadlineResult:
    """Headline candidates for one article (and phrase), best first, with scores; `status`
    "ok" or a refusal ("unsupported_language", "phrase_too_long", ...) explained by
    `message`. Constrained answers name the phrase and the generation order used."""

    candidates: tuple[tuple[str, float], ...]
    status: str
    lang: str
    truncated: bool
    message: str = ""
    phrase: str = ""
    strategy: str = ""


def tags_to_json(result: TagResult) -> str:
    """`{"tokens": [[text, start, end, ptb, ark], ...], "truncated": bool}`."""
    tokens = [[t.text, t.start, t.end, t.ptb, t.ark] for t in result.tokens]
    return json.dumps({"tokens": tokens, "truncated": result.truncated}, ensure_ascii=False)


def tags_from_json(raw: bytes | str) -> TagResult:
    """Raises ValueError on anything but the format above."""
    try:
        data = json.loads(raw)
        tokens = tuple(TaggedToken(str(t[0]), int(t[1]), int(t[2]), str(t[3]), str(t[4]))
                       for t in data["tokens"])
        return TagResult(tokens, bool(data.get("truncated", False)))
    except (ValueError, KeyError, IndexError, TypeError) as exc:
        raise ValueError(f"unexpected TAGS_JSON element: {exc}") from exc


def hashtags_to_json(result: HashtagResult) -> str:
    """`{"hashtags": [[tag, score], ...], "lang", "status", "truncated", "blocked"}`."""
    data = asdict(result)
    data["hashtags"] = [list(h) for h in result.hashtags]
    return json.dumps(data, ensure_ascii=False)


def hashtags_from_json(raw: bytes | str) -> HashtagResult:
    try:
        data = json.loads(raw)
        tags = tuple((str(t), float(score)) for t, score in data["hashtags"])
        return HashtagResult(tags, str(data["lang"]), str(data["status"]),
                             bool(data.get("truncated", False)), int(data.get("blocked", 0)))
    except (ValueError, KeyError, TypeError) as exc:
        raise ValueError(f"unexpected HASHTAGS_JSON element: {exc}") from exc


def headlines_to_json(result: HeadlineResult) -> str:
    """`{"candidates": [[headline, score], ...], "status", "lang", "truncated"}`, plus
    "message" on refusals and "phrase", "strategy" for constrained answers."""
    data = {"candidates": [list(c) for c in result.candidates], "status": result.status,
            "lang": result.lang, "truncated": result.truncated}
    for name in ("message", "phrase", "strategy"):
        if getattr(result, name):
            data[name] = getattr(result, name)
    return json.dumps(data, ensure_ascii=False)


def headlines_from_json(raw: bytes | str) -> HeadlineResult:
    try:
        data = json.loads(raw)
        candidates = tuple((str(text), float(score)) for text, score in data["candidates"])
        return HeadlineResult(candidates, str(data["status"]), str(data.get("lang", "")),
                              bool(data.get("truncated", False)), str(data.get("message", "")),
                              str(data.get("phrase", "")), str(data.get("strategy", "")))
    except (ValueError, KeyError, TypeError) as exc:
        raise ValueError(f"unexpected HEADLINES_JSON element: {exc}") from exc
