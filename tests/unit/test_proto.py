"""The committed protobuf modules match proto/*.proto, and messages round-trip."""

from pathlib import Path

from services.pb import messages_pb2 as pb
from services.pb.build import OUT_DIR, build


def test_generated_modules_are_up_to_date(tmp_path: Path):
    fresh = build(tmp_path)
    assert fresh, "protoc generated nothing"
    for path in fresh:
        committed = OUT_DIR / path.name
        assert committed.exists(), f"{path.name} missing: run python -m services.pb.build"
        assert committed.read_text() == path.read_text(), (
            f"services/pb/{path.name} is stale: run python -m services.pb.build"
        )


def test_tagged_post_round_trips_with_offsets_and_model_versions():
    post = pb.Post(id="t1", platform=pb.TWITTER, lang="en", text="hi @bob")
    tagged = pb.TaggedPost(
        post=post,
        tokens=[pb.Token(text="hi", start=0, end=2, pos_ptb="UH", pos_ark="!"),
                pb.Token(text="@bob", start=3, end=7, pos_ptb="USR", pos_ark="@")],
        pos_model=pb.ModelRef(name="pos_tagger", version="1"),
    )
    back = pb.TaggedPost.FromString(tagged.SerializeToString())
    assert back == tagged
    assert [back.post.text[t.start : t.end] for t in back.tokens] == ["hi", "@bob"]
