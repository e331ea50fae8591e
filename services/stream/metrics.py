"""The worker's Prometheus metrics, served on its web port at ``/metrics``.

What the alert rules (``deploy/monitoring/alerts.yml``) read: records handled per agent
and outcome, dead letters by error code (every code starts at 0, so the first one is an
increase Prometheus sees), how long after its input arrived a document was indexed, when
the last one was, and how many operations are waiting out an outage right now.

Hashtag agreement is the live measurement of issue 46: suggestions are made as if the
author had written no hashtag, so every post that carries some tells whether they were
found (``hit1``: the first suggestion; ``hit5``: one of the first five). A rate is
``hits / posts`` per language, e.g.
``rate(nlp_hashtag_agreement_total{measure="hit5"}[5m]) /
rate(nlp_hashtag_agreement_total{measure="posts"}[5m])``. A batch processed again after a
restart counts again (at-least-once).
"""

from __future__ import annotations

from prometheus_client import Counter, Gauge, Histogram, generate_latest

from services import errors
from services.retry import WAITING

RECORDS = Counter("nlp_stream_records", "Records an agent finished, by outcome (done: "
                  "written downstream; dead_lettered)", ["agent", "outcome"])
DEAD_LETTERS = Counter("nlp_dead_letters", "Dead letters built, by error code",
                       ["code"])
for _code in errors.CODES:
    DEAD_LETTERS.labels(_code)
END_TO_END = Histogram("nlp_end_to_end_seconds", "From the input's arrival on the raw topic "
                       "(its Kafka timestamp: the broker's append time) to its document "
                       "indexed, by kind",
                       ["kind"], buckets=(0.1, 0.25, 0.5, 1, 2.5, 5, 10, 30, 60, 120, 300,
                                          900))
LAST_INDEXED = Gauge("nlp_last_indexed_timestamp_seconds", "When the last document of the "
                     "kind was indexed (Unix time)", ["kind"])
RETRYING = Gauge("nlp_worker_retrying", "Operations waiting out an outage with backoff now "
                 "(Triton, Elasticsearch or Kafka unavailable)")
RETRYING.set_function(lambda: len(WAITING))
RETRY_WAITED = Gauge("nlp_worker_retry_waited_seconds", "How long the longest-waiting "
                     "operation has been retrying (0: none)")
RETRY_WAITED.set_function(lambda: max((w["waited_s"] for w in list(WAITING.values())),
                                      default=0.0))

AGREEMENT = Counter("nlp_hashtag_agreement", "Posts with author hashtags (measure=posts) "
                    "and how many of them the suggestions found (measure=hit1, hit5)",
                    ["lang", "measure"])
MEMORY_SECONDS = Histogram("nlp_hashtag_memory_seconds", "Hashtag-memory look-up time per "
                           "sub-batch, from the ask to its answer (or to the fallback)",
                           buckets=(0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1.0, 2.5, 5.0,
                                    10.0))
GENERATOR_SKIPPED = Counter("nlp_hashtag_generator_skipped", "Posts whose hashtags the "
                            "memory answered alone (the generator was not asked)")
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
