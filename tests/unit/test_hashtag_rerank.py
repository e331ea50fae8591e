"""Re-ranking the beam against the empty-post prior, whole words, and the served threshold."""

import json

import pytest
import torch

from nlp_models.beam import Hypothesis
from nlp_models.hashtag import decode
from nlp_models.hashtag import predictor as predictor_module
from nlp_models.hashtag.decode import HashtagSearch, encode_posts, sequence_log_probs
from nlp_models.hashtag.model import SegTrm, SegTrmConfig, encode_sources, layout
from nlp_models.hashtag.predictor import Candidate, Generated, HashtagPredictor, save_checkpoint
from nlp_models.hashtag.serving import HashtagService
from nlp_models.hashtag.vocab import SEP, CharVocab, SubwordVocab
from training.hashtag.data import Pair, pad
from training.hashtag.evaluate import shown
from training.hashtag.tune import carry_provenance, choose_threshold, choose_weight

TINY = dict(vocab_size=40, d_model=16, n_heads=2, d_ff=32, enc_layers=1, dec_layers=1,
            segment_len=3, top_k=2, max_source=12, max_target=8, dropout=0.0)
CHARS = [chr(0x4E00 + i) for i in range(34)]  # ids 6..39 of a CharVocab


def model(copy: bool, sep_logit: float = 3.0) -> SegTrm:
    """A tiny untrained SegTrm whose [SEP] logit is `sep_logit` at every step, so that beams end
    within max_target as a trained model's do (untrained, every logit is near 0 and no
    hypothesis ends: all are cut, and cut hypotheses are never offered)."""
    torch.manual_seed(0)
    m = SegTrm(SegTrmConfig(**{**TINY, "copy": copy})).eval()
    with torch.no_grad():  # h = LayerNorm(x) + 1, whose dot product with s/d · 1 is s
        m.dec_ln.bias.fill_(1.0)
        m.tok.weight[SEP] = sep_logit / TINY["d_model"]
    return m


@pytest.mark.parametrize("copy", [False, True])
def test_teacher_forced_log_prob_equals_the_sum_of_the_beams_cached_steps(copy):
    m = model(copy)
    rows = [layout(list(range(10, 10 + n)), m.cfg) for n in (7, 2)]
    ids, segs = pad([r[0] for r in rows]), pad([r[1] for r in rows])
    sequences = [[12, 30, 11], [31]]
    forced = sequence_log_probs(m, encode_posts(m, ids, segs), sequences)
    for post, tokens in enumerate(sequences):
        one = encode_posts(m, ids[post : post + 1], segs[post : post + 1])
        search = HashtagSearch(m, one, beam=1)
        total, prev = 0.0, None
        for tok in [*tokens, SEP]:
            total += search.step(prev)[0, tok].item()
            prev = torch.tensor([tok])
        assert forced[post].item() == pytest.approx(total, abs=1e-4)


@pytest.mark.parametrize("copy", [False, True])
def test_scoring_many_sequences_against_one_encoded_post_equals_one_row_each(copy):
    m = model(copy)
    rows = [layout(list(range(10, 10 + n)), m.cfg) for n in (7, 2)]
    ids, segs = pad([r[0] for r in rows]), pad([r[1] for r in rows])
    sequences = [[12, 30, 11], [31], [14, 15]]
    source_of = torch.tensor([0, 1, 0])
    shared = sequence_log_probs(m, encode_posts(m, ids, segs), sequences, source_of)
    one_each = sequence_log_probs(m, encode_posts(m, ids[source_of], segs[source_of]), sequences)
    assert torch.allclose(shared, one_each, atol=1e-5)


def candidate(tokens, logprob, prior) -> Candidate:
    return Candidate(Hypothesis(tokens, logprob, True, 0.6), prior)


def test_the_prior_weight_moves_a_favourite_below_what_the_post_raised():
    favourite = candidate([7], logprob=-1.0, prior=-1.2)  # likely with or without the post
    specific = candidate([8], logprob=-2.0, prior=-9.0)  # likely only given the post
    assert max([favourite, specific], key=lambda c: c.rank_key(0.0)) is favourite
    assert max([favourite, specific], key=lambda c: c.rank_key(0.5)) is specific
    assert specific.score(0.5) == pytest.approx(-2.0 + 4.5)


def test_generate_reranks_all_beams_then_keeps_n_best(tmp_path):
    save_checkpoint(tmp_path / "m.pt", model(True), CharVocab(CHARS), "zh", {})
    predictor = HashtagPredictor(tmp_path / "m.pt")
    text = ["一丁七万丈三上下"]
    plain = predictor.generate(text, beam=4, n_best=1)[0]
    offered = predictor.candidates(text, 4, 4, with_prior=False)[0][0]
    assert plain.ranked[0][1] == pytest.approx(
        max(offered, key=lambda c: c.rank_key(0.0)).hyp.logprob)
    found = predictor.candidates(text, 4, 4, with_prior=True)[0][0]
    for weight in (0.5, 1.0):
        best = max(found, key=lambda c: c.rank_key(weight))
        out = predictor.generate(text, beam=4, n_best=1, prior_weight=weight)[0]
        assert out.ranked[0][1] == pytest.approx(best.score(weight), abs=1e-4)


def test_the_served_threshold_hides_low_scores_and_comes_from_the_checkpoint(tmp_path):
    save_checkpoint(tmp_path / "hashtag_zh.pt", model(True), CharVocab(CHARS), "zh", {})
    text, lang = ["一丁七万丈三上下"], ["zh"]
    assert HashtagService(tmp_path).generate(text, lang)[0].hashtags
    save_checkpoint(tmp_path / "hashtag_zh.pt", model(True), CharVocab(CHARS), "zh",
                    {"min_score": 1e9})
    assert HashtagService(tmp_path).generate(text, lang)[0].hashtags == ()


def test_the_beam_stops_at_the_checkpoint_s_max_len_and_cut_hypotheses_are_dropped(tmp_path):
    save_checkpoint(tmp_path / "m.pt", model(True, sep_logit=2.0), CharVocab(CHARS), "zh",
                    {"max_len": 3})
    predictor = HashtagPredictor(tmp_path / "m.pt")
    assert predictor.max_len == 3
    text = ["一丁七万丈三上下"]
    ids, segs, _ = encode_sources(text, predictor.vocab, predictor.cfg)
    beams = decode.beam_search(predictor.model, encode_posts(predictor.model, ids, segs),
                               beam=4, n_best=4, max_len=predictor.max_len)[0]
    assert all(len(h.tokens) <= 3 for h in beams) and not all(h.finished for h in beams)
    offered = predictor.candidates(text, 4, 4, with_prior=False)[0][0]
    assert all(c.hyp.finished and c.hyp.tokens for c in offered)


def out(tag: str, score: float) -> Generated:
    return Generated([[tag]], [([tag], score)], False, "en")


def test_the_shown_top_share_counts_the_first_hashtag_shown_not_the_best_sequence():
    # the best sequence (a post word) is below the threshold; the favourite under it is shown
    outputs = [Generated([[w]], [([w], -5.0), (["favourite"], 5.0)], False, "en")
               for w in ("alpha", "beta", "gamma", "delta")]
    pairs = [Pair("text", ["x"]) for _ in outputs]
    assert shown(outputs, pairs, "en", min_score=0.0)["top_share"] == 1.0
    assert shown(outputs, pairs, "en", min_score=None)["top_share"] == 0.25


def test_the_threshold_hides_the_low_scoring_wrong_hashtags():
    outputs = [out("giants", 5.0), out("yankees", 4.0), out("tbt", 1.0), out("love", 0.5)]
    refs = [["giants"], ["yankees"], ["baseball"], ["mlb"]]
    chosen = choose_threshold(outputs, refs, "en")
    assert chosen["min_score"] == 4.0
    assert chosen["precision"] == 1.0 and chosen["posts_shown"] == 0.5


def test_the_threshold_is_per_hashtag_so_a_post_keeps_its_confident_ones():
    first = Generated([["giants"]], [(["giants"], 5.0), (["tbt"], 1.0)], False, "en")
    outputs = [first, out("yankees", 4.0), out("love", 0.5)]
    chosen = choose_threshold(outputs, [["giants"], ["yankees"], ["mlb"]], "en")
    assert chosen["min_score"] == 4.0 and chosen["posts_shown"] == pytest.approx(2 / 3, abs=1e-4)


def test_a_hashtag_that_overlaps_the_user_s_earns_part_credit_and_is_shown():
    # #油价 for #油价下调 earns ROUGE-1 F 0.67 on characters; #天气 earns nothing
    outputs = [Generated([list("油价")], [(list("油价"), 2.0), (list("天气"), 1.0)], False, "zh")
               for _ in range(3)]
    chosen = choose_threshold(outputs, [["油价下调"]] * 3, "zh")
    assert chosen["min_score"] == 2.0 and chosen["posts_shown"] == 1.0
    assert chosen["precision"] == pytest.approx(0.6667, abs=1e-4)


def test_no_threshold_when_hiding_would_lose_right_hashtags():
    outputs = [out("giants", 5.0), out("tbt", 3.0), out("yankees", 1.0)]
    assert choose_threshold(outputs, [["giants"], ["x"], ["yankees"]], "en")["min_score"] is None
    assert choose_threshold(outputs, [["a"], ["b"], ["c"]], "en")["min_score"] is None


def row(weight, *sets, posts=1000):
    return {"prior_weight": weight, **{f"dev{i}": {"rouge1": r, "top_share": t, "posts": posts}
                                       for i, (r, t) in enumerate(sets)}}


def test_the_weight_is_the_best_rouge_among_the_uncollapsed_else_the_least_collapsed():
    grid = [row(0.0, (0.05, 0.30), (0.02, 0.2)), row(0.5, (0.04, 0.02), (0.02, 0.03)),
            row(1.0, (0.03, 0.02), (0.025, 0.01))]
    assert choose_weight(grid) == 0.5
    collapsed = [row(0.0, (0.05, 0.30), (0.02, 0.2)), row(0.5, (0.04, 0.10), (0.02, 0.12))]
    assert choose_weight(collapsed) == 0.5


def test_a_weight_just_under_the_top_share_target_needs_enough_posts_to_be_trusted():
    sets = {0.5: [(0.065, 0.046), (0.047, 0.026)], 0.6: [(0.061, 0.037), (0.045, 0.021)]}
    few = [row(w, *s, posts=1000) for w, s in sets.items()]
    assert choose_weight(few) == 0.6  # 4.6 % of 1,000 posts: the bound is 5.3 %
    many = [row(w, *s, posts=100_000) for w, s in sets.items()]
    assert choose_weight(many) == 0.5


TEXTS = ["the boston marathon is on today", "flood in calgary again", "love my family"] * 30


def english_predictor(tmp_path, known: list[str]) -> HashtagPredictor:
    vocab = SubwordVocab.build(TEXTS + ["boston strong # yyc flood"], size=120)
    torch.manual_seed(0)
    m = SegTrm(SegTrmConfig(**{**TINY, "vocab_size": len(vocab.sp), "copy": True})).eval()
    save_checkpoint(tmp_path / "en.pt", m, vocab, "en", {"known_words": known})
    return HashtagPredictor(tmp_path / "en.pt")


def test_whole_words_drop_made_up_words_and_offer_the_post_s_content_words(tmp_path):
    predictor = english_predictor(tmp_path, known=["strong", "love"])
    text = "Boston marathon is on today"
    ids, segs, _ = encode_sources([text], predictor.vocab, predictor.cfg)
    words = [["boston", "strong"], ["bostonon"], ["love", "#", "marathon"], ["yyc"]]
    hyps = [[Hypothesis(predictor.vocab.encode_words(w), -1.0, True, 0.6) for w in words]]
    posts = encode_posts(predictor.model, ids, segs)
    kept = predictor._whole_words(hyps, [text])[0]
    offered = predictor._post_candidates([text], posts)[0]
    as_words = [predictor.vocab.decode_words(h.tokens)
                for h in kept + [c.hyp for c in offered]]
    # known or post words survive; a glued non-word and an unknown word do not; then the
    # post's content words and adjacent pairs of them ("is on" are function words), each
    # scored by the model
    assert as_words == [["boston", "strong"], ["love", "#", "marathon"], ["boston"],
                        ["marathon"], ["today"], ["boston", "marathon"]]
    assert all(c.hyp.logprob < 0 and c.keyword is None for c in offered)


def test_whole_words_are_off_without_a_word_list(tmp_path):
    predictor = english_predictor(tmp_path, known=[])
    assert predictor.known is None and not predictor.offer_post_words


def chinese_predictor(tmp_path, meta: dict) -> HashtagPredictor:
    vocab = CharVocab(list("油价下调国内汽柴今天"))
    torch.manual_seed(0)
    m = SegTrm(SegTrmConfig(**{**TINY, "vocab_size": len(vocab), "copy": True,
                               "max_target": 12})).eval()
    save_checkpoint(tmp_path / "zh.pt", m, vocab, "zh", meta)
    return HashtagPredictor(tmp_path / "zh.pt")


def test_chinese_posts_offer_their_words_when_the_checkpoint_says_so(tmp_path):
    text = "今天国内油价下调"
    offered = chinese_predictor(tmp_path, {"post_candidates": True}).generate(
        [text], beam=2, n_best=20)[0]
    plain = chinese_predictor(tmp_path, {}).generate([text], beam=2, n_best=20)[0]
    tags = {tag for tag, _ in offered.hashtags()}
    # jieba's content words of the post and adjacent pairs, written back whole; 今天 is a
    # function word here; the model's own hypotheses are still there
    assert {"国内", "油价", "下调", "国内油价", "油价下调"} <= tags
    assert "今天" not in tags
    assert {tag for tag, _ in plain.hashtags()} < tags


def test_a_chinese_candidate_with_a_character_the_vocabulary_lacks_is_not_offered(tmp_path):
    predictor = chinese_predictor(tmp_path, {"post_candidates": True})
    tags = {tag for tag, _ in predictor.generate(["油价暴涨"], beam=2, n_best=20)[0].hashtags()}
    assert not any("暴" in t or "涨" in t for t in tags)  # 暴涨 and 油价暴涨 need 暴, 涨
    assert "油价" in tags


def test_scoring_in_length_sorted_passes_returns_each_sequence_its_own_score(monkeypatch):
    m = model(copy=True)
    rows = [layout(list(range(10, 10 + n)), m.cfg) for n in (7, 2)]
    posts = encode_posts(m, pad([r[0] for r in rows]), pad([r[1] for r in rows]))
    sequences = [[12, 30, 11, 14], [31], [14, 15], [20, 21, 22], [25]]
    source_of = torch.tensor([0, 1, 0, 1, 1])
    one_pass = sequence_log_probs(m, posts, sequences, source_of)
    monkeypatch.setattr(decode, "SCORE_BATCH", 2)
    assert torch.allclose(sequence_log_probs(m, posts, sequences, source_of), one_pass, atol=1e-5)


def test_the_empty_post_prior_is_remembered_per_sequence_and_the_memory_is_bounded(
        tmp_path, monkeypatch):
    predictor = english_predictor(tmp_path, known=["love"])
    sequences = [[10, 11], [12], [10, 11]]
    first = predictor._empty_post_log_probs(sequences)
    assert first[0] == first[2] and len(predictor._prior) == 2
    ids, segs, _ = encode_sources([""], predictor.vocab, predictor.cfg)
    afresh = sequence_log_probs(predictor.model, encode_posts(predictor.model, ids, segs),
                                sequences[:2], torch.zeros(2, dtype=torch.long))
    assert first[:2] == pytest.approx(afresh.tolist(), abs=1e-5)
    assert predictor._empty_post_log_probs([[12]]) == [first[1]]  # from memory
    monkeypatch.setattr(predictor_module, "PRIOR_CACHE", 3)
    predictor._empty_post_log_probs([[13], [14]])  # 2 + 2 > 3: the memory starts over
    assert sorted(predictor._prior) == [(13,), (14,)]


@pytest.mark.parametrize("copy", [False, True])
def test_a_sequence_that_starts_another_is_scored_as_if_alone(copy):
    m = model(copy)
    rows = [layout(list(range(10, 10 + n)), m.cfg) for n in (7, 2)]
    posts = encode_posts(m, pad([r[0] for r in rows]), pad([r[1] for r in rows]))
    sequences = [[12, 30, 11], [12, 30], [12], [], [12, 30], [31, 5]]
    source_of = torch.tensor([0, 0, 0, 0, 1, 1])
    shared = sequence_log_probs(m, posts, sequences, source_of)
    alone = torch.cat([sequence_log_probs(m, posts, [s], source_of[i : i + 1])
                       for i, s in enumerate(sequences)])
    assert torch.allclose(shared, alone, atol=1e-5)


def test_re_tuning_a_served_file_keeps_its_training_record(tmp_path):
    served, runs = tmp_path / "hashtag_generator" / "6", tmp_path / "runs"
    served.mkdir(parents=True)
    runs.mkdir()
    training = {"command": "python -m training train hashtag --config c.toml"}
    card = {"files": {"hashtag_zh.pt": {"training": training}}}
    (served / "card.json").write_text(json.dumps(card))
    carry_provenance(served / "hashtag_zh.pt", runs / "tuned.pt")
    assert json.loads((runs / "run.json").read_text()) == training
