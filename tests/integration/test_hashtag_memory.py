"""The hashtag memory on real Elasticsearch (issue 46): what a post may recall.

Specification: a post recalls the author hashtags of similar posts from the event-time
window before it, in its own language; never itself (a redelivered post is already
indexed), never a later post, never one older than the window; the trending list counts
the window before the batch; a memory that does not answer in time gives None and is
counted, so the caller falls back to the generator alone.
"""

from __future__ import annotations

import asyncio
import uuid
from collections import Counter
from collections.abc import Iterator
from datetime import UTC, datetime, timedelta

import pytest

from deploy.testing import ElasticsearchInfo
from services.es.bulk import make_client
from services.es.template import install_template
from services.stream.memory import HashtagMemory, Probe

pytestmark = pytest.mark.integration

T0 = datetime(2009, 6, 14, 12, 0, tzinfo=UTC)
WINDOW = timedelta(hours=24)
# (id, lang, text, author hashtags, created_at)
POSTS = [
    ("a", "en", "Iran election protests in Tehran tonight", ["iranelection"],
     T0 - timedelta(hours=2)),
    ("b", "en", "Protesters fill Tehran streets after the election", ["iranelection", "tehran"],
     T0 - timedelta(minutes=30)),
    ("edge", "en", "Tehran election protests at the window's start", ["windowstart"],
     T0 - WINDOW),
    ("old", "en", "Tehran election protests long ago", ["tooold"],
     T0 - WINDOW - timedelta(seconds=1)),
    ("later", "en", "Tehran election protests an hour later", ["fromthefuture"],
     T0 + timedelta(hours=1)),
    ("same-second", "en", "Tehran election protests at the same second", ["sametime"], T0),
    ("p", "en", "Tehran election protests", ["itself"], T0),  # indexed before: redelivery
    ("untagged", "en", "Tehran election protests without hashtags", [], T0 - timedelta(hours=1)),
    ("z", "zh", "北京今天下大雨，交通严重拥堵", ["北京暴雨"], T0 - timedelta(hours=1)),
]


@pytest.fixture(scope="module")
def memory_index(elasticsearch: ElasticsearchInfo) -> Iterator[str]:
    es = make_client(elasticsearch.url)
    prefix = f"it-mem-{uuid.uuid4().hex[:8]}"
    install_template(es, prefix)
    for post_id, lang, text, tags, created in POSTS:
        es.index(index=f"{prefix}-2009.06", id=post_id,
                 document={"id": post_id, "hashtag_lang": lang, "text": text, "user_hashtags": tags,
                       "created_at": created.isoformat()})
    es.indices.refresh(index=f"{prefix}-*")
    try:
        yield prefix
    finally:
        es.indices.delete(index=f"{prefix}-*", ignore=[404])
        es.indices.delete_index_template(name=prefix, ignore=[404])
        es.close()


def memory(elasticsearch: ElasticsearchInfo, prefix: str, **options: object) -> HashtagMemory:
    return HashtagMemory(make_client(elasticsearch.url), f"{prefix}-*", window=WINDOW,
                         **options)  # type: ignore[arg-type]


def test_a_post_recalls_similar_earlier_posts_of_the_window_never_itself_or_later_ones(
    elasticsearch: ElasticsearchInfo, memory_index: str,
) -> None:
    mem = memory(elasticsearch, memory_index)
    [recall] = asyncio.run(mem.recall([Probe("p", "Tehran election protests", "en", T0)]))
    recalled = {tag for n in recall.neighbours for tag in n.tags}
    assert recalled == {"iranelection", "tehran", "windowstart"}
    scores = [n.score for n in recall.neighbours]
    assert scores == sorted(scores, reverse=True) and scores[0] > 0
    assert {t.tag: t.posts for t in recall.trending} == {"iranelection": 2, "tehran": 1,
                                                          "windowstart": 1}
    assert recall.window_posts == 3  # posts with author hashtags in the window (their size)
    assert all(0 <= n.age_hours <= WINDOW.total_seconds() / 3600 for n in recall.neighbours)


def test_chinese_posts_recall_through_the_cjk_field_and_only_chinese_posts(
    elasticsearch: ElasticsearchInfo, memory_index: str,
) -> None:
    mem = memory(elasticsearch, memory_index)
    [zh, other] = asyncio.run(mem.recall([Probe("q", "北京下大雨", "zh", T0),
                                          Probe("r", "Tehran", "ja", T0)]))
    assert [n.tags for n in zh.neighbours] == [["北京暴雨"]]
    assert [(t.tag, t.posts) for t in zh.trending] == [("北京暴雨", 1)]
    assert other.neighbours == [] and other.trending == []


def test_the_trending_window_ends_before_the_batchs_earliest_post_and_is_cached(
    elasticsearch: ElasticsearchInfo, memory_index: str,
) -> None:
    mem = memory(elasticsearch, memory_index, trending_ttl=60.0)
    early = T0 - timedelta(minutes=45)  # before b; the window moves back with it
    [first, second] = asyncio.run(mem.recall([Probe("x", "election", "en", T0),
                                              Probe("y", "election", "en", early)]))
    assert {t.tag: t.posts for t in first.trending} == {"iranelection": 1, "windowstart": 1,
                                                         "tooold": 1}
    assert first.trending == second.trending
    # within the TTL and a twentieth of the window, the next batch reuses the list
    [again] = asyncio.run(mem.recall([Probe("z2", "election", "en",
                                            early + timedelta(minutes=10))]))
    assert again.trending == first.trending


def test_a_memory_that_does_not_answer_in_time_gives_none_and_counts_it(
    elasticsearch: ElasticsearchInfo, memory_index: str,
) -> None:
    mem = memory(elasticsearch, memory_index, timeout=0.000_001, counters=Counter())
    assert asyncio.run(mem.recall([Probe("p", "Tehran election", "en", T0)])) is None
    assert mem.counters["hashtag_memory.lookups"] == 1
    assert mem.counters["hashtag_memory.timeouts"] == 1


def test_an_unreachable_memory_gives_none_and_counts_a_failure() -> None:
    mem = HashtagMemory(make_client("http://127.0.0.1:9"), "posts-*", timeout=5.0,
                        counters=Counter())
    assert asyncio.run(mem.recall([Probe("p", "Tehran election", "en", T0)])) is None
    assert mem.counters["hashtag_memory.failures"] == 1
