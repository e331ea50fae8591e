"""Elasticsearch documents, index names and the template (no servers)."""

from __future__ import annotations

from datetime import UTC, datetime

from services.es.documents import index_name, pos_terms, post_document
from services.es.template import mapping_properties, template_body
from services.pb import messages_pb2 as pb


def tagged_post() -> pb.TaggedPost:
    post = pb.Post(id="p1", platform=pb.TWITTER, lang="en", text="Obama rocks #win",
                   author="bob", attributes={"source": "test"}, user_hashtags=["win"])
    post.created_at.FromDatetime(datetime(2011, 3, 4, 5, 6, 7, tzinfo=UTC))
    tp = pb.TaggedPost(post=post, pos_model=pb.ModelRef(name="pos_tagger", version="2"),
                       original_length=16)
    tp.tokens.extend([
        pb.Token(text="Obama", start=0, end=5, pos_ptb="NNP", pos_ark="^"),
        pb.Token(text="rocks", start=6, end=11, pos_ptb="VBZ", pos_ark="V"),
        pb.Token(text="#win", start=12, end=16, pos_ptb="HT", pos_ark="#"),
    ])
    tp.hashtags.add(text="#politics", score=-1.5, source="generated")
    tp.processed_at.FromDatetime(datetime(2024, 1, 1, tzinfo=UTC))
    return tp


def test_index_is_monthly_by_created_at() -> None:
    assert index_name("posts", tagged_post().post) == "posts-2011.03"
    assert index_name("posts", pb.Post(id="x")) == "posts-undated"


def test_pos_terms_lowercase_words_and_dedupe() -> None:
    toks = [pb.Token(text="Obama", pos_ptb="NNP", pos_ark="^"),
            pb.Token(text="OBAMA", pos_ptb="NNP", pos_ark="^")]
    assert pos_terms(toks) == ["NNP|obama", "ark:^|obama"]


def test_document_shape() -> None:
    doc = post_document(tagged_post())
    assert doc["id"] == "p1" and doc["platform"] == "twitter" and doc["lang"] == "en"
    assert doc["created_at"] == "2011-03-04T05:06:07Z"
    assert doc["user_hashtags"] == ["win"]
    assert doc["tokens"][0] == {"text": "Obama", "start": 0, "end": 5, "ptb": "NNP", "ark": "^"}
    assert "NNP|obama" in doc["pos_terms"] and "ark:^|obama" in doc["pos_terms"]
    assert doc["hashtags"] == [{"text": "politics", "score": -1.5, "source": "generated"}]
    assert doc["hashtag_lang"] == "en"
    assert doc["hashtag_agreement"] is None  # no suggestion was attempted (no status)
    assert doc["pos_model"] == {"name": "pos_tagger", "version": "2"}
    assert doc["hashtag_model"] is None
    assert doc["truncated"] is False and doc["original_length"] == 16


def test_agreement_says_whether_the_suggestions_found_the_authors_hashtags() -> None:
    tp = tagged_post()  # the author wrote "win" (in user_hashtags)
    tp.hashtag_status = "ok"
    assert post_document(tp)["hashtag_agreement"] == {"hit1": 0, "hit5": 0}
    tp.hashtags.add(text="WIN", score=-2.0, source="similar posts")
    assert post_document(tp)["hashtag_agreement"] == {"hit1": 0, "hit5": 1}
    del tp.hashtags[0]
    assert post_document(tp)["hashtag_agreement"] == {"hit1": 1, "hit5": 1}


def test_document_fields_are_all_mapped() -> None:
    """The mapping is strict: a field missing from the template would be a mapping error."""
    assert set(post_document(tagged_post())) <= set(mapping_properties())


def test_template_for_a_custom_prefix() -> None:
    body = template_body("t1-posts")
    assert body["index_patterns"] == ["t1-posts-*"]
    props = body["template"]["mappings"]["properties"]
    assert props["text"]["fields"]["keyword"]["type"] == "keyword"
    assert props["created_at"]["type"] == "date"
    assert all(props[f]["type"] == "keyword" for f in ("platform", "lang", "author", "pos_terms"))
