"""SegTrm: input layout, attention masks, segment selection, cached decoding, termination."""

import pytest
import torch

from nlp_models.hashtag.decode import beam_search, encode_posts
from nlp_models.hashtag.model import SegTrm, SegTrmConfig, layout
from nlp_models.hashtag.vocab import PAD, SEG, SEP, S
from training.hashtag.data import pad

TINY = dict(vocab_size=40, d_model=16, n_heads=2, d_ff=32, enc_layers=1, dec_layers=1,
            segment_len=3, top_k=2, max_source=12, max_target=8, dropout=0.0)


def model(variant="soft", similarity="manhattan", **kw) -> SegTrm:
    torch.manual_seed(0)
    return SegTrm(SegTrmConfig(**{**TINY, "variant": variant, "similarity": similarity, **kw}))


def batch(m: SegTrm, lengths=(7, 2)) -> tuple[torch.Tensor, torch.Tensor]:
    rows = [layout(list(range(10, 10 + n)), m.cfg) for n in lengths]
    return pad([r[0] for r in rows]), pad([r[1] for r in rows])


def test_layout_prepends_s_and_inserts_seg_every_n_tokens():
    ids, segs = layout([11, 12, 13, 14, 15, 16, 17], model().cfg)
    assert ids == [S, SEG, 11, 12, 13, SEG, 14, 15, 16, SEG, 17]
    assert segs == [0, 1, 1, 1, 1, 2, 2, 2, 2, 3, 3]


def test_vanilla_transformer_layout_has_no_segments():
    ids, segs = layout([11, 12, 13, 14], model("transformer").cfg)
    assert ids == [S, 11, 12, 13, 14] and set(segs) == {0}


def test_layout_truncates_to_max_source():
    ids, _ = layout(list(range(10, 40)), model().cfg)
    assert len([i for i in ids if i not in (S, SEG)]) == 12


def test_seg_tokens_attend_only_to_their_segment_others_to_the_whole_text():
    m = model()
    ids, segs = batch(m)
    mask = m.encoder_mask(ids, segs)[0, 0]  # post with 7 tokens, no padding
    first_seg = 1
    assert mask[first_seg].tolist() == [i in (1, 2, 3, 4) for i in range(11)]
    assert mask[0].all() and mask[2].all()  # [S] and an ordinary token see everything
    short = m.encoder_mask(ids, segs)[1, 0]  # post with 2 tokens, padded
    assert not short[:, 4:].any()  # nobody attends to padding


def test_hard_selection_keeps_the_k_most_similar_segs_in_text_order():
    m = model("hard")
    ids, _ = batch(m, (7,))  # [S] SEG a b c SEG d e f SEG g
    h = torch.zeros(1, ids.shape[1], 16)
    h[0, 0] = 1.0  # [S]
    h[0, 1] = 5.0  # far from [S]
    h[0, 5] = 1.5  # close
    h[0, 9] = 1.2  # closest
    mem, valid = m.memory(h, ids)
    assert mem.shape == (1, 3, 16) and valid.all()
    # [S], then segment 2 and segment 3 (text order), each scaled by k * softmax weight
    assert torch.allclose(mem[0, 0], h[0, 0])
    assert mem[0, 1, 0] / 1.5 == pytest.approx(mem[0, 1, 1] / 1.5)
    weights = torch.stack([mem[0, 1, 0] / 1.5, mem[0, 2, 0] / 1.2])
    assert weights.sum().item() == pytest.approx(2.0, abs=1e-5)
    assert weights[1] > weights[0]  # closer segment, larger weight


def test_soft_selection_brings_the_chosen_segments_tokens_and_masks_padding():
    m = model("soft")
    ids, segs = batch(m, (7, 2))
    mem, valid = m.memory(m.encode(ids, segs), ids)
    assert mem.shape == (2, 1 + 2 * 4, 16)
    assert valid[0].sum() == 1 + 4 + 4 or valid[0].sum() == 1 + 4 + 2  # last segment has 1 token
    assert valid[1].tolist() == [True, True, True, True, False, False, False, False, False]


@pytest.mark.parametrize("variant,length", [("transformer", 8), ("softbase", 11), ("hardbase", 4)])
def test_base_models_read_every_state_or_every_seg(variant, length):
    m = model(variant)
    ids, segs = batch(m)
    mem, _ = m.memory(m.encode(ids, segs), ids)
    assert mem.shape[1] == length


@pytest.mark.parametrize("similarity", ["euclidean", "mahalanobis", "cosine", "manhattan"])
def test_every_similarity_receives_gradient_through_the_selection(similarity):
    m = model("soft", similarity)
    ids, segs = batch(m)
    y = torch.tensor([[S, 20, 21], [S, 22, 23]])
    loss = m(ids, segs, y, torch.tensor([[20, 21, SEP], [22, 23, SEP]]))
    loss.backward()
    grad = m.encoder[0].attn.q.weight.grad
    assert grad is not None and grad.abs().sum() > 0
    if similarity == "mahalanobis":
        assert m.similarity.w.weight.grad.abs().sum() > 0


def test_cached_incremental_decoding_matches_full_decoding():
    m = model("soft").eval()
    ids, segs = batch(m)
    mem, valid = m.memory(m.encode(ids, segs), ids)
    cross = m.cross_keys_values(mem)
    y = torch.tensor([[S, 20, 21, 22], [S, 23, 24, 25]])
    full, _ = m.decode_step(y, 0, None, cross, valid)
    cache, steps = None, []
    for t in range(4):
        h, cache = m.decode_step(y[:, t : t + 1], t, cache, cross, valid)
        steps.append(h)
    assert torch.allclose(torch.cat(steps, 1), full, atol=1e-5)


def test_beam_search_reproduces_a_memorised_target_and_stops_at_sep():
    m = model("hard")
    ids, segs = batch(m, (7, 5))
    targets = torch.tensor([[20, 6, 21, SEP, PAD], [22, 23, 6, 24, SEP]])
    y_in = torch.cat([torch.full((2, 1), S), targets[:, :-1]], 1).masked_fill(
        torch.cat([torch.zeros(2, 1, dtype=torch.bool), targets[:, :-1] == PAD], 1), PAD)
    opt = torch.optim.Adam(m.parameters(), lr=1e-2)
    for _ in range(150):
        loss = m(ids, segs, y_in, targets)
        opt.zero_grad()
        loss.backward()
        opt.step()
    hyps = beam_search(m, encode_posts(m, ids, segs), beam=3, n_best=2)
    assert hyps[0][0].tokens == [20, 6, 21] and hyps[0][0].finished
    assert hyps[1][0].tokens == [22, 23, 6, 24] and hyps[1][0].finished
    assert len(hyps[0]) == 2 and hyps[0][0].score >= hyps[0][1].score


def test_beam_search_stops_at_max_len_without_sep():
    m = model("transformer")
    ids, segs = batch(m, (4,))
    hyps = beam_search(m, encode_posts(m, ids, segs), beam=2, n_best=2, max_len=3)
    assert all(len(h.tokens) <= 3 for h in hyps[0])
    assert all(h.finished or len(h.tokens) == 3 for h in hyps[0])


def test_unknown_variant_is_rejected():
    with pytest.raises(ValueError, match="variant"):
        SegTrmConfig(vocab_size=10, variant="bogus")


def test_a_post_decodes_the_same_alone_as_in_a_batch_whose_other_posts_stop_early():
    m = model("soft")
    ids, segs = batch(m, (7, 2, 5))
    together = beam_search(m, encode_posts(m, ids, segs), beam=3, n_best=2, max_len=6)
    for i in range(3):
        alone_ids, alone_segs = batch(m, ((7, 2, 5)[i],))
        alone_posts = encode_posts(m, alone_ids, alone_segs)
        alone = beam_search(m, alone_posts, beam=3, n_best=2, max_len=6)[0]
        assert [h.tokens for h in together[i]] == [h.tokens for h in alone]
        assert [h.logprob for h in together[i]] == pytest.approx([h.logprob for h in alone],
                                                                 abs=1e-4)
