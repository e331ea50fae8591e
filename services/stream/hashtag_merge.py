"""The learned merge: which of a post's candidate hashtags to show, each with a probability.

Candidates are every hashtag the generator proposed, any similar earlier post carries or
the window trends with (compared case-insensitively, shown in the first spelling met).
Each gets the features below, and gradient-boosted trees per language, fitted on the
dev streams' author hashtags (``python -m training tune hashtag-merge``, scikit-learn;
never on a test stream), turn them into the probability that the author would write
it. The most probable is shown when it reaches the language's first floor, the others
when they reach the higher floor for more (both chosen on the dev streams' later part,
for precision), at most ``top``: a post that resembles nothing is shown one hashtag or
none, not five weak neighbours' tags. Each shown hashtag's ``source`` is the evidence
whose absence would lower its probability most.

The trees and floors are data (``hashtag_merge.json`` beside this file, or
``NLP_HASHTAG_MERGE``), read once by the worker and evaluated with numpy: the worker
needs no scikit-learn.
"""

from __future__ import annotations

import json
import math
from collections import Counter, deque
from collections.abc import Iterable, Sequence
from dataclasses import dataclass, field
from pathlib import Path

import numpy as np

from services.config import SHIPPED_MERGE
from services.hashtags import GENERATED, SIMILAR, TRENDING, Suggestion
from services.stream.memory import Recall

#: feature name -> the source whose evidence it is (None: describes the post, not a source)
FEATURES: dict[str, str | None] = {
    "generated": GENERATED,  # 1: the generator proposed it
    "generated_rank": GENERATED,  # 1 / (1 + its rank in the generator's list), else 0
    "generated_prob": GENERATED,  # exp(the generator's log-probability), else 0
    "favourite": GENERATED,  # generated only: log(1 + times the generator proposed it
    #                          lately) - log(1 + posts whose authors used it in the window)
    "neighbours": SIMILAR,  # share of the similar posts carrying it
    "neighbour_vote": SIMILAR,  # the same share, each post weighted by BM25 / best BM25
    "neighbour_bm25": SIMILAR,  # BM25 of the best similar post carrying it / the best's
    "neighbour_overlap": SIMILAR,  # the largest share of the post's words a carrier holds
    "neighbour_rank": SIMILAR,  # 1 / (1 + rank of the first similar post carrying it)
    "neighbour_recency": SIMILAR,  # 1 - age of the newest carrier / 24 h (at least 0)
    "trending": TRENDING,  # posts using it in the window / posts using the top hashtag
    "trending_posts": TRENDING,  # log(1 + posts using it in the window)
    "trending_rising": TRENDING,  # share of those posts in the window's last quarter
    "best_overlap": None,  # the largest share of the post's words any similar post holds:
    #                        does it resemble anything? (BM25 itself moves with the index)
    "in_post": None,  # 1: its letters occur in the post (spaces and case ignored)
}


@dataclass(frozen=True)
class Candidate:
    """One hashtag that could be shown for a post, with its evidence."""

    key: str  # lowercased, without '#'
    tag: str  # as first spelled
    features: dict[str, float]


@dataclass(frozen=True)
class Floor:
    """The probabilities a post's first hashtag, and each further one, must reach."""

    first: float
    more: float


@dataclass(frozen=True)
class Trees:
    """Gradient-boosted regression trees on the log-odds, one row of padded node arrays
    per tree. A leaf's children are itself, so ``depth`` steps reach every leaf."""

    baseline: float
    feature: np.ndarray  # (trees, nodes) the feature a node splits on
    threshold: np.ndarray  # (trees, nodes) go left when the value is at most this
    left: np.ndarray  # (trees, nodes) child node indices
    right: np.ndarray
    value: np.ndarray  # (trees, nodes) a leaf's log-odds contribution
    depth: int

    @classmethod
    def from_json(cls, data: dict) -> Trees:
        trees = data["trees"]
        width = max(len(t["value"]) for t in trees)

        def pad(key: str, dtype: type) -> np.ndarray:
            out = np.zeros((len(trees), width), dtype=dtype)
            for i, t in enumerate(trees):
                out[i, :len(t[key])] = t[key]
            return out

        return cls(float(data["baseline"]), pad("feature", np.int64),
                   pad("threshold", np.float64), pad("left", np.int64),
                   pad("right", np.int64), pad("value", np.float64), int(data["depth"]))

    def to_json(self) -> dict:
        return {"baseline": self.baseline, "depth": self.depth, "trees": [
            {"feature": f.tolist(), "threshold": t.tolist(), "left": lt.tolist(),
             "right": r.tolist(), "value": v.tolist()}
            for f, t, lt, r, v in zip(self.feature, self.threshold, self.left, self.right,
                                      self.value, strict=True)]}

    def logit(self, x: np.ndarray) -> np.ndarray:
        """(candidates, features) -> (candidates,) log-odds."""
        rows, trees = np.arange(len(x))[:, None], np.arange(len(self.feature))
        node = np.zeros((len(x), len(trees)), dtype=np.int64)
        for _ in range(self.depth):
            go_left = x[rows, self.feature[trees, node]] <= self.threshold[trees, node]
            node = np.where(go_left, self.left[trees, node], self.right[trees, node])
        return self.baseline + self.value[trees, node].sum(axis=1)


@dataclass(frozen=True)
class MergeModel:
    """Per language, boosted trees over ``FEATURES``, and what is shown."""

    trees: dict[str, Trees]
    floors: dict[str, Floor]
    top: int = 5
    #: per language, posts with author hashtags its window must hold before the trees
    #: judge its posts; a younger memory (a new stream, the demo's first minutes) is no
    #: memory yet: the generator alone, as with the memory off (chosen on a dev stream
    #: replayed into an empty index; a language without one: 0)
    min_posts: dict[str, int] = field(default_factory=dict)

    @classmethod
    def load(cls, path: Path = SHIPPED_MERGE) -> MergeModel:
        data = json.loads(Path(path).read_text(encoding="utf-8"))
        if data.get("features") != list(FEATURES):
            raise ValueError(f"{path}: fitted on features {data.get('features')}, this code "
                             f"computes {list(FEATURES)}; fit it again (python -m training "
                             "tune hashtag-merge)")
        floors = {lang: Floor(float(f["first"]), float(f["more"]))
                  for lang, f in data["floors"].items()}
        trees = {lang: Trees.from_json(t) for lang, t in data["trees"].items()}
        min_posts = {lang: int(n) for lang, n in data.get("min_posts", {}).items()}
        return cls(trees, floors, int(data.get("top", 5)), min_posts)

    def to_json(self, about: dict[str, object]) -> str:
        """The model as shipped data; ``about`` says how it was fitted."""
        floors = {lang: {"first": f.first, "more": f.more} for lang, f in self.floors.items()}
        trees = {lang: t.to_json() for lang, t in self.trees.items()}
        return json.dumps({"about": about, "features": list(FEATURES), "top": self.top,
                           "min_posts": self.min_posts, "floors": floors, "trees": trees},
                          ensure_ascii=False) + "\n"

    def judges(self, recall: Recall | None, lang: str) -> bool:
        """Whether the memory answered and holds enough for the trees to judge by."""
        return recall is not None and recall.window_posts >= self.min_posts.get(lang, 0)

    def floor(self, lang: str) -> Floor:
        return self.floors.get(lang) or self.floors["en"]

    def probabilities(self, cands: Sequence[Candidate], lang: str) -> np.ndarray:
        return _sigmoid(self._logit([c.features for c in cands], lang))

    def source(self, candidate: Candidate, lang: str) -> str:
        """The source whose evidence the probability loses most without."""
        groups = sorted({FEATURES[f] for f in candidate.features} - {None})
        if len(groups) < 2:
            return groups[0] if groups else GENERATED
        without = [{f: v for f, v in candidate.features.items() if FEATURES[f] != g}
                   for g in groups]
        return groups[int(np.argmin(self._logit(without, lang)))]

    def _logit(self, features: Sequence[dict[str, float]], lang: str) -> np.ndarray:
        x = np.array([[f.get(name, 0.0) for name in FEATURES] for f in features],
                     dtype=np.float64).reshape(len(features), len(FEATURES))
        return (self.trees.get(lang) or self.trees["en"]).logit(x)


class GeneratorTally:
    """How often the generator proposed each hashtag over a worker's last ``size`` posts
    per language: its favourites, which the stream may not confirm."""

    def __init__(self, size: int = 1000) -> None:
        self.size = size
        self._recent: dict[str, deque[tuple[str, ...]]] = {}
        self.counts: dict[str, Counter[str]] = {}

    def add(self, lang: str, tags: Iterable[str]) -> None:
        recent = self._recent.setdefault(lang, deque())
        counts = self.counts.setdefault(lang, Counter())
        keys = tuple({t.lstrip("#").lower() for t in tags})
        recent.append(keys)
        counts.update(keys)
        if len(recent) > self.size:
            counts.subtract(recent.popleft())

    def proposed(self, lang: str, key: str) -> int:
        return self.counts.get(lang, Counter())[key]


def candidates(generated: Sequence[tuple[str, float]], recall: Recall, text: str,
               lang: str, tally: GeneratorTally | None = None) -> list[Candidate]:
    """Every hashtag the generator, the similar posts or the trending list offer, with
    its features (``FEATURES``), in the order first met."""
    spelling: dict[str, str] = {}
    feats: dict[str, dict[str, float]] = {}

    def at(tag: str) -> dict[str, float] | None:
        key = tag.lstrip("#").lower()
        if not key:
            return None
        spelling.setdefault(key, tag.lstrip("#"))
        return feats.setdefault(key, {})

    for rank, (tag, logprob) in enumerate(generated):
        f = at(tag)
        if f is not None and "generated" not in f:
            f.update(generated=1.0, generated_rank=1 / (1 + rank),
                     generated_prob=math.exp(min(0.0, logprob)))
    neighbours = recall.neighbours
    best = max((n.score for n in neighbours), default=0.0)
    if best > 0:
        total = sum(n.score / best for n in neighbours)
        for rank, n in enumerate(neighbours):
            for tag in {t.lower(): t for t in n.tags}.values():
                f = at(tag)
                if f is None:
                    continue
                if "neighbours" not in f:
                    f.update(neighbours=0.0, neighbour_vote=0.0, neighbour_bm25=n.score / best,
                             neighbour_rank=1 / (1 + rank), neighbour_overlap=0.0,
                             neighbour_recency=max(0.0, 1 - n.age_hours / 24))
                f["neighbours"] += 1 / len(neighbours)
                f["neighbour_overlap"] = max(f["neighbour_overlap"], n.overlap)
                f["neighbour_vote"] += n.score / best / total
    top = max((t.posts for t in recall.trending), default=0)
    used = {t.tag: t for t in recall.trending}
    for t in recall.trending:
        f = at(t.tag)
        if f is not None:
            f.update(trending=t.posts / top, trending_posts=math.log1p(t.posts),
                     trending_rising=t.recent / t.posts if t.posts else 0.0)
    squashed = "".join(text.lower().split())
    post = {"best_overlap": max((n.overlap for n in neighbours), default=0.0)}
    out = []
    for key, f in feats.items():
        f.update(post, in_post=float("".join(key.split()) in squashed))
        if "generated" in f and tally is not None:
            authors = used[key].posts if key in used else 0
            f["favourite"] = math.log1p(tally.proposed(lang, key)) - math.log1p(authors)
        out.append(Candidate(key, spelling[key], f))
    return out


def merge(model: MergeModel, generated: Sequence[tuple[str, float]], recall: Recall | None,
          text: str, lang: str, tally: GeneratorTally | None = None) -> list[Suggestion]:
    """The hashtags to show for one post, best first, each with its probability as score.

    ``recall`` None (no memory, or it did not answer in time) or from a window of fewer
    than the language's ``min_posts`` posts with author hashtags: the generator alone, its
    list as shown with the memory off, each scored with the generator's own probability
    (its served score is a log-odds calibrated on held-out sources,
    nlp_models/hashtag/predictor.py); the merge's probabilities assume the memory's
    evidence and are not computed without it."""
    if not model.judges(recall, lang):
        return [Suggestion(tag.lstrip("#"), round(1 / (1 + math.exp(-score)), 4), GENERATED)
                for tag, score in generated][:model.top]
    return shown(model, candidates(generated, recall, text, lang, tally), lang)


def shown(model: MergeModel, cands: Sequence[Candidate], lang: str) -> list[Suggestion]:
    """Best first, at most ``top``: the most probable candidate if it reaches the first
    floor, then those reaching the (higher) floor for more."""
    return show(model, ranked(model, cands, lang), lang)


def show(model: MergeModel, scored: Sequence[tuple[float, Candidate]], lang: str
         ) -> list[Suggestion]:
    """``shown`` of candidates already ``ranked``."""
    n = kept([p for p, _ in scored], model.floor(lang), model.top)
    return [Suggestion(c.tag, round(p, 4), model.source(c, lang)) for p, c in scored[:n]]


def ranked(model: MergeModel, cands: Sequence[Candidate], lang: str
           ) -> list[tuple[float, Candidate]]:
    """(probability, candidate), most probable first."""
    if not cands:
        return []
    return sorted(zip(model.probabilities(cands, lang).tolist(), cands, strict=True),
                  key=lambda pair: (-pair[0], pair[1].key))


def kept(probabilities: Sequence[float], floor: Floor, top: int) -> int:
    """How many of a post's candidates (probabilities, descending) are shown."""
    n = 0
    for p in probabilities[:top]:
        if p < (floor.first if n == 0 else floor.more):
            break
        n += 1
    return n


def _sigmoid(x: np.ndarray) -> np.ndarray:
    return 1 / (1 + np.exp(-np.clip(x, -50, 50)))
