"""The worker's Prometheus metrics, served on its web port at ``/metrics``.

Hashtag agreement is the live measurement of issue 46: suggestions are made as if the
author had written no hashtag, so every post that carries some tells whether they were
found (``hit1``: the first suggestion; ``hit5``: one of the first five). A rate is
``hits / posts`` per language, e.g.
``rate(nlp_hashtag_agreement_total{measure="hit5"}[5m]) /
rate(nlp_hashtag_agreement_total{measure="posts"}[5m])``. A batch processed again after a
restart counts again (at-least-once).
"""

from __future__ import annotations

from prometheus_client import Counter, Histogram, generate_latest

AGREEMENT = Counter("nlp_hashtag_agreement", "Posts with author hashtags (measure=posts) "
                    "and how many of them the suggestions found (measure=hit1, hit5)",
                    ["lang", "measure"])
MEMORY_SECONDS = Histogram("nlp_hashtag_memory_seconds", "Hashtag-memory look-up time per "
                           "batch, fallbacks included",
                           buckets=(0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1.0, 2.5))
MEMORY_FALLBACKS = Counter("nlp_hashtag_memory_fallbacks", "Batches whose suggestions came "
                           "from the generator alone because the memory did not answer",
                           ["reason"])


def record_agreement(lang: str, agreement: dict[str, int] | None) -> None:
    if agreement is None:
        return
    AGREEMENT.labels(lang, "posts").inc()
    for measure, hit in agreement.items():
        AGREEMENT.labels(lang, measure).inc(hit)


def exposition() -> bytes:
    """The metrics page's body (Prometheus text format, served as text/plain)."""
    return generate_latest()
