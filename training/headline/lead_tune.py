"""Choose an English generator's lead rule for one newsroom, on pairs it did not train on.

Newsrooms differ in how close their headlines stay to the lead: a justice department's
release is titled by its first sentence in title case, a senator's office writes "Sen. Reid:
..." and health news its own phrasing. The rule (nlp_models/headline/lead.py) decides when
the article's lead takes first place from the generated headline; which lead spans it
offers (clause runs, or the lead trimmed to the house's length), how far below the
generated headline's judge score they may be (`margin`) and how much longer spans are
helped (`length_bonus`) are chosen here by ROUGE-L F on the newsroom's held-out pairs.

A constrained (Seq2BF) generator is offered one span instead: the first sentence holding
the phrase, trimmed to the house's length (± 4 words) with the phrase kept, judged by the
Seq2BF model around the phrase (`HeadlinePredictor.judge_constrained`).

Each article is decoded once (beam search without the rule) and each span judged once; the
grid is then scored without decoding again. "off" (no rule) is one of the choices, chosen
as `house_choice` (full) or `constrained_choice` (Seq2BF) chooses.
"""

from __future__ import annotations

import statistics
import sys

from nlp_models.headline.lead import LeadRule
from nlp_models.headline.predictor import HeadlinePredictor
from nlp_models.headline.titles import headline_titles, titled_holding
from training.headline.data import Pair
from training.headline.metrics import ald, rouge

#: How far (words) a newsroom's headlines may stray from the house's mean length (issue 47:
#: "mean length within 2 words"), and what the house's length may cost: ROUGE-L F (0-1).
MAX_LENGTH_GAP = 2.0
MAX_LENGTH_COST = 0.01
#: What the house's length may cost a constrained generator's lead rule: a wider margin
#: shows the article's own sentence holding the phrase where Seq2BF grew a headline around
#: it, and those sentences read better ("Sen. Harry Reid of Nevada is praising Senate's
#: passage of Identity Theft and Restitution Act of 2007" for "Sen. Reid pra on Identity
#: Theft"; 10 of 12 read on Reid's test set) at a few points of ROUGE-L.
CONSTRAINED_LENGTH_COST = 0.04

#: 100: the lead whenever there is one; 2.5-5.0: where constrained rules part (Reid's holdout
#: ALD at 3.0 / 3.5 / 4.0: -2.42, -1.54, -0.05)
MARGINS = (0.0, 0.5, 0.75, 1.0, 1.5, 2.0, 2.5, 3.0, 3.5, 4.0, 5.0, 100.0)
LENGTH_BONUSES = (0.0, 1.5)
SPANS = ("clauses", "trimmed")  # a full generator's; a Seq2BF's: "phrase"


def house_length(pairs: list[Pair]) -> int:
    """The newsroom's median headline length in words."""
    return round(statistics.median(len(p.headline.split()) for p in pairs))


def house_choice(results: list[dict]) -> dict:
    """Of `results` (each with "rougeL" and "ald", the mean length minus the editors'), those
    at most MAX_LENGTH_COST below the best ROUGE-L F; of them the best within MAX_LENGTH_GAP
    words of the house's length, else the closest to it. The house's length is part of its
    style, but not at any price: chosen by length alone, Sen. Reid's constrained lead rule
    came within 2 words by showing the sentence whenever there was one, 8 points below the
    best rule on the held-out pairs."""
    top = max(r["rougeL"] for r in results)
    near = [r for r in results if r["rougeL"] >= top - MAX_LENGTH_COST]
    within = [r for r in near if abs(r["ald"]) <= MAX_LENGTH_GAP]
    return (max(within, key=lambda r: r["rougeL"]) if within
            else min(near, key=lambda r: abs(r["ald"])))


def constrained_choice(results: list[dict]) -> dict:
    """A constrained generator's lead rule: of `results` at most MAX_LENGTH_COST below the
    best ROUGE-L F, the closest to the house's length; if that one is not within
    MAX_LENGTH_GAP words, of those at most CONSTRAINED_LENGTH_COST below, the closest. The
    closest rather than the best within the gap: the newsroom keeps writing after its
    held-out pairs (Sen. Reid's editors wrote 0.7 words longer in the test period than in
    the holdout, Sen. Snowe's 0.9), and rules 1.5 words short on the holdout were 2.6 and
    2.7 short there. (A full generator keeps `house_choice`: aiming at the house's length,
    Sen. Snowe's adapted full generator gave up 0.79 points on its holdout for 0.38 words.)"""
    top = max(r["rougeL"] for r in results)
    for allowed in (MAX_LENGTH_COST, CONSTRAINED_LENGTH_COST):
        closest = min((r for r in results if r["rougeL"] >= top - allowed),
                      key=lambda r: abs(r["ald"]))
        if abs(closest["ald"]) <= MAX_LENGTH_GAP:
            break
    return closest


def tune_lead(predictor: HeadlinePredictor, pairs: list[Pair], beam: int | None = None) -> dict:
    """The best lead rule for `pairs` (or None: no rule) with every choice's ROUGE-L F."""
    target = house_length(pairs)
    constrained = predictor.kind == "seq2bf"
    kinds = ("phrase",) if constrained else SPANS
    served, predictor.lead = predictor.lead, None
    try:
        articles = [p.article for p in pairs]
        decoded = (predictor.constrained(articles, [p.phrase for p in pairs], beam=beam or 3)
                   if constrained else predictor.headlines(articles, beam or 4))
    finally:
        predictor.lead = served
    generated = [h.candidates[0] if h.candidates else ("", 0.0) for h in decoded]
    offered: dict[str, list[tuple[list[str], list[float], float]]] = {s: [] for s in kinds}
    for i, (pair, (text, _)) in enumerate(zip(pairs, generated, strict=True)):
        # the article as the predictor's spans read it at serving
        article = (titled_holding(pair.article, pair.phrase) if constrained
                   else headline_titles(pair.article))
        for spans in kinds:
            candidates = LeadRule(0.0, 0.0, spans, target).candidates(article, pair.phrase)
            if not text:
                judged = [0.0]
            elif constrained:
                judged = predictor.judge_constrained(article, pair.phrase, [text, *candidates])
            else:
                judged = predictor.judge(article, [text, *candidates])
            offered[spans].append((candidates, judged[1:], judged[0]))
        if (i + 1) % 20 == 0:
            print(f"\rlead rule: {i + 1}/{len(pairs)} articles judged", end="",
                  file=sys.stderr, flush=True)
    print(file=sys.stderr)
    references = [p.headline for p in pairs]

    def score(headlines: list[str]) -> dict:
        return {"rougeL": rouge(headlines, references, "en")["rougeL"]["f"],
                "ald": ald(headlines, references, "en")}

    results = [{"rule": None, **score([t for t, _ in generated])}]
    for spans in kinds:
        for margin in MARGINS:
            for bonus in LENGTH_BONUSES:
                rule = LeadRule(margin, bonus, spans, target)
                chosen = []
                for (text, _), (candidates, judged, own) in zip(generated, offered[spans],
                                                                strict=True):
                    best = rule.choose(own, candidates, judged) if text else None
                    chosen.append(text if best is None else candidates[best])
                results.append({"rule": rule.to_state(), **score(chosen)})
    best = constrained_choice(results) if constrained else house_choice(results)
    return {"best": best["rule"], "rougeL": best["rougeL"], "off": results[0]["rougeL"],
            "target": target, "grid": results}
