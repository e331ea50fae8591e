"""The author's hashtags and the text as if they had not been written (issue 46)."""

from __future__ import annotations

import pytest

from services.hashtags import author_hashtags, edge_hashtags, without_edge_hashtags
from services.pb import messages_pb2 as pb


@pytest.mark.parametrize(("text", "stripped", "tags"), [
    ("#iranelection Protests in #Tehran tonight #gr88 #IranElection",
     "Protests in Tehran tonight", ["iranelection", "gr88"]),
    ("Watching the game #nba http://t.co/x", "Watching the game http://t.co/x", ["nba"]),
    ("No hashtags here", "No hashtags here", []),
    ("#1 fan of the week #2009", "#1 fan of the week #2009", []),  # no letter: not a hashtag
    ("Great day! #sunny.", "Great day!", ["sunny"]),
])
def test_english_edge_hashtags_leave_the_text_and_inner_ones_lose_their_mark(
    text: str, stripped: str, tags: list[str],
) -> None:
    assert without_edge_hashtags(text, chinese=False) == stripped
    assert edge_hashtags(text, chinese=False) == tags


@pytest.mark.parametrize(("text", "stripped", "tags"), [
    ("#北京暴雨# 今天下大雨，#交通#严重拥堵 #出行提示#", "今天下大雨，交通严重拥堵",
     ["北京暴雨", "出行提示"]),
    ("没有话题的微博", "没有话题的微博", []),
])
def test_chinese_topics_are_written_between_two_marks(
    text: str, stripped: str, tags: list[str],
) -> None:
    assert without_edge_hashtags(text, chinese=True) == stripped
    assert edge_hashtags(text, chinese=True) == tags


def test_the_producers_user_hashtags_win_over_the_text() -> None:
    post = pb.Post(text="Go team #lakers", lang="en", user_hashtags=["#NBA"])
    assert author_hashtags(post) == ["NBA"]
    assert author_hashtags(pb.Post(text="Go team #lakers", lang="en")) == ["lakers"]
    weibo = pb.Post(text="大雨 #北京暴雨#", platform=pb.WEIBO)
    assert author_hashtags(weibo) == ["北京暴雨"]
