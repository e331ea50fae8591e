"""Fit the learned hashtag merge on a dev stream (issue 74).

    python -m training tune hashtag-merge --data data/hashtag_stream/en_airline_2015.jsonl \\
        --lang en [--limit N] [--out services/stream/hashtag_merge.json] [--report R.json]

What the pipeline would do under ``bench hashtag-stream --step 10 --tagged-only``,
replayed without Kafka: the stream's tagged posts go into a scratch index of the local
Elasticsearch ten at a time (what the worker indexes: text, author hashtags, language,
``created_at``), each ten asking the memory with the worker's own queries
(``services.stream.memory``: event-time window before the post) before they are indexed,
so a post misses the others of its step as the posts of one batch miss each other; the
served generator (in process, served beam and n-best) answers for the text without its
hashtags, and the worker's own code (``services.stream.hashtag_merge.candidates``) lists
each post's candidates with their features; a candidate is positive when the author
wrote it. (Trees fitted on a replay that sees every earlier post learn to trust
near-duplicates that the pipeline has not indexed yet.)

In time order, the first ``FIT_SHARE`` of the posts fit gradient-boosted trees
(scikit-learn's ``HistGradientBoostingClassifier``, monotonic in each source's evidence,
``MONOTONE``; exported as node arrays); the rest, later in time, choose the
two floors (``choose_floors``) and are scored (``served``: as the worker shows them,
the generator asked only where the memory is unsure; ``merge``: the generator asked
for every post), beside the scorer served before (the weighted sum of issue 46, kept
here as the baseline) and the generator alone, with ``bench hashtag-stream``'s
metrics. The later posts are also replayed alone into an empty index, as a new stream:
``min_posts`` is the smallest window size from which the trees' first hashtag is at least
as good as the generator's (``choose_min_posts``); below it the worker shows the
generator alone (``served_new_stream``). The language's trees, floors and ``min_posts``
are written into ``--out`` (other languages kept). Difference from the pipeline: the
trending list is asked per step instead of cached for a few seconds. Progress on stderr;
the last stdout line is JSON. Never run on a test stream.
"""

from __future__ import annotations

import json
import sys
import time
import uuid
from datetime import datetime, timedelta
from pathlib import Path
from typing import NamedTuple

from nlp_models import registry
from services.hashtags import without_edge_hashtags

FIT_SHARE = 0.7  # of the stream's tagged posts, in time order, that fit the trees
FIRST_FLOORS = (0.0, 0.01, 0.02, 0.03, 0.05, 0.075, 0.1, 0.15, 0.2, 0.3)  # tried
MORE_FLOORS = (0.0, 0.005, 0.01, 0.0125, 0.015, 0.0175, 0.02, 0.025, 0.03, 0.04, 0.05, 0.075,
               0.1, 0.15, 0.2, 0.3, 0.4, 0.5)
TREES, LEARNING_RATE, LEAVES = 200, 0.05, 7  # at most; early stopping on 10 % of the fit
PRECISION_GAIN = 2.0  # the floors must show hashtags this many times as precise as today's
#: the scorer served before the learned merge (issue 46): a weighted sum
TODAY = {"generated": 0.25, "similar": 4.0, "trending": 0.5, "threshold": 0.1}
#: features whose growth may only raise (1) or only lower (-1) the probability: more
#: evidence from a source never counts against a hashtag (the trees then carry over from a
#: dev stream to streams unlike it), and an unconfirmed favourite never counts for it
MONOTONE = {**dict.fromkeys(("generated", "generated_rank", "generated_prob", "neighbours",
                             "neighbour_vote", "neighbour_bm25", "neighbour_overlap",
                             "neighbour_rank", "neighbour_recency", "trending",
                             "trending_posts"), 1), "favourite": -1}
BATCH = 64  # generator texts per call
STEP = 10  # posts asked together, blind to each other: bench hashtag-stream's --step


def progress(message: str) -> None:
    print(message, file=sys.stderr, flush=True)


def recall_all(posts: list[dict], lang: str, window_hours: float) -> list:
    """The memory's recall of each post (all carry hashtags), asked as the pipeline asks
    it under ``bench hashtag-stream``: ``STEP`` posts at a time, each step asked before it
    is indexed (each post as written, hashtags re-attached, as the worker indexes it), so
    a post misses the others of its step as posts of one batch miss each other."""
    from elasticsearch.helpers import bulk

    from services.config import MemoryConfig
    from services.es.bulk import make_client
    from services.es.template import install_template
    from services.settings import Settings
    from services.stream.memory import HashtagMemory, Probe
    from training.hashtag.streams import with_hashtags

    es = make_client(Settings.from_env().es_url, timeout=120)
    prefix = f"tune-{uuid.uuid4().hex[:8]}"
    install_template(es, prefix)
    try:
        memory = HashtagMemory(es, f"{prefix}-*", window=timedelta(hours=window_hours),
                               neighbours=MemoryConfig().neighbours, timeout=120.0,
                               trending_ttl=0.0)
        recalls: list = []
        for start in range(0, len(posts), STEP):
            step = posts[start:start + STEP]
            recalls += memory.lookup([Probe(p["id"], p["text"], lang, _time(p["created_at"]))
                                      for p in step])
            bulk(es, ({"_index": f"{prefix}-stream", "_id": p["id"],
                       "_source": {"id": p["id"], "hashtag_lang": lang,
                                   "text": with_hashtags(p["text"], p["hashtags"], lang),
                                   "user_hashtags": p["hashtags"],
                                   "created_at": p["created_at"]}} for p in step),
                 refresh=True)
            if (start // STEP + 1) % 50 == 0:
                progress(f"memory: {start + len(step)}/{len(posts)} posts")
        return recalls
    finally:
        es.indices.delete(index=f"{prefix}-*", ignore=[404])
        es.indices.delete_index_template(name=prefix, ignore=[404])
        es.close()


def generate_all(posts: list[dict], lang: str) -> list:
    import torch

    from nlp_models.hashtag.serving import HashtagService
    from training.repository import serving_dir

    torch.set_num_threads(2)
    service = HashtagService(serving_dir(registry.HASHTAG.name), beam=4, n_best=3)
    out = []
    for start in range(0, len(posts), BATCH):
        chunk = posts[start:start + BATCH]
        texts = [without_edge_hashtags(p["text"], lang == "zh") or p["text"] for p in chunk]
        out += service.generate(texts, [lang] * len(chunk))
        if start % (BATCH * 20) == 0:
            progress(f"generator: {start + len(chunk)}/{len(posts)} posts")
    return out


def replay(data: str, lang: str, limit: int | None, window_hours: float,
           cache: str | None) -> tuple[list[dict], list, list, list]:
    """The stream's tagged posts, the generator's hashtags, the memory's recall of each,
    and the recall of the later part's posts replayed alone into an empty index (what a
    new stream's memory holds); kept in ``cache`` (a pickle) when named, and read from it
    when it exists."""
    import pickle

    from training.hashtag.streams import read_stream

    key = (data, lang, limit, window_hours, STEP, FIT_SHARE)
    if cache and Path(cache).exists():
        with open(cache, "rb") as f:
            saved = pickle.load(f)
        if saved["key"] == key:
            progress(f"replay read from {cache}")
            return saved["gold"], saved["generated"], saved["recalls"], saved["cold"]
    gold = [p for p in read_stream(data, limit) if p["hashtags"]]
    recalls = recall_all(gold, lang, window_hours)
    progress("memory again, the later part alone from an empty index (a new stream)")
    cold = recall_all(gold[int(len(gold) * FIT_SHARE):], lang, window_hours)
    generated = [g.hashtags if g.status == "ok" else () for g in generate_all(gold, lang)]
    if cache:
        Path(cache).parent.mkdir(parents=True, exist_ok=True)
        with open(cache, "wb") as f:
            pickle.dump({"key": key, "gold": gold, "generated": generated,
                         "recalls": recalls, "cold": cold}, f)
    return gold, generated, recalls, cold


def tune(data: str, lang: str, limit: int | None, out: str | None,
         window_hours: float = 24.0, cache: str | None = None) -> dict:
    from services.stream.hashtag_merge import (
        FEATURES,
        Floor,
        GeneratorTally,
        MergeModel,
        candidates,
        kept,
        ranked,
    )
    from training.hashtag.streams import score

    began = time.time()
    gold, generated, recalls, cold = replay(data, lang, limit, window_hours, cache)
    tally, rows = GeneratorTally(), []
    for post, gen, recall in zip(gold, generated, recalls, strict=True):
        text = without_edge_hashtags(post["text"], lang == "zh") or post["text"]
        rows.append(candidates(gen, recall, text, lang, tally))
        tally.add(lang, [t for t, _ in gen])
    cut = int(len(gold) * FIT_SHARE)
    trees = fit([c for cands in rows[:cut] for c in cands],
                  [authors(p) for p, cands in zip(gold[:cut], rows[:cut], strict=True)
                   for _ in cands], list(FEATURES))
    later = slice(cut, None)
    today = [weighted_sum(g, r) for g, r in zip(generated[later], recalls[later], strict=True)]
    today_scores = score(today, gold[later], lang)
    model = MergeModel({lang: trees}, {lang: Floor(0.0, 0.0)})
    scored = [ranked(model, cands, lang) for cands in rows[later]]
    floors = []
    for first in FIRST_FLOORS:
        for more in (m for m in MORE_FLOORS if m >= first):
            shown = [[c.tag for _, c in s[:kept([p for p, _ in s], Floor(first, more), 5)]]
                     for s in scored]
            floors.append({"first": first, "more": more, **score(shown, gold[later], lang)})
    best = choose_floors(floors, today_scores, len(gold) - cut)
    floor = Floor(best["first"], best["more"])
    unfloored = [[c.tag for _, c in s[:5]] for s in scored]
    model = MergeModel({lang: trees}, {lang: floor})
    adds, shows = generator_adds(model, gold[later], generated[later], recalls[later], lang)
    _, new_shows = generator_adds(model, gold[later], generated[later], cold, lang)
    windows = young_windows(new_shows, gold[later], lang)
    min_posts = choose_min_posts(windows)
    shown, asked = served(shows, min_posts)
    new_shown, new_asked = served(new_shows, min_posts)
    result = {"data": data, "lang": lang, "tagged": len(gold),
              "fitted_on": cut, "scored": len(gold) - cut, "window_hours": window_hours,
              "floor": {"first": floor.first, "more": floor.more}, "trees": len(trees.value),
              "min_posts": min_posts,
              "served": {**score(shown, gold[later], lang), "generator_asked": asked},
              "served_new_stream": {**score(new_shown, gold[later], lang),
                                    "generator_asked": new_asked},
              "merge": {k: v for k, v in best.items() if k not in ("first", "more")},
              "merge_without_floors": score(unfloored, gold[later], lang),
              "today": today_scores,
              "generator_only": score([[t for t, _ in g] for g in generated[later]],
                                      gold[later], lang),
              "generator_adds": adds, "new_stream_windows": windows,
              "floors": floors, "seconds": round(time.time() - began)}
    if out:
        write_model(Path(out), lang, trees, floor, min_posts,
                    {"data": Path(data).name, "posts": len(gold), "fitted_on": cut,
                     "floor_chosen_on": len(gold) - cut})
    return result


#: lower ends of the buckets of the memory's confidence
BUCKETS = (0.0, 0.01, 0.02, 0.05, 0.1, 0.2, 0.3, 0.5, 0.7)
#: the windows' sizes (posts with author hashtags) from which the trees may judge, tried
MIN_POSTS = (0, 10, 25, 50, 100, 200, 400)


def choose_floors(floors: list[dict], today: dict, posts: int) -> dict:
    """The first floor: the highest whose ROUGE-1 is within one post's hit (1 / ``posts``)
    of the best: silence where the first suggestion is almost never the author's. Then
    the highest floor for more (the most silent) whose shown hashtags are at least
    ``PRECISION_GAIN`` times as precise as ``today``'s and whose F1@5 is at least today's;
    none such: the most precise at today's F1@5, else the most precise."""
    best_rouge = max(r["rouge1"] for r in floors)
    first = max(r["first"] for r in floors if r["rouge1"] >= best_rouge - 1 / posts)
    rows = [r for r in floors if r["first"] == first]
    level = [r for r in rows if r["f1@5"] >= today["f1@5"]]
    both = [r for r in level if r["precision_shown"] >= PRECISION_GAIN * today["precision_shown"]]
    if both:
        return max(both, key=lambda r: r["more"])
    return max(level or rows, key=lambda r: r["precision_shown"])


class Shows(NamedTuple):
    """What one post would be shown."""

    judged: list[str]  # by the trees (the generator's candidates only where the memory alone
    #                    is below the first floor)
    alone: list[str]  # by the generator alone (a memory too young to judge by)
    sure: bool  # the memory alone reaches the first floor: the generator is not asked
    window: int  # posts with author hashtags in the post's window


def generator_adds(model, posts: list[dict], generated: list, recalls: list,
                   lang: str) -> tuple[list[dict], list[Shows]]:
    """Per bucket of the memory's confidence (the probability of its best candidate
    without the generator's), ROUGE-1 of the first shown hashtag with and without the
    generator's candidates: where the generator adds nothing, it need not run; and what
    each post would be shown. (The generator tally is left out: it only discounts the
    generator's candidates.)"""
    from services.stream.hashtag_merge import candidates, merge
    from training.hashtag.streams import score

    rows: dict[float, list] = {b: [] for b in BUCKETS}
    shows = []
    for post, gen, recall in zip(posts, generated, recalls, strict=True):
        text = without_edge_hashtags(post["text"], lang == "zh") or post["text"]
        alone = candidates((), recall, text, lang)
        confidence = float(model.probabilities(alone, lang).max()) if alone else 0.0
        bucket = max(b for b in BUCKETS if confidence >= b)
        both = _show(model, candidates(gen, recall, text, lang), lang)
        rows[bucket].append((post, both, _show(model, alone, lang)))
        sure = confidence >= model.floor(lang).first
        shows.append(Shows(rows[bucket][-1][2] if sure else both,
                           [s.tag for s in merge(model, gen, None, text, lang)], sure,
                           recall.window_posts))
    out = []
    for bucket, got in rows.items():
        if got:
            gold = [g for g, _, _ in got]
            out.append({"confidence_at_least": bucket, "posts": len(got),
                        "rouge1_with": score([w for _, w, _ in got], gold, lang)["rouge1"],
                        "rouge1_without": score([a for _, _, a in got], gold, lang)["rouge1"]})
    return out, shows


def served(shows: list[Shows], min_posts: int) -> tuple[list[list[str]], float]:
    """What the worker shows (the trees' choice where the window holds ``min_posts``,
    else the generator alone) and the share of posts it asks the generator for."""
    shown = [s.judged if s.window >= min_posts else s.alone for s in shows]
    asked = sum(s.window < min_posts or not s.sure for s in shows)
    return shown, round(asked / max(len(shows), 1), 4)


def young_windows(shows: list[Shows], posts: list[dict], lang: str) -> list[dict]:
    """Per bucket of the window's size, ROUGE-1 of the first hashtag the trees show and
    of the generator's alone: from how full a window the trees beat the generator."""
    from training.hashtag.streams import score

    out = []
    for low, high in zip(MIN_POSTS, [*MIN_POSTS[1:], None], strict=True):
        got = [(s, p) for s, p in zip(shows, posts, strict=True)
               if s.window >= low and (high is None or s.window < high)]
        if got:
            gold = [p for _, p in got]
            out.append({"window_posts_from": low, "posts": len(got),
                        "rouge1_trees": score([s.judged for s, _ in got], gold, lang)["rouge1"],
                        "rouge1_generator": score([s.alone for s, _ in got], gold,
                                                  lang)["rouge1"]})
    return out


def choose_min_posts(windows: list[dict]) -> int:
    """The smallest window size from which the trees' first hashtag is at least as good
    as the generator's in every bucket (a new stream's replay); none: the largest tried."""
    for i, row in enumerate(windows):
        if all(r["rouge1_trees"] >= r["rouge1_generator"] for r in windows[i:]):
            return row["window_posts_from"]
    return MIN_POSTS[-1]


def fit(cands: list, labels: list[set[str]], features: list[str]):
    """Boosted trees (``Trees``) over the candidates' features; positive: the author's."""
    import numpy as np
    from sklearn.ensemble import HistGradientBoostingClassifier

    x = np.array([[c.features.get(f, 0.0) for f in features] for c in cands])
    y = np.array([c.key in labels[i] for i, c in enumerate(cands)])
    model = HistGradientBoostingClassifier(
        max_iter=TREES, learning_rate=LEARNING_RATE, max_leaf_nodes=LEAVES, random_state=0,
        monotonic_cst=[MONOTONE.get(f, 0) for f in features]).fit(x, y)
    progress(f"fitted {model.n_iter_} trees on {len(y)} candidates, {int(y.sum())} the "
             "author's")
    return export(model)


def export(model):
    """A fitted binary HistGradientBoostingClassifier as ``Trees`` (its node arrays)."""
    import numpy as np

    from services.stream.hashtag_merge import Trees

    nodes = [tree.nodes for [tree] in model._predictors]
    width = max(len(n) for n in nodes)

    def pad(rows: list, dtype: type) -> np.ndarray:
        out = np.zeros((len(rows), width), dtype=dtype)
        for i, row in enumerate(rows):
            out[i, :len(row)] = row
        return out

    own = [np.arange(len(n)) for n in nodes]  # a leaf's children: itself
    left = [np.where(n["is_leaf"], i, n["left"]) for n, i in zip(nodes, own, strict=True)]
    right = [np.where(n["is_leaf"], i, n["right"]) for n, i in zip(nodes, own, strict=True)]
    return Trees(float(np.ravel(model._baseline_prediction)[0]),
                 pad([n["feature_idx"] for n in nodes], np.int64),
                 pad([n["num_threshold"] for n in nodes], np.float64),
                 pad(left, np.int64), pad(right, np.int64),
                 pad([np.where(n["is_leaf"], n["value"], 0.0) for n in nodes], np.float64),
                 int(max(n["depth"].max() for n in nodes)))


def _show(model, cands: list, lang: str) -> list[str]:
    from services.stream.hashtag_merge import shown

    return [s.tag for s in shown(model, cands, lang)]


def weighted_sum(generated, recall) -> list[str]:
    """The scorer served before the learned merge: 0.25 / (1 + generator rank) + 4 x the
    neighbours' BM25-weighted share + 0.5 x trending posts / the top's; at least 0.1."""
    score: dict[str, float] = {}
    spelling: dict[str, str] = {}

    def add(tag: str, value: float) -> None:
        key = tag.lstrip("#").lower()
        spelling.setdefault(key, tag.lstrip("#"))
        score[key] = score.get(key, 0.0) + value

    for rank, (tag, _) in enumerate(generated):
        add(tag, TODAY["generated"] / (1 + rank))
    best = max((n.score for n in recall.neighbours), default=0.0)
    if best > 0:
        total = sum(n.score / best for n in recall.neighbours)
        for n in recall.neighbours:
            for tag in {t.lower(): t for t in n.tags}.values():
                add(tag, TODAY["similar"] * n.score / best / total)
    top = max((t.posts for t in recall.trending), default=0)
    for t in recall.trending:
        add(t.tag, TODAY["trending"] * t.posts / top)
    ranked = sorted(score, key=lambda k: (-score[k], k))
    return [spelling[k] for k in ranked if score[k] >= TODAY["threshold"]][:5]


def authors(post: dict) -> set[str]:
    """The author's hashtags as candidates are keyed: lower case, no '#'."""
    return {t.lstrip("#").lower() for t in post["hashtags"]}


def write_model(path: Path, lang: str, trees, floor, min_posts: int, about: dict) -> None:
    """Put one language's trees, floors and window size into the shipped model file."""
    from services.stream.hashtag_merge import MergeModel

    old = MergeModel.load(path) if path.exists() else MergeModel({}, {})
    prior = json.loads(path.read_text())["about"] if path.exists() else {}
    model = MergeModel({**old.trees, lang: trees}, {**old.floors, lang: floor}, old.top,
                       {**old.min_posts, lang: min_posts})
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(model.to_json({**prior, lang: about}), encoding="utf-8")
    progress(f"wrote {lang}'s trees, floors {floor} and min_posts {min_posts} to {path}")


def _time(iso: str) -> datetime:
    return datetime.fromisoformat(iso.replace("Z", "+00:00"))


def main(data: str, lang: str, limit: int | None, out: str | None,
         report: str | None = None, cache: str | None = None) -> dict:
    result = tune(data, lang, limit, out, cache=cache)
    if report:
        Path(report).parent.mkdir(parents=True, exist_ok=True)
        Path(report).write_text(json.dumps(result, indent=1, ensure_ascii=False) + "\n")
    return {k: v for k, v in result.items() if k != "floors"}
