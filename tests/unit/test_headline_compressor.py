"""The learned deletion compressor: its pairs, its selection of words, and that it learns."""

from __future__ import annotations

import itertools
import math
import random

import torch

from nlp_models.headline.compressor import (
    Compressor,
    CompressorConfig,
    detokenize,
    keep_marginals,
    labelling_score,
    log_partition,
    noun_groups,
    phrase_mask,
    select,
    tokens,
    word_chain,
)
from training.headline.compression import CompressionTask, align, harvest, vocabularies

LEAD = ("A Harvey, Illinois, man was sentenced to 63 months in prison today for his role in a "
        "stolen identity refund scheme.")
HEADLINE = "Harvey, Illinois, man sentenced to 63 months in prison for role in stolen identity " \
           "refund scheme"


def kept(sentence: list[str], mask: list[int]) -> str:
    return detokenize([t for t, k in zip(sentence, mask, strict=True) if k])


def test_tokens_keep_abbreviations_numbers_and_inner_hyphens_whole():
    assert tokens("The U.S. paid $5.5 million (R-Maine), didn't it?") == [
        "The", "U.S.", "paid", "$5.5", "million", "(", "R-Maine", ")", ",", "didn't", "it",
        "?"]


def test_detokenize_writes_marks_against_their_words_and_none_at_the_ends():
    assert detokenize([",", "Harvey", ",", "Illinois", ",", "man", "(", "R-Maine", ")", "."]) \
        == "Harvey, Illinois, man (R-Maine)"


def test_the_alignment_of_an_editors_deletion_keeps_exactly_the_headlines_words():
    sentence = tokens(LEAD)
    mask, coverage = align(sentence, tokens(HEADLINE))
    assert kept(sentence, mask) == HEADLINE
    assert coverage == 1.0


def test_inflections_match_through_their_stems_and_missing_words_lower_the_coverage():
    sentence = tokens("N-D Resources Inc said it agreed in principle to acquire Atoka Gas.")
    mask, coverage = align(sentence, tokens("N-D Resources agrees to acquire Atoka"))
    assert kept(sentence, mask) == "N-D Resources agreed to acquire Atoka"
    assert coverage == 1.0
    _, coverage = align(sentence, tokens("N-D Resources agrees to buy Atoka pipeline"))
    assert coverage == 4 / 6  # N-D, Resources, agrees (as agreed), Atoka; not buy, pipeline


def test_harvest_takes_the_first_sentence_that_holds_the_headline_and_refuses_the_rest():
    article = f"WASHINGTON - The weather was fine on Monday. {LEAD} He will appeal."
    pair = harvest({"id": "x", "source": "doj", "headline": HEADLINE, "article": article})
    assert pair is not None and pair["position"] == 1
    assert kept(pair["tokens"], pair["keep"]) == HEADLINE
    assert harvest({"id": "y", "source": "doj", "headline": "Senate passes farm bill",
                    "article": article}) is None


def test_select_keeps_the_n_likeliest_words_in_sentence_order_and_a_forced_phrase():
    toks = tokens("Smith , the mayor , resigned on Friday .")
    logits = [3.0, 1.0, -2.0, -0.5, 1.0, 2.0, -3.0, -0.7, -4.0]
    assert select(toks, logits, [False] * 9, 2) == ["Smith", "resigned"]
    assert select(toks, logits, [False] * 9, 4) == ["Smith", "mayor", ",", "resigned",
                                                    "Friday"]
    assert select(toks, logits, [False] * 9, None) == ["Smith", "resigned"]
    forced = phrase_mask(toks, "Friday")
    assert select(toks, logits, forced, 2) == ["Smith", "Friday"]
    assert select(toks, logits, forced, 0) == ["Friday"]


def test_a_run_gap_makes_the_compression_fewer_runs_of_the_sentence():
    toks = tokens("Smith , the mayor , resigned on Friday .")
    logits = [3.0, 1.0, -2.0, -0.5, 1.0, 2.0, -3.0, -0.7, -4.0]
    assert select(toks, logits, [False] * 9, 2, gap=0.0) == ["Smith", "resigned"]
    assert select(toks, logits, [False] * 9, 2, gap=10.0) == ["mayor", ",", "resigned"]
    # as many words as pay: "Smith" alone, as a second run costs more than "resigned" adds
    assert select(toks, logits, [False] * 9, None, gap=3.0) == ["Smith"]


def _switches(toks: list[str], cheap_cuts: set[int]) -> list[list[float]]:
    """Per token [drop→drop, drop→keep, keep→drop, keep→keep]: switching labels at word i
    (from the previous word's, or from "drop" before the first) costs 5, except at
    `cheap_cuts` and at the first word."""
    return [[0.0, 0.0, 0.0, 0.0] if i in cheap_cuts or i == 0 else [0.0, -5.0, -5.0, 0.0]
            for i in range(len(toks))]


def test_switch_costs_delete_whole_phrases_where_the_words_alone_scatter():
    toks = tokens("Salt Lake City man sentenced to prison for fraud")
    logits = [2.0, -1.0, 1.0, 1.5, 2.5, -0.5, 1.8, -2.0, 1.2]
    # words alone: the four likeliest, wherever they are
    assert select(toks, logits, [False] * 9, 4) == ["Salt", "man", "sentenced", "prison"]
    # cuts cost little only between phrases: before "man" and before "for"
    switches = _switches(toks, {3, 7})
    assert select(toks, logits, [False] * 9, 4, switches=switches) == \
        ["man", "sentenced", "to", "prison"]
    assert select(toks, logits, [False] * 9, 3, switches=switches) == ["Salt", "Lake", "City"]


def test_noun_groups_end_at_their_last_noun_and_a_determiner_after_a_noun_opens_another():
    # A Utah county man was sentenced to prison for filing fraudulent tax returns
    tags = ["DT", "NNP", "NN", "NN", "VBD", "VBN", "TO", "NN", "IN", "VBG", "JJ", "NN", "NNS"]
    groups = noun_groups(tags)
    assert [(g.number, g.role) for g in groups[:4]] == [
        (0, "modifier"), (0, "modifier"), (0, "modifier"), (0, "head")]
    assert groups[4].number == -1 and groups[7].role == "head"
    assert groups[6].role == groups[8].role == "preposition"
    assert [g.role for g in groups[10:]] == ["modifier", "modifier", "head"]
    # "the company the agency": two groups; "$14 million": a number heads its own
    assert [g.number for g in noun_groups(["DT", "NN", "DT", "NN"])] == [0, 0, 1, 1]
    assert noun_groups(["CD", "CD"])[1].role == "head"
    assert noun_groups(["JJ", "VBD"])[0].number == -1  # an adjective alone is no group
    # a participle after a determiner and before a noun is a group word; after a verb not
    assert [g.number for g in noun_groups(["DT", "VBN", "NN", "NN"])] == [0, 0, 0, 0]
    assert [g.number for g in noun_groups(["VBD", "VBN", "NNP"])] == [-1, -1, 0]
    # "Sen. Olympia J. Snowe": one group, its periods inside it
    sen = noun_groups(["NNP", ".", "NNP", "NNP", ".", "NNP", "VBD"])
    assert [g.number for g in sen] == [0, -1, 0, 0, -1, 0, -1] and sen[5].role == "head"


UTAH = tokens("A Utah man was sentenced to prison for filing fraudulent tax returns")
UTAH_TAGS = ["DT", "NNP", "NN", "VBD", "VBN", "TO", "NN", "IN", "VBG", "JJ", "NN", "NNS"]


def test_a_kept_modifier_brings_its_head():
    logits = [-3.0, 3.0, -1.0, -2.0, 3.0, 2.0, 2.0, -2.0, -2.0, 1.5, 1.6, 1.4]
    free = [False] * len(UTAH)
    assert detokenize(select(UTAH, logits, free, 5)) == "Utah sentenced to prison tax"
    assert detokenize(select(UTAH, logits, free, 5, groups=noun_groups(UTAH_TAGS))) == \
        "Utah man sentenced to prison"


def test_a_run_starts_inside_a_noun_group_only_after_dropping_what_could_modify_it():
    toks = tokens("Smith was sentenced for filing false returns")
    logits = [3.0, -2.0, 3.0, -2.0, -2.5, 1.0, 1.5]
    groups = noun_groups(["NNP", "VBD", "VBN", "IN", "VBG", "JJ", "NNS"])
    assert select(toks, logits, [False] * 7, 3) == ["Smith", "sentenced", "returns"]
    assert select(toks, logits, [False] * 7, 3, groups=groups) == ["Smith", "was", "sentenced"]
    toks = tokens("The agency said the company profits rose")
    logits = [-3.0, 2.0, -3.0, -3.0, -1.0, 2.0, 2.0]
    groups = noun_groups(["DT", "NN", "VBD", "DT", "NN", "NNS", "VBD"])
    assert select(toks, logits, [False] * 7, 3) == ["agency", "profits", "rose"]
    assert select(toks, logits, [False] * 7, 3, groups=groups) == ["company", "profits", "rose"]
    # a determiner and a participle dropped: the group still reads whole
    toks = tokens("Sessions issued the following statement")
    groups = noun_groups(["NNS", "VBD", "DT", "VBG", "NN"])
    assert select(toks, [3.0, 2.0, -2.0, -2.0, 1.0], [False] * 5, 3, groups=groups) == \
        ["Sessions", "issued", "statement"]
    # ... but no run starts at a participle of a group after dropping a noun and a preposition
    toks = tokens("Sessions issued statement on the attempted attack")
    groups = noun_groups(["NNS", "VBD", "NN", "IN", "DT", "VBN", "NN"])
    logits = [3.0, 2.0, -1.0, -2.0, -3.0, 1.1, 1.0]
    assert select(toks, logits, [False] * 7, 4) == ["Sessions", "issued", "attempted", "attack"]
    chosen = select(toks, logits, [False] * 7, 4, groups=groups)
    assert "attempted" not in chosen or "the" in chosen


def test_a_kept_preposition_keeps_the_word_after_it():
    toks = tokens("Smith was sentenced to prison")
    logits = [3.0, -2.0, 3.0, 2.0, -2.5]
    groups = noun_groups(["NNP", "VBD", "VBN", "TO", "NN"])
    assert select(toks, logits, [False] * 5, 3) == ["Smith", "sentenced", "to"]
    assert select(toks, logits, [False] * 5, 3, groups=groups) == ["Smith", "was", "sentenced"]


def test_a_length_the_groups_cannot_reach_falls_back_to_the_unconstrained_choice():
    toks = tokens("Utah man")
    groups = noun_groups(["NNP", "NN"])
    # one word: "Utah" alone would drop its head, "man" alone is allowed
    assert select(toks, [3.0, 1.0], [False, False], 1, groups=groups) == ["man"]
    # "Utah" forced and one word: no labelling keeps the head too, so the model's own choice
    assert select(toks, [3.0, 1.0], phrase_mask(toks, "Utah"), 1, groups=groups) == ["Utah"]


def _chain(words: int) -> tuple[torch.Tensor, torch.Tensor]:
    torch.manual_seed(1)
    return torch.randn(1, words), torch.randn(1, words, 2, 2)


def test_the_chains_partition_and_marginals_are_those_of_every_labelling_enumerated():
    logits, switch = _chain(4)
    words = torch.ones(1, 4, dtype=torch.bool)
    unary, sw, mask, _ = word_chain(logits, switch, words)
    labellings = [torch.tensor([list(y)]) for y in itertools.product((0, 1), repeat=4)]
    scores = torch.stack([labelling_score(unary, sw, mask, y)[0] for y in labellings])
    assert torch.allclose(log_partition(unary, sw, mask)[0], torch.logsumexp(scores, 0))
    probability = torch.softmax(scores, 0)
    kept_first = sum(p for p, y in zip(probability, labellings, strict=True) if y[0, 0] == 1)
    odds = keep_marginals(logits, switch, words)[0, 0]
    assert math.isclose(torch.sigmoid(odds).item(), kept_first.item(), rel_tol=1e-4)


def test_marks_stay_outside_the_chain_and_keep_their_own_logit():
    logits, switch = _chain(3)
    words = torch.tensor([[True, False, True]])
    odds = keep_marginals(logits, switch, words)
    assert odds[0, 1] == logits[0, 1]
    unary, _, mask, at = word_chain(logits, switch, words)
    assert at[0].tolist()[:2] == [0, 2] and mask[0].tolist()[:2] == [True, True]


def test_phrase_mask_marks_the_phrases_first_occurrence_only():
    assert phrase_mask(tokens("Apple sues Apple Corps"), "Apple Corps") == \
        [False, False, True, True]
    assert phrase_mask(tokens("Apple sues"), "Google") == [False, False]


def _toy_pairs(n: int, rng: random.Random) -> list[dict]:
    """Sentences whose gold compression is their capitalised words."""
    pool = ["Acme", "Boston", "Carter", "Delta", "the", "said", "on", "quietly", "a", "new"]
    pairs = []
    for _ in range(n):
        toks = [rng.choice(pool) for _ in range(rng.randint(5, 12))]
        pairs.append({"tokens": toks, "keep": [int(t[0].isupper()) for t in toks]})
    return pairs


def test_the_compressor_learns_a_deletion_rule_and_ships_as_fp16_with_the_same_choices():
    torch.manual_seed(0)
    rng = random.Random(0)
    train, dev = _toy_pairs(256, rng), _toy_pairs(64, rng)
    words, suffixes = vocabularies(train)
    model = Compressor(CompressorConfig(len(words), len(suffixes), word_dim=16, suffix_dim=8,
                                        hidden=16, layers=1, dropout=0.0), words, suffixes)
    task = CompressionTask(model, train, dev, batch_size=16)
    opt = torch.optim.Adam(model.parameters(), lr=1e-2)
    assert task.evaluate()[1] < 0.9
    for _ in range(3):
        for batch in task.batches(rng):
            opt.zero_grad()
            task.loss(batch, rng)["loss"].backward()
            opt.step()
    assert task.evaluate()[1] > 0.98
    assert model.switch.weight.abs().sum() > 0  # the chain's switch scores were trained
    shipped = Compressor.from_state(model.to_state())
    sentence = "the Acme said on Boston quietly"
    assert shipped.compressions(sentence, [1])["model"] == "Acme Boston"
    assert shipped.compressions(sentence, [1], phrase="quietly")["1"] == "quietly"
    # told the tags, it does not glue two names across the words it deletes
    tags = {"the": "DT", "Acme": "NNP", "said": "VBD", "on": "IN", "Boston": "NNP",
            "quietly": "RB"}
    assert shipped.compressions(sentence, [2])["2"] == "Acme Boston"
    grouped = shipped.compressions(sentence, [2], tagger=lambda toks: [tags[t] for t in toks])
    assert grouped["2"] in {"the Acme", "Acme said", "said Boston", "on Boston",
                            "Boston quietly", "Acme quietly", "said quietly"}
