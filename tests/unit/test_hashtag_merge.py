"""The hashtag scorer: generator, similar posts and trending on one scale (issue 46)."""

from __future__ import annotations

import pytest

from services.hashtags import GENERATED, SIMILAR, TRENDING, Suggestion
from services.stream.hashtag_scorer import Weights, merge
from services.stream.memory import Recall

GENERATED_TAGS = [("nba", -0.5), ("lakers", -0.9), ("sports", -1.4)]


def test_without_a_memory_the_generators_hashtags_are_shown_in_its_order() -> None:
    shown = merge(GENERATED_TAGS, None)
    assert [s.tag for s in shown] == ["nba", "lakers", "sports"]
    assert {s.source for s in shown} == {GENERATED}


def test_a_memory_that_did_not_answer_leaves_the_generators_whole_list() -> None:
    """The served weights put the generator at 0.25 per first rank: merged with nothing
    they would cut its third hashtag; without an answer the generator speaks alone."""
    served = Weights(generated=0.25, similar=4, trending=0.5, threshold=0.1)
    assert [s.tag for s in merge(GENERATED_TAGS, None, served)] == ["nba", "lakers", "sports"]
    assert [s.tag for s in merge(GENERATED_TAGS, Recall(), served)] == ["nba", "lakers"]


def test_a_hashtag_every_similar_post_carries_outranks_the_generators_second_choice() -> None:
    recall = Recall(neighbours=[(9.0, ["LakersWin"]), (4.5, ["lakerswin", "nba"])])
    shown = merge(GENERATED_TAGS, recall)
    assert shown[0] == Suggestion("nba", 1.3333, GENERATED)  # 1.0 generated + 1/3 similar
    assert shown[1] == Suggestion("LakersWin", 1.0, SIMILAR)  # both neighbours, first spelling


def test_trending_counts_relative_to_the_most_used_hashtag_and_says_so() -> None:
    recall = Recall(trending=[("worldcup", 40), ("iranelection", 10)])
    shown = merge([], recall, Weights(trending=0.5, threshold=0.1))
    assert shown == [Suggestion("worldcup", 0.5, TRENDING),
                     Suggestion("iranelection", 0.125, TRENDING)]


def test_nothing_under_the_threshold_is_shown_and_at_most_top_are() -> None:
    assert merge(GENERATED_TAGS, None, Weights(threshold=0.4)) == [
        Suggestion("nba", 1.0, GENERATED), Suggestion("lakers", 0.5, GENERATED)]
    assert len(merge(GENERATED_TAGS, None, Weights(top=1))) == 1


@pytest.mark.parametrize("neighbours", [[], [(0.0, ["x"])]])
def test_no_neighbours_or_zero_scores_vote_for_nothing(neighbours: list) -> None:
    assert merge([], Recall(neighbours=neighbours)) == []


def test_the_memory_and_the_weights_are_configured_from_the_environment() -> None:
    from services.config import MemoryConfig, PipelineConfig

    default = PipelineConfig.from_env({}).hashtag_memory
    assert default.blocklist is not None and default.blocklist.name == "blocklist.txt"
    assert default.blocklist.parent.parent.name == "hashtag_generator"  # the served list
    assert default == MemoryConfig(blocklist=default.blocklist)
    cfg = MemoryConfig.from_env({"NLP_HASHTAG_MEMORY": "off",
                                 "NLP_HASHTAG_WEIGHTS": "similar=2, threshold=0.3",
                                 "NLP_HASHTAG_MEMORY_TIMEOUT": "0.2"})
    assert not cfg.enabled and cfg.similar == 2.0 and cfg.threshold == 0.3
    assert cfg.timeout == 0.2 and cfg.generated == MemoryConfig().generated
    with pytest.raises(ValueError, match="unknown weight"):
        MemoryConfig.from_env({"NLP_HASHTAG_WEIGHTS": "popular=1"})


def test_the_memory_never_passes_on_a_blocklisted_hashtag() -> None:
    """Authors write slurs too: the generator's blocklist also filters the memory."""
    from nlp_models.contract import HashtagResult
    from nlp_models.hashtag.blocklist import Blocklist
    from services.stream.tag_posts import Models

    models = Models(None, None, blocklist=Blocklist(["women suck"]))  # type: ignore[arg-type]
    generated = HashtagResult((("nba", -1.0),), "en", "ok", False)
    recall = Recall(neighbours=[(3.0, ["WomenSuck", "lakers"])],
                    trending=[("womensuck", 9), ("lakers", 3)])
    shown = {s.tag.lower() for s in models._suggest(generated, recall)}
    assert shown == {"nba", "lakers"}
