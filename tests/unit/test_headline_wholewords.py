"""The whole-word rule of the English headline generator (nlp_models/headline/wholewords.py)."""

from __future__ import annotations

import json

import pytest
import torch

from nlp_models.headline.vocab import EOS
from nlp_models.headline.wholewords import DEAD_END_COST, NUMBER, WholeWords, glued, token_core
from training.paths import REPO_ROOT


class CharPieces:
    """A stand-in vocabulary: token id i decodes to PIECES[i]."""

    PIECES = ["", "", "", "", "", "AOL", "els", " shares", " rise", " Net", "scape", " buys"]

    def __len__(self) -> int:
        return len(self.PIECES)

    def surface(self, token: int) -> str:
        return self.PIECES[token]


RULE = WholeWords(CharPieces(), ["shares", "rise", "aol"])
ART = RULE.article("AOL to buy Netscape for 4.2 billion", [])


@pytest.mark.parametrize(("before", "after", "ended", "allowed"), [
    ("AOL", "AOLels", False, False),          # a word nobody wrote
    ("AOL", "AOL shares", False, True),       # known words
    ("AOL sh", "AOL shar", False, True),      # the beginning of a known word
    ("AOL shar", "AOL shar", True, False),    # ... may not end the headline
    ("AOL shar", "AOL shar rise", False, False),  # ... nor be left unfinished
    ("", "Netsc", False, True),               # the beginning of an article word
    ("AOL", "AOL buys", False, False),        # "buys" is neither known nor in the article
    ("AOL", "AOL 4.2", False, True),          # numbers always pass
    ("AOL", "AOL 4th", False, True),
    ("AOL shares", "AOL shares50", False, False),  # a word glued to digits does not
    ("AOL", "AOL 'shares'", False, True),     # a quoted word is no clitic
])
def test_words_must_be_known_or_from_the_article(before, after, ended, allowed) -> None:
    assert RULE.allows(before, after, ended, ART) is allowed


def test_a_clitic_ends_a_word_and_does_not_stand_alone() -> None:
    rule = WholeWords(CharPieces(), ["shares", "rise", "aol", "s", "d"])
    assert rule.allows("AOL", "AOL's shares", False, rule.article("AOL's bid for Netscape", []))
    assert not rule.allows("AOL", "AOL's shares", False, ART)  # a glued token not in ART
    assert not rule.allows("AOL shares", "AOL shares 's", False, ART)
    assert not rule.allows("AOL", "AOL 'd", False, ART)
    assert not rule.allows_before(" shares rise", "'s shares rise", False, ART)


@pytest.mark.parametrize(("before", "after", "ended", "allowed"), [
    (" shares rise", "AOL shares rise", False, True),     # a whole word in front
    (" shares rise", "OL shares rise", False, True),      # the end of an article word
    (" shares rise", "OL shares rise", True, False),      # ... may not begin the headline
    (" shares rise", "xqz shares rise", False, False),    # no word ends in "xqz"
    ("shares rise", "AOLshares rise", False, False),      # glued to the word after it
])
def test_seq2bf_words_grown_leftwards_must_be_known_too(before, after, ended, allowed) -> None:
    assert RULE.allows_before(before, after, ended, ART) is allowed


def test_block_keeps_only_the_next_tokens_that_form_known_words() -> None:
    logp = torch.full((1, len(CharPieces.PIECES)), -5.0)
    logp[0, 6] = -0.1  # "els" would make "AOLels"
    logp[0, 7] = -1.0  # " shares"
    logp[0, 11] = -2.0  # " buys"
    out = RULE.block(logp, [[5]], [ART])
    assert out[0, 6] == float("-inf") and out[0, 11] == float("-inf")
    assert out[0, 7] == -1.0 and out[0, EOS] == -5.0  # "AOL" is a word: the headline may end


def test_a_stuck_hypothesis_keeps_its_tokens_at_a_cost_below_any_that_keeps_the_rule() -> None:
    logp = torch.full((2, len(CharPieces.PIECES)), float("-inf"))
    logp[0, 6] = -0.1  # row 0 can only write "AOLels"
    logp[1, 7] = -9.0  # row 1 can write " shares", unlikely but a word
    out = RULE.block(logp, [[5], [5]], [ART, ART])
    assert torch.equal(out[0], logp[0] - DEAD_END_COST)  # not killed: a headline still comes
    assert out[1, 7] == -9.0 > out[0].max()


def test_a_headline_cut_at_the_length_limit_ends_on_a_finished_word() -> None:
    logp = torch.full((1, len(CharPieces.PIECES)), -5.0)
    logp[0, 9] = -0.1  # " Net": the beginning of the article's "Netscape"
    logp[0, 7] = -1.0  # " shares"
    growing = RULE.block(logp, [[5]], [ART])
    last = RULE.block(logp, [[5]], [ART], cut=True)  # no token follows this one
    assert growing[0, 9] == -0.1 and last[0, 9] == float("-inf")
    assert growing[0, 7] == last[0, 7] == -1.0


def test_a_seq2bf_headline_cut_with_both_sides_open_ends_on_finished_words() -> None:
    logp = torch.full((1, len(CharPieces.PIECES)), -5.0)
    logp[0, 5] = -0.1  # "AOL" in front
    # the forward side is open, its last word "Net" unfinished: no token in front can
    # finish it, so the row is stuck and pays the dead-end cost
    open_end = RULE.block(logp, [[7, 9]], [ART], backward=[True], closes=[False], cut=True)
    assert open_end[0, 5] == pytest.approx(-0.1 - DEAD_END_COST)
    done_end = RULE.block(logp, [[7, 8]], [ART], backward=[True], closes=[False], cut=True)
    assert done_end[0, 5] == -0.1


# Without the cut rule, these limits ended the shipped models' headlines for this article
# inside a copied word: "Scientists in Sev", "Scientists in Sevast", "Scientists to trans stim".
LONG_WORDS = ("Scientists in Sevastopol reported on Monday that a transcranial stimulation "
              "treatment reduced migraine attacks in a trial of 120 patients. The therapeutic "
              "effect lasted three months, the researchers said.")


@pytest.mark.parametrize(("model", "max_target"), [
    ("headline_generator", 5), ("headline_generator", 6),
    ("constrained_headline_generator", 4)])
def test_the_shipped_english_models_cut_at_their_length_limit_end_on_whole_words(
        model: str, max_target: int) -> None:
    from nlp_models.headline.predictor import HeadlinePredictor
    from training.headline.quality import words
    from training.repository import shipped

    predictor = HeadlinePredictor.load(shipped(model, "headline_en.pt"))
    predictor.model.cfg.max_target = max_target  # cut every hypothesis this short
    (out,) = (predictor.headlines([LONG_WORDS]) if model == "headline_generator" else
              predictor.constrained([LONG_WORDS], ["Scientists"]))
    headline, art = out.candidates[0][0], predictor.words.article(LONG_WORDS, [])
    unfinished = [w for w in words(headline, "en") if not predictor.words.complete(w, art)]
    assert not unfinished, (headline, unfinished)


@pytest.mark.parametrize("model", ["headline_generator", "constrained_headline_generator"])
def test_the_shipped_english_models_write_only_known_words_with_the_rule(model: str) -> None:
    from nlp_models.headline.predictor import HeadlinePredictor
    from training.headline.quality import words
    from training.repository import shipped

    pairs = [json.loads(line) for line in
             (REPO_ROOT / "tests" / "data" / "headline_en_sample.jsonl").read_text().splitlines()]
    known = {w for p in pairs for w in words(p["article"] + " " + p["headline"], "en")}
    predictor = HeadlinePredictor.load(shipped(model, "headline_en.pt"))
    predictor.words = WholeWords(predictor.vocab, known)
    articles = [p["article"] for p in pairs[:4]]
    outputs = (predictor.headlines(articles) if model == "headline_generator" else
               predictor.constrained(articles, [p["phrase"] for p in pairs[:4]]))
    for out in outputs:
        headline = out.candidates[0][0]
        unknown = [w for w in words(headline, "en") if w not in known and not NUMBER.fullmatch(w)]
        assert not unknown, (headline, unknown)


@pytest.mark.parametrize("model", ["headline_generator", "constrained_headline_generator"])
def test_the_rule_holds_for_a_single_greedy_hypothesis(model: str) -> None:
    """One article at beam 1 leaves one hypothesis row: its article words must stay a
    one-row selection (a one-element index once returned the bare element)."""
    from nlp_models.headline.predictor import HeadlinePredictor
    from training.repository import shipped

    pair = json.loads((REPO_ROOT / "tests" / "data" / "headline_en_sample.jsonl")
                      .read_text().splitlines()[0])
    predictor = HeadlinePredictor.load(shipped(model, "headline_en.pt"))
    assert predictor.words is not None  # the shipped English models carry the rule
    (out,) = (predictor.headlines([pair["article"]], beam=1) if model == "headline_generator"
              else predictor.constrained([pair["article"]], [pair["phrase"]], beam=1))
    assert out.candidates and out.candidates[0][0]


def test_finished_names_the_article_lacks_are_counted_once() -> None:
    art = RULE.article("Ford said sales rose in 1990 in Detroit", [])
    cases = [  # (before, after, ended) -> unsupported names finished by this step
        ("Ford says", "Ford says U", False, 0),       # "U" still open
        ("Ford says U", "Ford says U.", False, 1),    # "U" finished; the article has no "u"
        ("Ford says U.", "Ford says U.S", False, 0),  # "S" open; "U" was counted already
        ("Ford sales", "Ford sales rise", True, 0),   # lower case: not a name
        ("Ford sales", "Ford sales in 1987", True, 1),  # a number the article lacks
        ("Ford sales", "Ford sales in 1990", True, 0),
        ("Sales", "Sales rise", True, 0),             # a capital opening the headline
        ("Sales up in", "Sales up in Detroit", True, 0),
        ("Sales up in", "Sales up in Boston", True, 1),
        ("", "NASA", True, 1),                        # all capitals opening it: a name
    ]
    for before, after, ended, expected in cases:
        assert RULE.unsupported(before, after, ended, art) == expected, (before, after)


def test_a_run_of_two_names_the_article_never_writes_side_by_side_counts_once() -> None:
    art = RULE.article("U.S. Senator Olympia J. Snowe today praised the bill.", [])
    cases = [  # (before, after, ended) -> unsupported names and runs finished by this step
        ("U.S. Snowe", "U.S. Snowe praises", False, 1),  # "Snowe" finished after "U.S."
        ("U.S. Snowe praises", "U.S. Snowe praises bill", True, 0),  # counted already
        ("Olympia Snowe", "Olympia Snowe praises", False, 0),  # the initial aside
        ("Sen. Snowe", "Sen. Snowe praises", False, 0),  # "Sen." is not a name
    ]
    for before, after, ended, expected in cases:
        assert RULE.unsupported(before, after, ended, art) == expected, (before, after)


class CityPieces(CharPieces):
    PIECES = ["", "", "", "", "", " Sales", " up", " in", " Boston", " Detroit"]


def test_the_penalty_lowers_tokens_that_finish_an_unsupported_name() -> None:
    rule = WholeWords(CityPieces(), ["sales", "up", "in", "boston", "detroit"],
                      unsupported_penalty=2.0)
    art = rule.article("Sales were up in Detroit", [])
    logp = torch.full((2, len(CityPieces.PIECES)), -5.0)
    logp[:, EOS] = -1.0
    out = rule.block(logp, [[5, 6, 7, 8], [5, 6, 7, 9]], [art, art])
    assert out[0, EOS] == pytest.approx(-3.0)  # ending finishes "Boston": -1 - 2
    assert out[1, EOS] == pytest.approx(-1.0)  # "Detroit" is in the article


def test_a_full_headline_ends_after_three_words_and_repeats_none() -> None:
    rule = WholeWords(CityPieces(), ["sales", "up", "in", "boston"], whole_headline=True)
    art = rule.article("Sales were up in Boston", [])
    assert not rule.allows(" Sales up", " Sales up", True, art)        # two words: too short
    assert rule.allows(" Sales up in", " Sales up in", True, art)
    assert not rule.allows(" Sales up in", " Sales up in Sales", True, art)  # "sales" again
    assert rule.allows(" Sales up", " Sales up up", False, art)        # short words may repeat
    assert RULE.allows("AOL", "AOL", True, ART)  # off unless asked for (tests of other rules)


def test_a_word_is_never_written_twice_in_a_row() -> None:
    """Even short ones: "a a a a", "AT AT AT", "PS. PS." ended run-on headlines."""
    rule = WholeWords(CityPieces(), ["sales", "up", "a", "in", "boston"], whole_headline=True)
    art = rule.article("Sales were up in Boston", [])
    assert rule.allows(" Sales up", " Sales up up", False, art)          # may still grow: "upon"
    assert not rule.allows(" Sales up up", " Sales up up in", False, art)  # finished: twice
    assert not rule.allows(" Sales in a", " Sales in a a", True, art)
    assert not rule.allows(" Sales up. Up.", " Sales up. Up. in", False, art)  # edges aside
    assert rule.allows(" Sales up in a", " Sales up in a", True, art)
    assert rule.allows_before(" up in Boston", "Up up in Boston", False, art)  # open: "cUp"
    assert not rule.allows_before("Up up in Boston", " Up up in Boston", False, art)


def test_a_seq2bf_headline_ends_after_three_words_when_its_second_side_ends() -> None:
    rule = WholeWords(CityPieces(), ["drugs", "rise", "to", "in", "boston"], whole_headline=True)
    art = rule.article("Drugs rise in Boston", [])
    assert not rule.allows_before(" rise", "Drugs rise", True, art)         # ends the headline
    assert rule.allows_before(" rise", "Drugs rise", True, art, closes=False)  # forward goes on
    assert not rule.allows("Drugs rise", "Drugs rise", True, art)
    assert rule.allows("Drugs rise", "Drugs rise", True, art, closes=False)  # backward goes on
    assert rule.allows("Drugs rise in", "Drugs rise in", True, art)


def test_seq2bf_repeats_no_word_on_its_backward_side() -> None:
    rule = WholeWords(CityPieces(), ["drugs", "rise", "to", "in", "boston"], whole_headline=True)
    art = rule.article("Drugs rise in Boston", [])
    assert rule.allows_before(" drugs to rise", "Drugs drugs to rise", False, art)  # open word
    assert not rule.allows_before(" drugs to rise", "Drugs drugs to rise", True, art)
    assert not rule.allows_before(" Drugs to rise", " rise Drugs to rise", False, art)
    assert rule.allows_before(" in Boston", "Drugs rise in Boston", True, art)


GLUE = WholeWords(CharPieces(), ["study", "suggests", "research", "beam", "s", "year", "sec",
                                 "center", "surgery", "di", "one", "u"], whole_headline=True)
GLUE_ART = GLUE.article("A study at the Center, Alzheimer’s research: a 10-year U.S. trial "
                        "(low-cost) by SEC staff in San Diego", [])


@pytest.mark.parametrize(("after", "ended", "allowed"), [
    ("New study suggests's", True, False),             # known words glued by a clitic
    ("New research-beam study", False, False),         # ... by a hyphen
    ("SEC.S. study", False, False),                    # ... by a period
    ("Center'surgery study", False, False),            # ... by an apostrophe
    ("SAN DIone", False, False),                       # capitals run into lower case
    ("Alzheimer's research study", True, True),        # the article's token (’ read as ')
    ("Study of low-cost research", True, True),        # the article's token, edges stripped
    ("A 10-year U.S. study", True, True),              # number compound, abbreviation
    ("A 3rd-quarter U.K. study", True, True),          # the same shapes, not in the article
    ("New study suggests's", False, False),            # an open token that can become nothing
    ("Alzheimer'", False, True),                       # ... or that can
    ("Alzheimer's", False, True),
])
def test_a_full_headline_token_that_glues_words_must_be_the_articles(after, ended,
                                                                     allowed) -> None:
    assert GLUE.tokens_allowed("", after, ended, GLUE_ART) is allowed


SEQ2BF = WholeWords(CharPieces(), ["study", "suggests", "research", "beam", "s", "sec", "u"])


def test_constrained_headlines_keep_the_glued_token_rule_on_their_forward_side() -> None:
    art = SEQ2BF.article("A study by SEC staff", [])
    assert not SEQ2BF.allows("study suggests", "study suggests's", True, art)
    assert not SEQ2BF.allows("SEC", "SEC.S.", True, art)
    assert SEQ2BF.allows("SEC", "SEC U.S.", True, art)


@pytest.mark.parametrize(("before", "after", "ended", "allowed"), [
    (" study", "beam-research study", False, False),   # glued leftwards, finished by a space
    (" study", "w-cost study", False, True),           # open: "low-cost" ends like this
    (" study", "cost-research study", False, False),   # no article token ends like this
    (" study", "low-cost study", False, True),         # the article's token, open
    (" study", "low-cost study", True, True),          # ... and finished by [BOS]
    (" study", "U.S. study", True, True),              # an abbreviation
    ("S. study", "SEC.S. study", True, False),         # Seq2BF's "SEC.S." grown leftwards
])
def test_seq2bf_backward_side_checks_glued_tokens_against_article_token_endings(
        before, after, ended, allowed) -> None:
    art = SEQ2BF.article("A low-cost study by SEC staff", [])
    assert SEQ2BF.tokens_allowed(before, after, ended, art, front=True) is allowed


@pytest.mark.parametrize(("after", "ended", "allowed"), [
    ("Cancer in –.S. drug", True, False),              # Seq2BF's glue around known words
    ("New ;.af study", True, False),
    ("Cancer says U.&.“.”.", True, False),
    ("Study in D .S. trial", True, False),
    ("U.S. study, trial: “low-cost” (research)", True, True),  # a headline's own edges
    ("SEC says U.S.”, study", True, True),
    ("Cancer says U.&", False, True),                  # open: may still end plainly
    ("Cancer says U.&.“.", False, False),              # ... until its run is too long
    ("Cancer in –.Q", False, False),                   # open, but its start is done
    ("Cancer in Q.S.S.S.S study", True, False),        # no abbreviation has 5 letters
    ("Sales up 5%, 4 mln", True, True),
    ("Johnson $s drug", True, False),                  # "$" only where the article has it
    ("Cancer – study", True, True),                    # a dash may stand alone
    ("EVZIO® study", True, True),                      # odd edges, but the article's token
    ("EVZIO®", False, True),                           # ... or the start of one
    ("HETLIOZ® study", True, False),                   # odd edges, not the article's
])
def test_a_finished_token_has_a_headlines_edge_punctuation_or_is_the_articles(
        after, ended, allowed) -> None:
    art = GLUE.article("EVZIO® helps: a low-cost study by SEC staff", [])
    assert GLUE.tokens_allowed("", after, ended, art) is allowed


def test_seq2bf_backward_side_checks_edge_punctuation_once_a_token_is_finished() -> None:
    art = SEQ2BF.article("A study by SEC staff", [])
    assert SEQ2BF.tokens_allowed(" study", ".S. study", False, art, front=True)  # open
    assert not SEQ2BF.tokens_allowed(" study", "–.S. study", True, art, front=True)
    assert not SEQ2BF.tokens_allowed(".S. study", " .S. study", False, art, front=True)
    assert not SEQ2BF.tokens_allowed(".S. study", "–.S. study", False, art, front=True)


@pytest.mark.parametrize(("token", "core"), [
    ("(Alzheimer’s)", "Alzheimer's"),
    ('"U.S."', "U.S"),
    ("😀😀😀", ""),
    ("x" + "😀" * 20_000 + "x", "x" + "😀" * 20_000 + "x"),  # a copied emoji run, glued
])
def test_a_token_core_drops_edge_punctuation_only(token: str, core: str) -> None:
    assert token_core(token) == core


def test_long_runs_of_capitals_or_emoji_are_read_once() -> None:
    """A copied 100,000-character token once made a regex backtrack for minutes."""
    assert not glued("A" * 100_000) and glued("A" * 100_000 + "bc")
    assert glued(token_core("up" + "😀" * 100_000 + "s"))
