"""Headline models: XL recurrence, copy and coverage, Seq2BF orders, masks and positions,
and incremental decoding that reproduces the teacher-forced probabilities exactly."""

from __future__ import annotations

import pytest
import torch

from nlp_models.headline.decode import (
    MIN_ADDED,
    MIN_TOKENS,
    RepeatRule,
    assemble,
    generate,
    generate_constrained,
    once_only,
    repeat_rule,
)
from nlp_models.headline.encoder import ArticleEncoder
from nlp_models.headline.model import CopyCoverage, HeadlineConfig, HeadlineGenerator, smooth_scale
from nlp_models.headline.predictor import HeadlinePredictor
from nlp_models.headline.seq2bf import (
    BACKWARD,
    FORWARD,
    NOT_YET,
    STRATEGIES,
    Seq2BF,
    Seq2BFConfig,
    end_marker,
    layout,
    next_side,
)
from nlp_models.headline.vocab import BOS, EOS, PAD, UNK, CharVocab, SubwordVocab

SMALL = dict(d_model=32, n_heads=2, enc_layers=2, dec_layers=2, d_ff=64, segment_len=8,
             mem_len=8, max_source=64)


@pytest.fixture(autouse=True)
def seeded():
    torch.manual_seed(0)


# ---- Transformer-XL encoder ------------------------------------------------------------


def xl_encoder(**kw) -> ArticleEncoder:
    args = dict(kind="xl", d_model=32, n_heads=2, layers=2, d_ff=64, dropout=0.0,
                max_source=64, segment_len=8, mem_len=8)
    return ArticleEncoder(**{**args, **kw}).eval()


def test_xl_encodes_every_segment_of_a_long_article():
    enc = xl_encoder()
    x = torch.randn(2, 40, 32)
    h, valid = enc(x, torch.ones(2, 40, dtype=torch.bool))
    assert h.shape == (2, 40, 32) and valid.all()  # 5 segments, nothing cut


def test_xl_segment_states_depend_on_the_previous_segment_only_through_the_cache():
    enc = xl_encoder()
    x = torch.randn(1, 16, 32)
    ones = torch.ones(1, 16, dtype=torch.bool)
    h = enc(x, ones)[0]
    changed = x.clone()
    changed[:, 12:] += torch.randn(1, 4, 32)  # only the second segment's second half
    h2 = enc(changed, ones)[0]
    assert torch.allclose(h[:, :8], h2[:, :8], atol=1e-6)  # earlier segment unaffected
    assert not torch.allclose(h[:, 8:12], h2[:, 8:12])  # bidirectional inside a segment


def test_xl_memory_carries_no_gradient():
    enc = xl_encoder(layers=1).train()
    x = torch.randn(1, 16, 32, requires_grad=True)
    h, _ = enc(x, torch.ones(1, 16, dtype=torch.bool))
    h[:, 8:].sum().backward()  # loss on the second segment only
    assert x.grad[:, :8].abs().sum() == 0  # stop-gradient into the cached first segment
    assert x.grad[:, 8:].abs().sum() > 0


def test_xl_ignores_padding_and_survives_all_padding_segments():
    enc = xl_encoder()
    x = torch.randn(2, 32, 32)
    valid = torch.ones(2, 32, dtype=torch.bool)
    valid[1, 5:] = False  # the second article ends in the first segment
    h, _ = enc(x, valid)
    alone, _ = enc(x[1:, :5], valid[1:, :5])
    assert torch.isfinite(h).all()
    assert torch.allclose(h[1, :5], alone[0], atol=1e-5)


def test_relative_positions_make_the_encoder_shift_invariant_within_a_segment():
    """Same tokens at another offset inside the segment give the same states (no absolute
    positions anywhere), unlike the vanilla encoder."""
    x = torch.randn(1, 4, 32)
    padded = torch.cat([x, torch.zeros(1, 4, 32)], 1)
    shifted = torch.cat([torch.zeros(1, 4, 32), x], 1)
    valid_a = torch.tensor([[True] * 4 + [False] * 4])
    valid_b = torch.tensor([[False] * 4 + [True] * 4])
    for kind, same in (("xl", True), ("vanilla", False)):
        enc = xl_encoder(kind=kind)
        a = enc(padded, valid_a)[0][0, :4]
        b = enc(shifted, valid_b)[0][0, 4:]
        assert torch.allclose(a, b, atol=1e-5) == same


# ---- copy and coverage ------------------------------------------------------------------


def test_copy_mixture_is_a_distribution_that_puts_attention_on_article_tokens():
    p_vocab = torch.softmax(torch.randn(1, 10), -1)
    a = torch.tensor([[0.5, 0.25, 0.25]])
    src_ext = torch.tensor([[10, 4, 10]])  # an unknown word (extended id 10) twice
    p = CopyCoverage.mix(p_vocab, a, torch.tensor([[0.4]]), src_ext, n_ext=1)
    assert p.shape == (1, 11)
    assert p.sum().item() == pytest.approx(1.0)
    assert p[0, 10].item() == pytest.approx(0.6 * 0.75)  # only copying can produce it
    assert p[0, 4].item() == pytest.approx(0.4 * p_vocab[0, 4].item() + 0.6 * 0.25)


def test_coverage_loss_punishes_attending_to_the_same_token_again():
    cfg = HeadlineConfig(vocab_size=50, variant="pointer-generator", dropout=0.0, **SMALL)
    model = HeadlineGenerator(cfg)
    with torch.no_grad():  # copy attention that ignores the decoder state: always the same
        model.copy.w_s.weight.zero_()
        model.copy.w_c.zero_()
    src = torch.randint(5, 50, (1, 12))
    y = torch.randint(5, 50, (1, 6))
    losses = model(src, src, 0, y, y)
    assert losses["coverage"].item() > 0.5  # repeated attention overlaps its coverage
    assert losses["loss"].item() == pytest.approx(
        losses["nll"].item() + cfg.coverage_weight * losses["coverage"].item(), rel=1e-5)


def test_only_copying_models_can_emit_an_unknown_article_word():
    src = torch.randint(5, 50, (1, 12))
    src_ext = src.clone()
    src_ext[0, 3] = 50  # the article's unknown word
    target = torch.tensor([[50, EOS]])
    y_in = torch.tensor([[BOS, 50]])
    for variant, finite_gain in (("transformer", False), ("xl-cc", True)):
        model = HeadlineGenerator(HeadlineConfig(vocab_size=50, variant=variant, **SMALL)).eval()
        copy_prob = model(src, src_ext, 1, y_in, target)["nll"]
        unk = torch.tensor([[1, EOS]])  # the same target read as [UNK]
        as_unk = model(src, src_ext, 1, y_in, unk)["nll"]
        assert (copy_prob.item() != as_unk.item()) == finite_gain


def test_smooth_embedding_shrinks_frequent_tokens():
    scale = smooth_scale(torch.tensor([900.0, 90.0, 9.0, 1.0]), alpha=0.01)
    assert scale[0] < scale[1] < scale[2] < scale[3] <= 1
    assert smooth_scale(torch.tensor([5.0, 1.0]), alpha=0.0).tolist() == [1.0, 1.0]


# ---- Seq2BF: orders, positions, masks ------------------------------------------------------


@pytest.mark.parametrize(
    ("strategy", "steps"),
    [  # headline: [BOS] y-1 w1 y1 y2 [EOS]; phrase w1 is step 0
        ("seq-b", [2, 1, 0, 3, 4, 5]),
        ("seq-f", [5, 4, 0, 1, 2, 3]),
        ("tok-b", [3, 1, 0, 2, 4, 5]),
        ("tok-f", [4, 2, 0, 1, 3, 5]),
    ],
)
def test_each_order_generates_tokens_in_the_papers_sequence(strategy, steps):
    laid = layout([11], [20], [31, 32], strategy)
    assert laid.tokens == [BOS, 11, 20, 31, 32, EOS]
    assert laid.steps == steps


def test_positions_are_relative_to_the_middle_of_the_phrase():
    laid = layout([11, 12], [20, 21, 22, 23], [31], "tok-b")
    # middle token = floor((4+1)/2) = the 2nd phrase token (21) at 0
    assert dict(zip(laid.tokens, laid.positions, strict=True))[21] == 0
    assert laid.positions == [-4, -3, -2, -1, 0, 1, 2, 3, 4]
    assert layout([], [20, 21, 22], [], "seq-b").positions == [-2, -1, 0, 1, 2]


def test_rows_predict_their_outward_neighbour_with_the_head_of_their_side():
    laid = layout([11, 12], [20, 21], [31], "seq-b")
    # rows: BOS 11 12 20 21 31 EOS
    assert laid.back_targets == [PAD, BOS, 11, 12, PAD, PAD, PAD]
    assert laid.fwd_targets == [PAD, PAD, PAD, PAD, 31, EOS, PAD]
    single = layout([11], [20], [31], "tok-f")  # one-token phrase: both heads on its row
    assert single.back_targets[2] == 11 and single.fwd_targets[2] == 31


def test_tok_orders_continue_on_the_longer_side_once_the_other_has_ended():
    laid = layout([11, 12, 13], [20], [], "tok-b")  # backward side is longer
    # steps: y-1=1, EOS=2 (forward ends at once), then backward alone: y-2=3, y-3=4, BOS=5
    assert laid.steps == [5, 4, 3, 1, 0, 2]
    assert next_side("tok-b", 2, 1, False, True) == BACKWARD
    assert next_side("tok-f", 0, 0, False, False) == FORWARD


def test_the_step_mask_lets_a_row_see_exactly_what_existed_when_it_was_generated():
    laid = layout([11], [20], [31, 32], "tok-b")
    steps = torch.tensor(laid.steps)
    mask = steps[None, :] <= steps[:, None]
    y1 = laid.tokens.index(31)  # generated at step 2, after y-1 (step 1)
    assert mask[y1].tolist() == [False, True, True, True, False, False]


def test_assemble_inverts_the_generation_order():
    for strategy in STRATEGIES:
        laid = layout([11, 12], [20], [31], strategy)
        order = sorted((s, t) for s, t in zip(laid.steps, laid.tokens, strict=True) if s > 0)
        generated = [t for _, t in order][:-1]  # the final end marker is not kept
        assert assemble(strategy, generated) == ([11, 12], [31])
        assert end_marker(BACKWARD) == BOS and end_marker(FORWARD) == EOS


# ---- incremental decoding == teacher forcing ---------------------------------------------


@pytest.mark.parametrize("variant", ["transformer", "pointer-generator", "xl", "xl-cc"])
def test_beam_search_scores_equal_teacher_forced_log_probabilities(variant):
    cfg = HeadlineConfig(vocab_size=60, variant=variant, max_target=10, **SMALL)
    model = HeadlineGenerator(cfg).eval()
    src = torch.randint(5, 60, (2, 30))
    src[1, 20:] = PAD
    src_ext = src.clone()
    src_ext[0, 3] = 60  # an unknown article word
    hyps = generate(model, src, src_ext, 1, beam=3, n_best=2)
    for b in range(2):
        assert len(hyps[b]) == 2 and hyps[b][0].score >= hyps[b][1].score
        for h in hyps[b]:
            assert len(h.tokens) >= MIN_TOKENS["en"]
            tokens = h.tokens + ([EOS] if h.finished else [])
            y_in, target = torch.tensor([[BOS, *tokens[:-1]]]), torch.tensor([tokens])
            nll = model(src[b : b + 1], src_ext[b : b + 1], 1, y_in, target)["nll"]
            assert h.logprob == pytest.approx(-nll.item() * len(tokens), abs=1e-3)


@pytest.mark.parametrize("copy", [False, True])
@pytest.mark.parametrize("strategy", STRATEGIES)
def test_seq2bf_decoding_reproduces_training_probabilities_and_keeps_the_phrase(strategy, copy):
    """With copying, the articles hold an unknown token (extended id 60) the search may copy."""
    cfg = Seq2BFConfig(vocab_size=60, strategy=strategy, max_target=12, copy=copy, **SMALL)
    model = Seq2BF(cfg).eval()
    with torch.no_grad():  # make the end markers likely so hypotheses finish
        model.out_bias[BACKWARD, BOS] = model.out_bias[FORWARD, EOS] = 3.0
    src = torch.randint(5, 60, (3, 20))
    src[:, 4] = UNK
    src_ext = src.masked_fill(src == UNK, 60)
    phrases = [[7, 8, 9], [11], [12, 13]]
    hyps = generate_constrained(model, src, phrases, beam=3, n_best=2, strategy=strategy,
                                src_ext=src_ext, n_ext=1)
    for b, phrase in enumerate(phrases):
        for h in hyps[b]:
            assert h.finished and (copy or max(h.tokens) < 60)
            left, right = assemble(strategy, h.tokens)
            assert len(left) + len(phrase) + len(right) >= MIN_TOKENS["en"]  # never the bare phrase
            laid = layout(left, phrase, right, strategy)
            rows = [torch.tensor([v]) for v in (laid.tokens, laid.positions, laid.steps,
                                                laid.back_targets, laid.fwd_targets)]
            nll = model(src[b : b + 1], *rows, src_ext[b : b + 1], 1)["nll"]
            predicted = sum(t != PAD for t in laid.back_targets + laid.fwd_targets)
            assert h.logprob == pytest.approx(-nll.item() * predicted, abs=1e-3)


def _padded(rows: list[list[int]], value: int = PAD) -> torch.Tensor:
    return torch.tensor([r + [value] * (max(map(len, rows)) - len(r)) for r in rows])


def test_the_seq2bf_judge_gives_each_headline_its_training_log_probability_per_token():
    """Two headlines of different lengths judged at once (padded rows) score each what the
    training loss gives it alone: the constrained lead rule compares them fairly."""
    model = Seq2BF(Seq2BFConfig(vocab_size=60, max_target=12, copy=True, **SMALL)).eval()
    src = torch.randint(5, 60, (1, 20))
    laid = [layout([21, 22], [7, 8], [23], "tok-b"), layout([], [7, 8], [24, 25, 26, 27], "tok-b")]
    memory, valid = model.encode(src.expand(2, -1))
    judged = model.mean_log_probs(
        memory, valid, src.expand(2, -1), 0, _padded([x.tokens for x in laid]),
        _padded([x.positions for x in laid], 0), _padded([x.steps for x in laid], NOT_YET),
        _padded([x.back_targets for x in laid]), _padded([x.fwd_targets for x in laid]))
    with torch.no_grad():
        alone = [-model(src, *(torch.tensor([v]) for v in (x.tokens, x.positions, x.steps,
                                                           x.back_targets, x.fwd_targets)),
                        src, 0)["nll"].item() for x in laid]
    assert judged.tolist() == pytest.approx(alone, abs=1e-4)


def test_a_long_phrase_still_gets_words_around_it():
    """A phrase of MIN_TOKENS pieces met the length floor by itself and came back bare."""
    model = Seq2BF(Seq2BFConfig(vocab_size=60, max_target=12, **SMALL)).eval()
    with torch.no_grad():  # make ending right away the most likely move
        model.out_bias[BACKWARD, BOS] = model.out_bias[FORWARD, EOS] = 6.0
    phrase = [7, 8, 9, 10, 11]
    for strategy in STRATEGIES:
        hyps = generate_constrained(model, torch.randint(5, 60, (1, 20)), [phrase], beam=3,
                                    n_best=3, strategy=strategy)
        for h in hyps[0]:
            left, right = assemble(strategy, h.tokens)
            assert len(left) + len(right) >= MIN_ADDED


def _favourite(logits: torch.Tensor, token: int) -> torch.Tensor:
    return logits + 20.0 * (torch.arange(logits.shape[-1]) == token)


@pytest.mark.parametrize("copy", [False, True])
def test_seq2bf_never_repeats_a_once_only_token_even_when_it_is_the_favourite(copy):
    model = Seq2BF(Seq2BFConfig(vocab_size=60, max_target=12, copy=copy, **SMALL)).eval()
    with torch.no_grad():
        model.out_bias[:, 20] = 20.0  # 20 is by far the likeliest token on both sides
    once = torch.zeros(60, dtype=torch.bool)
    once[[20, 7]] = True
    src = torch.randint(5, 60, (1, 20))
    for strategy in STRATEGIES:
        free = generate_constrained(model, src, [[7]], beam=3, strategy=strategy, src_ext=src)
        assert free[0][0].tokens.count(20) > 1  # without the rule it repeats
        hyps = generate_constrained(model, src, [[7]], beam=3, n_best=3, strategy=strategy,
                                    src_ext=src, rule=RepeatRule(once=once))
        for h in hyps[0]:
            assert h.tokens.count(20) == 1 and 7 not in h.tokens  # 7 is in the phrase


def test_generator_never_repeats_a_once_only_token_even_when_it_is_the_favourite():
    model = HeadlineGenerator(HeadlineConfig(vocab_size=60, variant="xl-cc", max_target=10,
                                             **SMALL)).eval()
    logits = model.logits
    model.logits = lambda h: _favourite(logits(h), 20)
    once = torch.zeros(60, dtype=torch.bool)
    once[20] = True
    src = torch.randint(5, 60, (1, 20))
    assert generate(model, src, src, 0)[0][0].tokens.count(20) > 1
    for h in generate(model, src, src, 0, beam=3, n_best=3, rule=RepeatRule(once=once))[0]:
        assert h.tokens.count(20) == 1


def test_english_words_are_once_only_but_word_pieces_punctuation_and_chinese_characters_not():
    vocab = SubwordVocab.build(["The SEC said the SEC rules, U.S. says."] * 50, size=40)
    words = once_only(vocab)
    surfaces = [vocab.surface(i) for i in range(len(vocab))]
    sec, fragment, comma = (surfaces.index(s) for s in (" SEC", "les", ","))
    assert words[sec] and not words[fragment] and not words[comma]
    chinese = CharVocab([chr(0x4E00 + i) for i in range(50)])
    assert not once_only(chinese).any()
    assert repeat_rule(chinese, "zh").ngram == 3 and repeat_rule(chinese, "zh").once is None
    assert repeat_rule(vocab, "en").ngram == 0


def _trigrams(tokens: list[int]) -> list[tuple[int, ...]]:
    return [tuple(tokens[i : i + 3]) for i in range(len(tokens) - 2)]


@pytest.mark.parametrize("copy", [False, True])
def test_seq2bf_may_hold_a_trigram_once_never_twice_counting_the_phrase(copy):
    """Phrase [20, 20] and 20 the favourite on both sides: one more 20 next to it makes
    the trigram 20 20 20; another 20 next to that would repeat it."""
    model = Seq2BF(Seq2BFConfig(vocab_size=60, max_target=12, copy=copy, **SMALL)).eval()
    with torch.no_grad():
        model.out_bias[:, 20] = 20.0
    src = torch.randint(5, 60, (1, 20))
    rule = RepeatRule(ngram=3)
    for strategy in STRATEGIES:
        free = generate_constrained(model, src, [[20, 20]], beam=3, strategy=strategy,
                                    src_ext=src)
        assert free[0][0].tokens.count(20) > 1  # without the rule it repeats
        for h in generate_constrained(model, src, [[20, 20]], beam=3, n_best=3,
                                      strategy=strategy, src_ext=src, rule=rule)[0]:
            left, right = assemble(strategy, h.tokens)
            text = left + [20, 20] + right
            assert _trigrams(text).count((20, 20, 20)) == 1
            assert len(set(_trigrams(text))) == len(_trigrams(text))


def test_generator_may_hold_a_trigram_once_never_twice():
    model = HeadlineGenerator(HeadlineConfig(vocab_size=60, variant="xl-cc", max_target=10,
                                             **SMALL)).eval()
    logits = model.logits
    model.logits = lambda h: _favourite(logits(h), 20)
    src = torch.randint(5, 60, (1, 20))
    assert generate(model, src, src, 0)[0][0].tokens[:4] == [20] * 4
    for h in generate(model, src, src, 0, beam=3, n_best=3, rule=RepeatRule(ngram=3))[0]:
        assert h.tokens[:3] == [20] * 3 and h.tokens[3] != 20
        assert len(set(_trigrams(h.tokens))) == len(_trigrams(h.tokens))


def test_copying_seq2bf_gives_the_articles_unknown_token_the_copy_probability():
    model = Seq2BF(Seq2BFConfig(vocab_size=60, copy=True, **SMALL)).eval()
    src_ext = torch.tensor([[61, 20, 60, 21]])  # two unknown tokens, at positions 0 and 2
    h = torch.randn(1, SMALL["d_model"])
    a = torch.tensor([[0.0, 0.25, 0.75, 0.0]])  # attention on "20" and the second unknown
    context = a @ torch.randn(4, SMALL["d_model"])
    p = model.copy_probs(h, torch.tensor([FORWARD]), a, context, src_ext, n_ext=2)
    p_gen = model.pointer.p_gen(context, h, torch.tensor([FORWARD])).item()
    assert p.shape == (1, 62) and p.sum().item() == pytest.approx(1.0, abs=1e-5)
    assert p[0, 60].item() == pytest.approx(0.75 * (1 - p_gen), abs=1e-6)
    assert p[0, 61].item() == 0.0  # not attended


def test_seq2bf_training_batch_pads_rows_without_leaking_them():
    cfg = Seq2BFConfig(vocab_size=60, **SMALL)
    model = Seq2BF(cfg).eval()
    long, short = layout([11, 12], [20], [31], "tok-b"), layout([], [21], [], "tok-b")
    width = len(long.tokens)

    def pad(v, fill):
        return v + [fill] * (width - len(v))

    src = torch.randint(5, 60, (2, 10))
    batch = [torch.tensor([pad(getattr(x, f), fill) for x in (long, short)])
             for f, fill in (("tokens", PAD), ("positions", 0), ("steps", NOT_YET),
                             ("back_targets", PAD), ("fwd_targets", PAD))]
    together = model(src, *batch)["nll"]
    alone = [model(src[i : i + 1], *[t[i : i + 1, : len(x.tokens)] for t in batch])["nll"]
             for i, x in enumerate((long, short))]
    n = [sum(t != PAD for t in x.back_targets + x.fwd_targets) for x in (long, short)]
    mean = (alone[0] * n[0] + alone[1] * n[1]) / sum(n)
    assert together.item() == pytest.approx(mean.item(), abs=1e-5)


def test_chinese_headlines_are_never_shorter_than_the_chinese_floor_of_characters():
    """A floor of 4 tokens let the Chinese Seq2BF return a bare 4-character phrase."""
    chars = [chr(0x4E00 + i) for i in range(50)]
    vocab = CharVocab(chars)
    model = Seq2BF(Seq2BFConfig(vocab_size=len(vocab), max_target=16, **SMALL)).eval()
    with torch.no_grad():  # make the end markers likely so hypotheses finish early
        model.out_bias[BACKWARD, BOS] = model.out_bias[FORWARD, EOS] = 3.0
    predictor = HeadlinePredictor(model, vocab, "zh", "seq2bf")
    phrase = "".join(chars[3:7])
    for strategy in STRATEGIES:
        out = predictor.constrained(["".join(chars)], [phrase], strategy, beam=3, n_best=3)
        for text, _ in out[0].candidates:
            assert phrase in text and len(text) >= MIN_TOKENS["zh"] > len(phrase)


def test_a_mark_after_the_phrase_clings_to_it_as_headlines_write_it():
    from nlp_models.headline.predictor import around

    assert around("Sen.", "Reid", ": Sudan sanctions", "en") == "Sen. Reid: Sudan sanctions"
    assert around("", "Maine", ", Collins announce aid", "en") == "Maine, Collins announce aid"
    assert around("", "Reid", "'s bill passes", "en") == "Reid's bill passes"
    assert around("Sen.", "Reid", "hails bill", "en") == "Sen. Reid hails bill"
    assert around("", "Reid", "", "en") == "Reid"
    assert around("美国", "手语", "之地", "zh") == "美国手语之地"
