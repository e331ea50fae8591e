"""The lead rule (nlp_models/headline/lead.py): which clauses of an English article's first
sentence are candidates, when one goes before the generated headline, and the checkpoint the
`lead` command writes."""

from __future__ import annotations

import json

import pytest
import torch

from nlp_models.headline.compressor import Compressor, CompressorConfig, tokens
from nlp_models.headline.lead import (
    LeadRule,
    first_sentence,
    lead_clauses,
    repeats_a_word,
    without_dateline,
)
from nlp_models.headline.model import HeadlineConfig, HeadlineGenerator
from nlp_models.headline.predictor import HeadlinePredictor, save_checkpoint
from nlp_models.headline.vocab import SubwordVocab
from training.headline.compression import vocabularies
from training.headline.lead import set_lead

ARTICLE = ("SAN DIEGO -- Mayo Clinic researchers have found that an oral drug, apixaban, "
           "prevents clots in patients with cancer. The study followed 300 patients.")


@pytest.mark.parametrize(("article", "news"), [
    ("SILVER SPRING, Md., May 18, 2016 /PRNewswire-USNewswire/ -- The FDA approved a drug.",
     "The FDA approved a drug."),
    ("Newswise — LOS ANGELES (Dec. 5, 2018) - Vascular surgeon Ali Azizzadeh was first.",
     "Vascular surgeon Ali Azizzadeh was first."),
    ("Newswise — Dec. 7, 2018─Vitamin C may reduce the harm.", "Vitamin C may reduce the harm."),
    ("(Chicago) - Eating a meal of seafood helps.", "Eating a meal of seafood helps."),
    ("Rio de Janeiro, June 2 - Brazil cut rates.", "Brazil cut rates."),
    ("ORLANDO--A new study finds that magnets help.", "A new study finds that magnets help."),
    ("CHICAGO --- A cancer drug prevents allergies.", "A cancer drug prevents allergies."),
    ("Rockville, Md. (November 15, 2018)--Hot water may help.", "Hot water may help."),
    ("VANCOUVER, BC (March 26, 2018): A team led by Dr. McGeer found a test.",
     "A team led by Dr. McGeer found a test."),
])
def test_the_dateline_is_cut(article, news):
    assert without_dateline(article) == news


@pytest.mark.parametrize("article", [
    "About 3 million people in the US - a lot - are diagnosed every year.",
    "Apple said - on Monday - that it would buy the firm.",
    "The central bank raised interest rates by a quarter point on Tuesday.",
    "A new biologic agent--the most potent of its kind--shows promise.",
    "Big Blue --a white knight? It is easy to see why.",
    "BIDS POSTED AT THE CLOSE\nCHICAGO CORN - UNC\nPROCESSORS SPOT",
    "Sen. Reid (D-Nev.): The bill passed.",
])
def test_news_that_holds_a_dash_or_a_colon_is_no_dateline(article):
    assert without_dateline(article) == article


@pytest.mark.parametrize("furniture", [
    "Enlarge this image toggle caption Maggie Starbard/NPR Maggie Starbard/NPR",
    "For Immediate Release: February 13, 2018\nEspañol",
    "By MARIA CHENG, AP Medical Writer",
    "Liz Szabo, USA TODAY",
    "Fred R. Conrad/The New York Times",
    "Stuart Bradford\nHealthDay Reporter",
    "Back to previous page",
    "For Immediate Release: March 28, 2017\nEspañol",
    "FILE PHOTO: The Merck logo is seen at a gate in Linden, New Jersey. REUTERS/Eduardo Munoz",
    "A butterfly approaches a teacup in Rome May 13, 2009. REUTERS/Chris Helgren",
])
def test_page_furniture_before_the_news_is_cut(furniture):
    news = "The FDA approved the first blood test for concussion."
    assert without_dateline(f"{furniture}\n{news}") == news
    assert first_sentence(f"{furniture}\nWASHINGTON--{news}") == news


@pytest.mark.parametrize("article", [
    "Nine Members of the Conspiracy Convicted of Terrorism Charges\nA jury convicted nine.",
    "By placing coordinators in critical regions, the department aims to act.\nIt will.",
    "Photo",  # nothing else: kept
    "男子偷垃圾桶被拘留5天\n听说过偷电线的",  # Chinese: no short line of Latin words
    "10月9日，工业和信息化部举办了论坛之一--“信息高速公路助力脱贫”平行分论坛",
])
def test_a_dek_a_sentence_or_a_lone_line_is_no_furniture(article):
    assert without_dateline(article) == article


def test_candidates_are_clause_runs_of_the_first_sentence_without_the_dateline():
    clauses = lead_clauses(ARTICLE)
    assert clauses[0] == "Mayo Clinic researchers have found that an oral drug"
    assert ("Mayo Clinic researchers have found that an oral drug, apixaban, prevents clots "
            "in patients with cancer") in clauses
    assert "apixaban" not in clauses  # under four words
    assert not any("SAN DIEGO" in c or "study followed" in c for c in clauses)
    assert lead_clauses("") == [] and lead_clauses("Too short.") == []


@pytest.mark.parametrize(("article", "first"), [
    ("Monday's workout at Busch Stadium drew a few more St. Louis fans. Next one.",
     "Monday's workout at Busch Stadium drew a few more St. Louis fans."),
    ("The U.S. Agriculture Department said it would buy wheat. Prices rose.",
     "The U.S. Agriculture Department said it would buy wheat."),
    ("He said so. Then he left.", "He said so."),
])
def test_a_break_after_an_abbreviation_ends_no_sentence(article, first):
    assert first_sentence(article) == first


@pytest.mark.parametrize(("text", "repeats"), [
    ("the cat chased the dog", True), ("GM GM recall", True), ("a cat is a dog", False),
    ("Research at Group Health points to bupropion", False), ("Sales sales rise", True),
    ("Alzheimer's now affects 5.5 million Americans", False), ("a 1.1% rise", False),
    ("Oil rose, rose again", True), ("\u201cNo\u201d, no", True),
])
def test_a_clause_that_repeats_a_word_is_no_headline(text, repeats):
    assert repeats_a_word(text) is repeats


def test_no_candidate_repeats_a_word():
    article = "The report said the economy grew, and the bank kept its rates on hold."
    assert lead_clauses(article) == ["and the bank kept its rates on hold"]


def test_a_clause_goes_first_only_within_the_margin():
    clauses = ["one two three four", "one two three four five six seven eight"]
    rule = LeadRule(margin=0.5, length_bonus=0.0)
    assert rule.choose(-1.0, clauses, [-1.4, -2.0]) == 0
    assert rule.choose(-1.0, clauses, [-1.6, -2.0]) is None  # 0.6 below: keep the generated
    assert rule.choose(-1.0, [], []) is None
    # the length bonus evens out the judge's preference for short spans when choosing the
    # clause, but the margin is the judge's alone
    longer = LeadRule(margin=0.5, length_bonus=2.0)
    assert longer.choose(-1.0, clauses, [-1.4, -1.45]) == 1
    assert longer.choose(-1.0, clauses, [-1.4, -1.8]) is None
    assert LeadRule.from_state(rule.to_state()) == rule


CORPUS = [ARTICLE, "The central bank raised interest rates by a quarter point on Tuesday.",
          "Shares of the company rose after it reported higher quarterly profit."] * 30


@pytest.fixture(scope="module")
def generator(tmp_path_factory):
    torch.manual_seed(0)
    vocab = SubwordVocab.build(CORPUS, size=200)
    model = HeadlineGenerator(HeadlineConfig(len(vocab), variant="xl-cc", d_model=32, n_heads=2,
                                             enc_layers=1, dec_layers=1, d_ff=64,
                                             segment_len=16, mem_len=16, max_source=64,
                                             max_target=16))
    path = tmp_path_factory.mktemp("en") / "headline_en.pt"
    save_checkpoint(path, model, vocab, "en", "generator", {"run": "t"})
    return path


def test_the_served_best_headline_follows_the_rule(generator, tmp_path):
    plain = HeadlinePredictor.load(generator)
    generated = plain.headlines([ARTICLE], beam=2, n_best=2)[0].candidates
    for margin, lead_first in ((-100.0, False), (100.0, True)):
        out = tmp_path / f"m{margin}" / "best.pt"
        set_lead(str(generator), margin, 1.0, str(out))
        served = HeadlinePredictor.load(out).headlines([ARTICLE], beam=2, n_best=2)[0]
        assert len(served.candidates) == 2
        if lead_first:
            assert served.best in lead_clauses(ARTICLE)
            assert served.candidates[1] == generated[0]
        else:
            assert served.candidates == generated


def test_the_generator_reads_no_page_furniture(generator):
    predictor = HeadlinePredictor.load(generator)
    scraped = f"Enlarge this image toggle caption Jo Ann/AP Jo Ann/AP\n{ARTICLE}"
    assert (predictor.headlines([scraped], beam=2, n_best=2)[0].candidates
            == predictor.headlines([ARTICLE], beam=2, n_best=2)[0].candidates)
    # nor does its judge, with which `adapt` chooses a lead rule on the held-out pairs
    spans = ["Mayo Clinic researchers have found", "an oral drug prevents clots"]
    assert predictor.judge(scraped, spans) == predictor.judge(ARTICLE, spans)


def test_the_lead_command_records_how_its_file_was_made(generator, tmp_path):
    out = tmp_path / "lead" / "best.pt"
    result = set_lead(str(generator), 0.75, 1.0, str(out))
    assert result["lead"] == {"margin": 0.75, "length_bonus": 1.0, "spans": "clauses",
                              "target": 12}
    assert HeadlinePredictor.load(out).lead == LeadRule(0.75, 1.0)
    record = json.loads((tmp_path / "lead" / "run.json").read_text())
    assert record["command"].startswith("python -m training") and record["derived_from"]
    zh = tmp_path / "zh.pt"
    state = torch.load(generator, weights_only=False)
    torch.save({**state, "lang": "zh"}, zh)
    with pytest.raises(SystemExit, match="serves English full and Seq2BF headlines"):
        set_lead(str(zh), 0.75, 1.0, str(tmp_path / "x.pt"))


def test_compressed_spans_are_the_compressors_deletions_of_the_first_sentence(generator,
                                                                             tmp_path):
    torch.manual_seed(0)
    toks = [tokens(s) for s in CORPUS[:3]]
    words, suffixes = vocabularies([{"tokens": t} for t in toks * 2])
    compressor = Compressor(CompressorConfig(len(words), len(suffixes), word_dim=8,
                                             suffix_dim=4, hidden=8, layers=1), words, suffixes)
    torch.save(compressor.to_state(), tmp_path / "compressor.pt")
    with pytest.raises(SystemExit, match="needs --compressor"):
        set_lead(str(generator), 100.0, 1.0, str(tmp_path / "x.pt"), spans="compressed")
    out = tmp_path / "lead" / "best.pt"
    set_lead(str(generator), 100.0, 1.0, str(out), spans="compressed", target=6,
             compressor=str(tmp_path / "compressor.pt"))
    predictor = HeadlinePredictor.load(out)
    spans = predictor.lead.candidates(ARTICLE, compressor=predictor.compressor)
    lead = tokens(first_sentence(ARTICLE))
    assert spans
    for span in spans:  # each a deletion: the lead's tokens in the lead's order
        rest = iter(lead)
        assert all(t in rest for t in tokens(span))
    assert predictor.headlines([ARTICLE], beam=2, n_best=2)[0].best in spans
    assert any("compressor" in rule for rule in predictor.decoding_rules())


def test_a_month_abbreviation_ends_no_sentence():
    from nlp_models.headline.lead import whole_sentences

    # before: "... Snowe (R-Maine) on Feb." was a sentence, trimmed to "Sen. Olympia J. Snowe Feb"
    assert whole_sentences("Sen. Olympia J. Snowe on Feb. 14 voted for the bill. It passed.") == [
        "Sen. Olympia J. Snowe on Feb. 14 voted for the bill.", "It passed."]


class _FixedCompressor:
    """Stands in for the compressor's output only: the lead rule's own filter is tested."""

    def __init__(self, texts: dict[str, str]):
        self.texts = texts

    def compressions(self, sentence: str, lengths: list[int], phrase: str = "",
                     runs: bool = False) -> dict[str, str]:
        return self.texts


def test_a_compressed_span_that_joins_two_names_or_says_a_word_twice_is_no_candidate():
    article = "Sens. Olympia J. Snowe and Susan Collins announced funding for Maine airports."
    compressor = _FixedCompressor({"12": "Sens. Snowe Collins announced funding for airports",
                                   "12/runs": "Sens. Snowe and Collins announced funding",
                                   "8": "Collins announced funding for Maine Maine",
                                   "model": "funding"})
    rule = LeadRule(0.75, 1.5, "compressed", 12)
    assert rule.candidates(article, compressor=compressor) == [
        "Sens. Snowe and Collins announced funding"]
    with pytest.raises(ValueError, match="need the checkpoint's compressor"):
        rule.candidates(article)
