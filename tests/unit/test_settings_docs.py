"""Each setting is declared once (variable, default, meaning) and the docs show exactly that."""

from __future__ import annotations

import pytest

from services.config import PipelineConfig
from services.env import table
from services.headline_api.config import ApiConfig, ConfigError
from services.settings import Settings
from services.settings_docs import current, tables


@pytest.mark.parametrize("doc", sorted(tables()))
def test_the_docs_show_the_declared_settings(doc: str) -> None:
    assert current(doc) == tables()[doc], (
        f"{doc} is out of date: python -m services.settings_docs --write")


def test_an_unset_or_blank_variable_keeps_the_declared_default() -> None:
    assert Settings.from_env({}) == Settings()
    assert Settings.from_env({"NLP_ES_PORT": " "}).es_port == 9200
    assert ApiConfig.from_env({}) == ApiConfig()


def test_a_blank_model_name_turns_that_model_off() -> None:
    cfg = PipelineConfig.from_env({"NLP_HASHTAG_MODEL": "", "NLP_HEADLINE_MODEL": " "})
    assert cfg.hashtag_model == "" and cfg.headline_model == ""
    assert cfg.pos_model == PipelineConfig().pos_model


def test_values_are_parsed_by_their_declared_kind() -> None:
    cfg = PipelineConfig.from_env({"NLP_TAG_BATCH": "64", "NLP_TAG_IN_FLIGHT": "0",
                                   "NLP_STREAM_WEB_PORT": "0", "NLP_RETRY_MAX_WAIT": "3",
                                   "NLP_TOPIC_PREFIX": "t1-", "NLP_INDEX_PREFIX": "Posts",
                                   "NLP_HASHTAG_MEMORY": "off"})
    assert (cfg.tag_batch_size, cfg.tag_in_flight, cfg.web_port) == (64, 1, None)
    assert cfg.retry.max_wait == 3.0 and cfg.topics.posts_raw == "t1-posts.raw"
    assert cfg.index_prefix == "posts" and not cfg.hashtag_memory.enabled
    assert Settings.from_env({"NLP_KAFKA_PORT": "19092"}).kafka_controller_port == 19093


def test_a_bad_value_names_its_variable() -> None:
    with pytest.raises(ValueError, match="NLP_TAG_BATCH='many'"):
        PipelineConfig.from_env({"NLP_TAG_BATCH": "many"})
    with pytest.raises(ValueError, match="NLP_HEADLINE_ALLOW_INSECURE_KEY='maybe'"):
        ApiConfig.from_env({"NLP_HEADLINE_ALLOW_INSECURE_KEY": "maybe"})


def test_an_api_key_without_tls_is_refused_unless_allowed() -> None:
    with pytest.raises(ConfigError, match="plaintext"):
        ApiConfig.from_env({"NLP_HEADLINE_API_KEY": "k"})
    cfg = ApiConfig.from_env({"NLP_HEADLINE_API_KEY": "k",
                              "NLP_HEADLINE_ALLOW_INSECURE_KEY": "1"})
    assert cfg.api_key == "k" and cfg.allow_insecure_key


def test_every_row_names_a_variable_a_default_and_a_meaning() -> None:
    for line in table(Settings, PipelineConfig, ApiConfig).splitlines()[2:]:
        variable, default, meaning = (cell.strip() for cell in line.strip("|").split(" | "))
        assert variable.startswith("`NLP_") and default and meaning, line
