"""Choose the hashtag scorer's weights on a dev stream (issue 46).

    python -m training tune hashtag-memory --data data/hashtag_stream/en_airline_2015.jsonl \\
        --lang en [--limit N] [--out runs/hstream/tune_en.json]

What the pipeline would do, replayed post by post without Kafka: the stream is indexed
into a scratch index of the local Elasticsearch (what the worker indexes: text, author
hashtags, language, ``created_at``), every post's memory is asked with the worker's own
queries (``services.stream.memory``: event-time window before the post, never the post
itself), the served generator (in process, served beam and n-best) answers for the text
without its hashtags, and every weight setting of a small grid is scored with the same
scorer (``services.stream.hashtag_scorer.merge``) and the same metrics as ``bench
hashtag-stream``. Differences from the pipeline: no post is hidden from the memory by
sharing a batch with it, and the trending list is asked per post instead of cached for a
few seconds. Progress on stderr; the last stdout line is JSON: the best setting by
ROUGE-1 and the table of all settings. Never run on a test stream.
"""

from __future__ import annotations

import itertools
import json
import sys
import time
import uuid
from datetime import datetime, timedelta
from pathlib import Path

from nlp_models import registry
from services.hashtags import without_edge_hashtags

GRID = {"generated": (0.0, 0.1, 0.25, 0.5, 1.0), "similar": (0.5, 1.0, 2.0, 4.0, 8.0),
        "trending": (0.0, 0.1, 0.25, 0.5, 1.0), "threshold": (0.05, 0.1, 0.3, 0.6)}
BATCH = 64  # memory look-ups per _msearch, generator texts per call


def progress(message: str) -> None:
    print(message, file=sys.stderr, flush=True)


def recall_all(posts: list[dict], asked: list[int], lang: str, window_hours: float) -> list:
    """Index the stream into a scratch index (each post as written, hashtags re-attached,
    as the worker indexes it) and ask the memory for the posts ``asked``."""
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
        bulk(es, ({"_index": f"{prefix}-stream", "_id": p["id"],
                   "_source": {"id": p["id"], "hashtag_lang": lang,
                               "text": with_hashtags(p["text"], p["hashtags"], lang),
                               "user_hashtags": p["hashtags"],
                               "created_at": p["created_at"]}} for p in posts))
        es.indices.refresh(index=f"{prefix}-*")
        memory = HashtagMemory(es, f"{prefix}-*", window=timedelta(hours=window_hours),
                               neighbours=MemoryConfig().neighbours, timeout=120.0,
                               trending_ttl=0.0)
        recalls = []
        for n, i in enumerate(asked, 1):  # one post at a time: its own trending window
            p = posts[i]
            recalls += memory.lookup([Probe(p["id"], p["text"], lang, _time(p["created_at"]))])
            if n % 500 == 0:
                progress(f"memory: {n}/{len(asked)} posts")
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


def tune(data: str, lang: str, limit: int | None, window_hours: float = 24.0) -> dict:
    from services.stream.hashtag_scorer import Weights, merge
    from training.hashtag.streams import read_stream, score

    began = time.time()
    posts = read_stream(data, limit)
    tagged = [i for i, p in enumerate(posts) if p["hashtags"]]
    recalls = recall_all(posts, tagged, lang, window_hours)
    generated = generate_all([posts[i] for i in tagged], lang)
    gold = [posts[i] for i in tagged]
    rows = []
    for values in itertools.product(*GRID.values()):
        weights = Weights(**dict(zip(GRID, values, strict=True)))
        shown = [[s.tag for s in merge(g.hashtags if g.status == "ok" else (), r, weights)]
                 for g, r in zip(generated, recalls, strict=True)]
        rows.append({**dict(zip(GRID, values, strict=True)), **score(shown, gold, lang)})
    alone = [[t for t, _ in g.hashtags] for g in generated]
    best = max(rows, key=lambda r: (r["rouge1"], r["f1@5"]))
    return {"data": data, "lang": lang, "posts": len(posts), "scored": len(gold),
            "window_hours": window_hours, "best": best,
            "generator_only": score(alone, gold, lang),
            "seconds": round(time.time() - began), "grid": rows}


def _time(iso: str) -> datetime:
    return datetime.fromisoformat(iso.replace("Z", "+00:00"))


def main(data: str, lang: str, limit: int | None, out: str | None) -> dict:
    result = tune(data, lang, limit)
    if out:
        Path(out).parent.mkdir(parents=True, exist_ok=True)
        Path(out).write_text(json.dumps(result, indent=1, ensure_ascii=False) + "\n")
    return {k: v for k, v in result.items() if k != "grid"}
