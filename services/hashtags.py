"""The author's hashtags of a post, and its text as if the author had written none.

The hashtag training data's rule (``../shared/data/hashtag/README.md``): the hashtags that
open or close a post are its targets and leave the text; a hashtag inside a sentence is a
word of it and stays, without its mark. English writes ``#tag``; Chinese (Weibo) writes
``#话题#``. Suggestions are made from ``without_edge_hashtags``, so a post that carries
hashtags doubles as a test item: did the suggestions find what its author wrote?
"""

from __future__ import annotations

import re
from dataclasses import dataclass

from services.pb import messages_pb2 as pb

GENERATED, SIMILAR, TRENDING = "generated", "similar posts", "trending"


@dataclass(frozen=True)
class Suggestion:
    """One hashtag shown for a post: its text (without '#'), score and source."""

    tag: str
    score: float
    source: str  # GENERATED, SIMILAR or TRENDING

# One English hashtag token: '#' then word characters, at least one a letter.
_EN_TAG = re.compile(r"^#(\w*[^\W\d_]\w*)[.,!?:;]*$")
# One Chinese topic: '#' ... '#' with no '#' or line break inside, at most 40 characters.
_ZH_TAG = re.compile(r"#([^#\n]{1,40})#")
_ZH_EDGE_START = re.compile(r"^\s*(?:#[^#\n]{1,40}#\s*)+")
_ZH_EDGE_END = re.compile(r"(?:\s*#[^#\n]{1,40}#)+\s*$")
_URL = re.compile(r"^https?://\S+$")


def is_chinese(post: pb.Post) -> bool:
    return memory_language(post) == "zh"


def memory_language(post: pb.Post) -> str:
    """The language a post's hashtags are suggested, remembered and recalled in: its own
    (primary subtag, lower case), else ``zh`` on Weibo and ``en`` elsewhere (as the POS
    tagger and the hashtag model treat a post without one)."""
    lang = post.lang.split("-")[0].lower()
    return lang or ("zh" if post.platform == pb.WEIBO else "en")


def edge_hashtags(text: str, chinese: bool) -> list[str]:
    """Hashtags that open or close ``text`` (without marks), in order, each once."""
    return _split(text, chinese)[1]


def without_edge_hashtags(text: str, chinese: bool) -> str:
    """``text`` without its opening and closing hashtags; inner ones lose their marks."""
    return _split(text, chinese)[0]


def author_hashtags(post: pb.Post) -> list[str]:
    """What the author tagged the post with: ``user_hashtags`` when the producer filled it,
    else the hashtags that open or close the text."""
    if post.user_hashtags:
        return _unique(h.lstrip("#") for h in post.user_hashtags)
    return edge_hashtags(post.text, is_chinese(post))


def _split(text: str, chinese: bool) -> tuple[str, list[str]]:
    if chinese:
        start = _ZH_EDGE_START.match(text)
        head = start.group(0) if start else ""
        rest = text[len(head):]
        end = _ZH_EDGE_END.search(rest)
        tail = end.group(0) if end else ""
        body = rest[: len(rest) - len(tail)]
        tags = _ZH_TAG.findall(head) + _ZH_TAG.findall(tail)
        return _ZH_TAG.sub(r"\1", body).strip(), _unique(t.strip() for t in tags)
    tokens = text.split()
    lead: list[str] = []
    while tokens and (m := _EN_TAG.match(tokens[0])):
        lead.append(m.group(1))
        tokens.pop(0)
    trail: list[str] = []
    urls: list[str] = []
    while tokens and ((m := _EN_TAG.match(tokens[-1])) or _URL.match(tokens[-1])):
        if m:
            trail.insert(0, m.group(1))
        else:
            urls.insert(0, tokens[-1])
        tokens.pop()
    body = [t[1:] if _EN_TAG.match(t) else t for t in tokens] + urls
    return " ".join(body), _unique(lead + trail)


def _unique(tags) -> list[str]:
    seen: dict[str, str] = {}
    for tag in tags:
        if tag and tag.lower() not in seen:
            seen[tag.lower()] = tag
    return list(seen.values())
