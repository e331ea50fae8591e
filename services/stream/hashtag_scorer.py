"""One scorer for a post's hashtags: the generator's, its similar posts' and the trending ones.

Each source's evidence for a hashtag is put on the same 0..1 scale:

- ``generated``: 1 / (1 + rank) in the generator's list (its scores are log-probabilities
  whose scale varies with length and language; the rank does not);
- ``similar posts``: the neighbours' votes, each neighbour weighted by its BM25 score over
  the best one's, summed per hashtag and divided by the neighbours' total weight (1.0:
  every similar post carries it);
- ``trending``: posts using the hashtag in the window over the most used one's.

A hashtag's score is the weighted sum; below ``threshold`` it is not shown, and it is
shown with the source that contributed most. Hashtags are compared case-insensitively and
shown in the first spelling met. The weights are settings, to be chosen on dev streams
(never on a test stream).
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

from services.hashtags import GENERATED, SIMILAR, TRENDING, Suggestion
from services.stream.memory import Recall


@dataclass(frozen=True)
class Weights:
    """The scorer's weights; the worker's come from MemoryConfig (tuned on dev streams)."""

    generated: float = 1.0
    similar: float = 1.0
    trending: float = 0.5
    threshold: float = 0.1
    top: int = 5


def merge(generated: Sequence[tuple[str, float]], recall: Recall | None,
          weights: Weights = Weights()) -> list[Suggestion]:
    """The hashtags to show for one post, best first. ``recall`` None (no memory, or it
    did not answer in time): the generator alone on its own scale, i.e. its list as shown
    with the memory off, not its share of a merge that lacks the other evidence."""
    evidence: dict[str, dict[str, float]] = {}
    spelling: dict[str, str] = {}

    def add(tag: str, source: str, value: float) -> None:
        key = tag.lstrip("#").lower()
        if not key:
            return
        spelling.setdefault(key, tag.lstrip("#"))
        per = evidence.setdefault(key, {})
        per[source] = per.get(source, 0.0) + value

    own_scale = weights.generated if recall is not None else 1.0
    for rank, (tag, _) in enumerate(generated):
        add(tag, GENERATED, own_scale / (1 + rank))
    if recall is not None:
        for tag, share in _votes(recall.neighbours).items():
            add(tag, SIMILAR, weights.similar * share)
        most = max((n for _, n in recall.trending), default=0)
        for tag, n in recall.trending:
            add(tag, TRENDING, weights.trending * n / most)
    ranked = sorted(((sum(per.values()), key) for key, per in evidence.items()),
                    key=lambda pair: (-pair[0], pair[1]))
    return [Suggestion(spelling[key], round(score, 4),
                       max(evidence[key], key=evidence[key].__getitem__))
            for score, key in ranked if score >= weights.threshold][:weights.top]


def _votes(neighbours: Sequence[tuple[float, list[str]]]) -> dict[str, float]:
    """Per hashtag (first spelling), the BM25-weighted share of neighbours carrying it."""
    best = max((score for score, _ in neighbours), default=0.0)
    if best <= 0:
        return {}
    total = sum(score / best for score, _ in neighbours)
    votes: dict[str, float] = {}
    seen: dict[str, str] = {}
    for score, tags in neighbours:
        for tag in {t.lower(): t for t in tags}.values():
            name = seen.setdefault(tag.lower(), tag)
            votes[name] = votes.get(name, 0.0) + score / best / total
    return votes
