"""Specification of the DCNN tagger and its comparison models (nlp_models/pos/model.py)."""

import pytest
import torch

from nlp_models.pos.features import Vocabularies
from nlp_models.pos.model import VARIANTS, Tagger, TaggerConfig, reverse_padded
from training.pos.data import Sentence, make_batch

SENTS = [
    Sentence("RT @bob : this is so cool lol".split(), "RT USR : DT VBZ RB JJ UH".split(), "ptb"),
    Sentence("Stocks fell sharply .".split(), "NNS VBD RB .".split(), "ptb"),
    Sentence("ikr smh :)".split(), "! G E".split(), "ark"),
]
VOCABS = Vocabularies.build(SENTS)


def make_model(variant: str, **overrides) -> Tagger:
    torch.manual_seed(0)
    cfg = TaggerConfig(
        variant=variant, n_words=len(VOCABS.words), n_chars=len(VOCABS.chars),
        tagsets={h: len(v) for h, v in VOCABS.tags.items()}, word_dim=16, char_dim=8,
        char_filters=4, context_hidden=8, hidden=12, hyper_hidden=6, hyper_embed=3, dropout=0.0,
        **overrides,
    )
    return Tagger(cfg).eval()


@pytest.mark.parametrize("variant", VARIANTS)
def test_scores_have_one_row_per_token_and_one_column_per_tag(variant):
    b = make_batch(SENTS[:2], VOCABS)
    scores = make_model(variant)(b.words, b.types, b.chars, b.lengths, "ptb")
    assert scores.shape == (2, 8, len(VOCABS.tags["ptb"]))


@pytest.mark.parametrize("variant", VARIANTS)
def test_padding_does_not_change_a_sentence_s_scores(variant):
    """A sentence tagged alone and next to a longer one gets the same scores: the
    backward direction must start at each sentence's own last token."""
    model = make_model(variant)
    alone = make_batch([SENTS[1]], VOCABS)
    both = make_batch([SENTS[0], SENTS[1]], VOCABS)
    a = model(alone.words, alone.types, alone.chars, alone.lengths, "ptb")[0]
    b = model(both.words, both.types, both.chars, both.lengths, "ptb")[1, :4]
    torch.testing.assert_close(a, b, atol=1e-5, rtol=1e-4)


def test_reverse_padded_reverses_within_length_and_keeps_padding():
    x = torch.tensor([[1, 2, 3, 0], [4, 5, 0, 0]])
    assert reverse_padded(x, torch.tensor([3, 2])).tolist() == [[3, 2, 1, 0], [5, 4, 0, 0]]


def test_context_vector_is_a_distribution_over_context_dim_classes():
    model = make_model("dcnn", context_dim=7)
    b = make_batch(SENTS[:1], VOCABS)
    x = model.represent(b.words, b.types, b.chars)
    t = model.context(x, (b.types != 0).float())
    assert t.shape == (1, 8, 7)
    torch.testing.assert_close(t.sum(-1), torch.ones(1, 8))


def test_context_vector_sees_only_its_window():
    """Eq. 1: t_i depends on x_{i-r} .. x_{i+r} and nothing else."""
    model = make_model("dcnn", window=1)
    b = make_batch(SENTS[:1], VOCABS)
    x = model.represent(b.words, b.types, b.chars)
    mask = (b.types != 0).float()
    t = model.context(x, mask)
    x2 = x.clone()
    x2[0, 5] += 1.0  # change token 5
    t2 = model.context(x2, mask)
    changed = (t - t2).abs().amax(-1)[0] > 1e-7
    assert changed.tolist() == [False, False, False, False, True, True, True, False]


def test_dcnn_hyper_network_reads_only_the_context_vectors():
    """The DCNN cuts the data path from the main LSTM into the hyper LSTM: the main
    LSTM's recurrent weights get no gradient through the scaling vectors."""
    model = make_model("dcnn")
    b = make_batch(SENTS[:1], VOCABS)
    x = model.represent(b.words, b.types, b.chars)
    t = model.context(x, (b.types != 0).float())
    hyper_out = model.hyper[0](t)[0]
    grads = torch.autograd.grad(hyper_out.sum(), [model.w_h, model.w_x], allow_unused=True)
    assert grads == (None, None)


@pytest.mark.parametrize("variant", VARIANTS)
def test_every_variant_can_fit_a_tiny_batch(variant):
    model = make_model(variant).train()
    b = make_batch(SENTS[:2], VOCABS)
    opt = torch.optim.Adam(model.parameters(), lr=0.05)
    for _ in range(60):
        scores = model(b.words, b.types, b.chars, b.lengths, "ptb")
        loss = torch.nn.functional.cross_entropy(scores.flatten(0, 1), b.tags.flatten())
        opt.zero_grad()
        loss.backward()
        opt.step()
    pred = model.eval()(b.words, b.types, b.chars, b.lengths, "ptb").argmax(-1)
    mask = b.tags != -100
    assert (pred[mask] == b.tags[mask]).float().mean() == 1.0


def test_unknown_variant_is_rejected_with_the_choices():
    with pytest.raises(ValueError, match="dcnn"):
        make_model("transformer")


@pytest.mark.parametrize("variant", VARIANTS)
def test_dev_evaluation_between_training_steps_works(variant):
    """Training evaluates on dev after every epoch; TorchScript step loops that ran with
    autograd must accept that (they refuse inference-mode tensors)."""
    from training.pos.train import accuracy

    model = make_model(variant).train()
    b = make_batch(SENTS[:2], VOCABS)
    for _ in range(2):
        for _ in range(3):
            model(b.words, b.types, b.chars, b.lengths, "ptb").sum().backward()
        assert 0.0 <= accuracy(model, SENTS[:2], VOCABS) <= 1.0


def test_warm_start_continues_from_a_checkpoint_s_weights_and_vocabulary(tmp_path):
    """`train pos --init` trains on from a published fp16 checkpoint: the same scores as the
    file's model, the same vocabulary, and every weight trainable again."""
    from nlp_models.pos.predictor import load_checkpoint, save_checkpoint
    from training.pos.train import warm_start

    save_checkpoint(tmp_path / "tagger.pt", make_model("dcnn"), VOCABS, {})
    served, _, _ = load_checkpoint(tmp_path / "tagger.pt")
    model, vocabs = warm_start(str(tmp_path / "tagger.pt"))
    assert vocabs.words.itos == VOCABS.words.itos
    assert model.training and all(p.requires_grad for p in model.parameters())
    model.eval()
    with torch.no_grad():
        for group in (SENTS[:2], SENTS[2:]):
            b = make_batch(group, VOCABS)
            head = group[0].head
            assert torch.equal(model(b.words, b.types, b.chars, b.lengths, head),
                               served(b.words, b.types, b.chars, b.lengths, head))
    model.train()
    b = make_batch(SENTS[:2], VOCABS)
    model(b.words, b.types, b.chars, b.lengths, "ptb").sum().backward()
    assert all(p.grad is not None for p in model.word_embed.parameters())


def test_warm_start_from_a_missing_file_says_which(tmp_path):
    from training.pos.train import warm_start

    with pytest.raises(SystemExit, match="missing.pt not found"):
        warm_start(str(tmp_path / "missing.pt"))
