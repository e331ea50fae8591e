"""Producer feed parsing and the token bucket (no servers)."""

from __future__ import annotations

import io
import json
from datetime import UTC, datetime

import pytest

from services.pb import messages_pb2 as pb
from services.producer.feed import FeedError, Record, parse_line, read_feed
from services.producer.ratelimit import TokenBucket

POST = {"id": "t1", "platform": "twitter", "lang": "en", "text": "hi #there",
        "author": "@bob", "created_at": "2010-10-27T12:00:00Z",
        "attributes": {"retweets": 3, "src": "x"}, "user_hashtags": ["#there"]}


def test_post_line_becomes_keyed_protobuf() -> None:
    rec = parse_line(json.dumps(POST), 1)
    assert rec is not None and rec.key == b"t1"
    post = pb.Post.FromString(rec.value)
    assert post.platform == pb.TWITTER and post.author == "bob"
    assert post.created_at.ToDatetime(tzinfo=UTC) == datetime(2010, 10, 27, 12, tzinfo=UTC)
    assert dict(post.attributes) == {"retweets": "3", "src": "x"}
    assert list(post.user_hashtags) == ["there"]


def test_article_line() -> None:
    line = json.dumps({"id": "a1", "source": "wire", "lang": "en", "body": "Text.",
                       "title": "T", "published_at": "2020-01-01T00:00:00+02:00",
                       "required_phrases": ["Acme"]})
    rec = parse_line(line, 1, kind="articles")
    assert rec is not None
    art = pb.Article.FromString(rec.value)
    assert art.title == "T" and list(art.required_phrases) == ["Acme"]
    assert art.published_at.ToDatetime(tzinfo=UTC) == datetime(2019, 12, 31, 22, tzinfo=UTC)


@pytest.mark.parametrize(
    ("line", "fragment"),
    [
        ("{not json", "invalid JSON"),
        ("[1, 2]", "expected a JSON object"),
        (json.dumps({"text": "no id"}), "missing 'id'"),
        (json.dumps({**POST, "platform": "myspace"}), "unknown platform"),
        (json.dumps({**POST, "created_at": "yesterday"}), "Invalid isoformat"),
        (json.dumps({**POST, "user_hashtags": "x"}), "list of strings"),
        (json.dumps({**POST, "text": 5}), "'text' must be a string"),
    ],
)
def test_bad_lines_name_their_line_number(line: str, fragment: str) -> None:
    with pytest.raises(FeedError) as info:
        parse_line(line, 7)
    assert info.value.lineno == 7 and "line 7" in str(info.value) and fragment in str(info.value)


def test_empty_text_is_left_for_the_pipeline_to_judge() -> None:
    assert parse_line(json.dumps({**POST, "text": ""}), 1) is not None


def test_read_feed_skips_blank_lines_and_yields_errors_in_order() -> None:
    feed = io.StringIO(json.dumps(POST) + "\n\n{bad\n" + json.dumps({**POST, "id": "t2"}) + "\n")
    items = list(read_feed(feed))
    assert [type(i) for i in items] == [Record, FeedError, Record]
    assert isinstance(items[1], FeedError) and items[1].lineno == 3


class FakeClock:
    def __init__(self) -> None:
        self.now = 0.0
        self.sleeps: list[float] = []

    def clock(self) -> float:
        return self.now

    def sleep(self, seconds: float) -> None:
        self.sleeps.append(seconds)
        self.now += seconds


def test_token_bucket_allows_burst_then_paces() -> None:
    fake = FakeClock()
    bucket = TokenBucket(rate=10, burst=2, clock=fake.clock, sleep=fake.sleep)
    for _ in range(12):
        bucket.acquire()
    # 2 free (burst), then 10 more at 10/s -> 1 s of sleeping
    assert sum(fake.sleeps) == pytest.approx(1.0)
    assert fake.now == pytest.approx(1.0)


def test_token_bucket_refills_while_idle() -> None:
    fake = FakeClock()
    bucket = TokenBucket(rate=5, burst=5, clock=fake.clock, sleep=fake.sleep)
    for _ in range(5):
        bucket.acquire()
    fake.now += 10
    for _ in range(5):
        assert bucket.acquire() == 0.0


def test_token_bucket_rejects_bad_rate() -> None:
    with pytest.raises(ValueError):
        TokenBucket(rate=0)


def test_an_article_over_the_broker_limit_is_a_bad_line_with_its_size() -> None:
    line = json.dumps({"id": "big", "body": "x" * 5_000_000, "lang": "en"})
    with pytest.raises(FeedError) as info:
        parse_line(line, 3, "articles")
    assert "line 3" in str(info.value) and "5.0 MB" in str(info.value)


def test_an_unreachable_or_refusing_broker_is_a_clear_error_not_a_traceback(
    capsys: pytest.CaptureFixture[str],
) -> None:
    from services.producer.__main__ import main
    from services.settings import REPO_ROOT

    feed = REPO_ROOT / "deploy" / "sample_data" / "tweets.jsonl"
    code = main(["--file", str(feed), "--topic", "posts.raw",
                 "--bootstrap", "127.0.0.9:9", "--quiet"])  # nothing listens there
    assert code == 2
    assert "cannot connect to Kafka at 127.0.0.9:9" in capsys.readouterr().err
