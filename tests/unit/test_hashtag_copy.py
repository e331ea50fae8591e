"""SegTrm's copy mechanism: the mixture, the copy source per variant, decoding with it."""

import pytest
import torch

from nlp_models.hashtag.decode import HashtagSearch, beam_search, encode_posts
from nlp_models.hashtag.model import CopyHead, CopySource, SegTrm, SegTrmConfig, layout
from nlp_models.hashtag.vocab import PAD, SEG, SEP, S
from training.hashtag.data import pad

TINY = dict(vocab_size=40, d_model=16, n_heads=2, d_ff=32, enc_layers=1, dec_layers=1,
            segment_len=3, top_k=2, max_source=12, max_target=8, dropout=0.0)


def model(variant="soft", copy=True) -> SegTrm:
    torch.manual_seed(0)
    return SegTrm(SegTrmConfig(**{**TINY, "variant": variant, "copy": copy})).eval()


def batch(m: SegTrm, lengths=(7, 2), first=10) -> tuple[torch.Tensor, torch.Tensor]:
    rows = [layout(list(range(first, first + n)), m.cfg) for n in lengths]
    return pad([r[0] for r in rows]), pad([r[1] for r in rows])


def mixture(m: SegTrm, ids, segs, y):
    enc = m.encode(ids, segs)
    mem, valid = m.memory(enc, ids)
    h, _ = m.decode_step(y, 0, None, m.cross_keys_values(mem), valid)
    src = m.copy_source(enc, ids)
    return m.copy_probs(h, y, m.copy.keys(src.states), src), src


@pytest.mark.parametrize("variant", ["transformer", "softbase", "hardbase", "soft", "hard"])
def test_mixed_probabilities_sum_to_one(variant):
    m = model(variant)
    ids, segs = batch(m)
    p, _ = mixture(m, ids, segs, torch.tensor([[S, 20, 21], [S, 22, 23]]))
    assert p.min() >= 0
    assert torch.allclose(p.sum(-1), torch.ones(2, 3), atol=1e-5)


def test_copy_source_is_the_chosen_segments_ordinary_tokens_for_soft_and_hard():
    for variant in ("soft", "hard"):
        m = model(variant)
        ids, _ = batch(m, (7,))  # [S] SEG 10 11 12 SEG 13 14 15 SEG 16
        h = torch.zeros(1, ids.shape[1], 16)
        h[0, 0], h[0, 1], h[0, 5], h[0, 9] = 1.0, 5.0, 1.5, 1.2  # segments 2 and 3 chosen
        src = m.copy_source(h, ids)
        assert sorted(src.ids[src.valid].tolist()) == [13, 14, 15, 16]


@pytest.mark.parametrize("variant", ["transformer", "softbase", "hardbase"])
def test_base_models_copy_from_every_ordinary_token(variant):
    m = model(variant)
    ids, segs = batch(m, (7,))
    src = m.copy_source(m.encode(ids, segs), ids)
    assert sorted(src.ids[src.valid].tolist()) == list(range(10, 17))
    assert not ((src.ids == S) | (src.ids == SEG) | (src.ids == PAD))[src.valid].any()


def test_a_token_only_in_the_source_gets_probability_only_by_copying():
    p_vocab = torch.zeros(1, 1, 10)
    p_vocab[..., 3] = 1.0  # the generator puts everything on token 3
    a = torch.tensor([[[0.25, 0.75]]])
    src_ids = torch.tensor([[[7, 8]]])
    p = CopyHead.mix(p_vocab, a, torch.tensor([[[0.6]]]), src_ids)
    assert p[0, 0, 3].item() == pytest.approx(0.6)
    assert p[0, 0, 7].item() == pytest.approx(0.4 * 0.25)
    assert p[0, 0, 8].item() == pytest.approx(0.4 * 0.75)
    assert p.sum().item() == pytest.approx(1.0)


def test_repeated_source_tokens_add_up():
    a = torch.tensor([[[0.5, 0.3, 0.2]]])
    p = CopyHead.mix(torch.full((1, 1, 5), 0.2), a, torch.zeros(1, 1, 1),
                     torch.tensor([[[4, 4, 1]]]))
    assert p[0, 0, 4].item() == pytest.approx(0.8) and p[0, 0, 1].item() == pytest.approx(0.2)


def test_p_gen_one_reduces_to_generation():
    p_vocab = torch.softmax(torch.randn(2, 3, 10), -1)
    a = torch.softmax(torch.randn(2, 3, 4), -1)
    p = CopyHead.mix(p_vocab, a, torch.ones(2, 3, 1), torch.randint(5, 10, (2, 3, 4)))
    assert torch.allclose(p, p_vocab)


def test_a_post_with_nothing_to_copy_generates():
    m = model("transformer")
    h = torch.randn(1, 2, 16)
    src = CopySource(torch.randn(1, 3, 16), torch.tensor([[S, PAD, PAD]]),
                     torch.zeros(1, 3, dtype=torch.bool))
    a, p_gen = m.copy.attend(h, torch.randn(1, 2, 16), m.copy.keys(src.states), src)
    assert (a == 0).all() and (p_gen == 1).all()


def test_cached_beam_step_equals_full_decoding_of_the_mixture():
    m = model("soft")
    ids, segs = batch(m)
    y = torch.tensor([[S, 20, 21, 22], [S, 23, 24, 25]])
    full, _ = mixture(m, ids, segs, y)
    search = HashtagSearch(m, encode_posts(m, ids, segs), beam=1)
    steps = [search.step(None if t == 0 else y[:, t]) for t in range(4)]
    expected = full.log()
    expected[..., [PAD, 1, S, SEG]] = float("-inf")
    for t, logp in enumerate(steps):
        finite = torch.isfinite(expected[:, t])
        assert torch.equal(torch.isfinite(logp), finite)
        assert torch.allclose(logp[finite], expected[:, t][finite], atol=1e-5)


def test_a_copying_model_learns_to_copy_a_source_only_token():
    """Token 30 never occurs as a target in training; a copying model still produces it
    for a post that contains it, by pointing at it."""
    m = model("softbase")
    m.train()
    opt = torch.optim.Adam(m.parameters(), lr=1e-2)
    for step in range(200):
        first = 10 + step % 15
        ids, segs = batch(m, (4,), first=first)
        target = torch.tensor([[first + 2, SEP]])  # copy the post's third token
        loss = m(ids, segs, torch.tensor([[S, first + 2]]), target)
        opt.zero_grad()
        loss.backward()
        opt.step()
    ids, segs = batch(m, (4,), first=28)  # tokens 28..31: the third, 30, was never a target
    hyp = beam_search(m, encode_posts(m, ids, segs), beam=2, n_best=1)[0][0]
    assert hyp.tokens == [30]


def test_without_copy_the_model_has_no_copy_parameters():
    m = model("soft", copy=False)
    assert m.copy is None and not any(k.startswith("copy") for k in m.state_dict())
    assert SegTrmConfig(vocab_size=9).copy is False


def test_a_checkpoint_from_before_copying_loads_as_a_no_copy_model(tmp_path):
    """Shipped checkpoints have no `copy` in their config and no copy weights."""
    from dataclasses import asdict

    from nlp_models.hashtag.predictor import HashtagPredictor
    from nlp_models.hashtag.vocab import CharVocab

    m = model("soft", copy=False)
    config = {k: v for k, v in asdict(m.cfg).items() if k != "copy"}
    vocab = CharVocab([chr(0x4E00 + i) for i in range(34)])
    torch.save({"config": config, "vocab": vocab.to_state(), "lang": "zh",
                "model": {k: v.half() for k, v in m.state_dict().items()}, "meta": {}},
               tmp_path / "old.pt")
    predictor = HashtagPredictor(tmp_path / "old.pt")
    assert predictor.model.copy is None
    assert len(predictor.generate(["一丁七万丈三上下"], beam=2)) == 1


def test_the_served_path_loads_a_copying_and_an_old_checkpoint_side_by_side(tmp_path):
    """The Triton model (HashtagService) reads the checkpoint's config, so a version may hold
    a copying English model next to a Chinese one from before copying existed."""
    from dataclasses import asdict

    from nlp_models.hashtag.predictor import save_checkpoint
    from nlp_models.hashtag.serving import HashtagService
    from nlp_models.hashtag.vocab import CharVocab

    chars = [chr(0x4E00 + i) for i in range(34)]
    save_checkpoint(tmp_path / "hashtag_en.pt", model("soft"), CharVocab(chars), "en", {})
    old = model("soft", copy=False)
    config = {k: v for k, v in asdict(old.cfg).items() if k != "copy"}
    torch.save({"config": config, "vocab": CharVocab(chars).to_state(), "lang": "zh",
                "model": {k: v.half() for k, v in old.state_dict().items()}, "meta": {}},
               tmp_path / "hashtag_zh.pt")
    service = HashtagService(tmp_path)
    assert service.predictors["en"].model.copy is not None
    assert service.predictors["zh"].model.copy is None
    results = service.generate(["一丁七万丈三上下", "一丁七万丈"], ["en", "zh"])
    assert [r.status for r in results] == ["ok", "ok"]
