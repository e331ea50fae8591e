"""Score headline models on a JSONL file of {"article", "headline", "phrase"} lines.

    python -m training evaluate headline --data FILE.jsonl [--model PATH] [--beam 4]
    python -m training evaluate constrained-headline --data FILE.jsonl \
        --strategy seq-b|seq-f|tok-b|tok-f [--model PATH] [--beam 3]
    python -m training baseline headline --data FILE.jsonl        (Lead-1, sentence oracle)
    python -m training baseline constrained-headline --data FILE.jsonl
        (baselines: each with the self-checks below, as are the file's own headlines)

Without --model the newest shipped version of `headline_generator` (or
`constrained_headline_generator`) for the file's language is used; the language is taken
from --lang or guessed from the articles' script. Output: ROUGE-1/2/L P/R/F (metrics.py),
plus success rate and ALD for constrained headlines, and (quality.py) `degenerate` and
`unsupported`: shares of best headlines with an unknown/repeated word or < 3 words, and
with a name, number or place the article lacks. The training vocabulary for `degenerate`
is read from --train-data (default: `<data>/headline/<lang>/train.jsonl`).
`--predictions FILE` writes one JSON line per article: article_id, reference, generated.
"""

from __future__ import annotations

import json
import sys
import time
from pathlib import Path

from nlp_models import registry
from nlp_models.headline.lead import without_dateline
from nlp_models.headline.predictor import HeadlinePredictor, Headlines
from nlp_models.headline.trim import trimmed_lead
from nlp_models.headline.wholewords import WholeWords
from nlp_models.language import resolve_language
from training.headline.data import (
    Pair,
    baseline_sentences,
    first_sentence_with,
    lead_sentence,
    read_pairs,
)
from training.headline.metrics import (
    ald,
    repeated_word_rate,
    rouge,
    rouge_per_article,
    success_rate,
)
from training.headline.quality import degenerate_shares, unsupported_rates, vocabulary_from_files
from training.paths import data_dir
from training.repository import shipped

FULL_MODEL, CONSTRAINED_MODEL = registry.HEADLINE.name, registry.CONSTRAINED.name
CHUNK = 32  # articles per progress update


def shipped_checkpoint(lang: str, model: str) -> Path:
    """The serving version's `headline_<lang>.pt` of Triton model ``model``."""
    return shipped(model, f"headline_{lang}.pt")


def data_language(pairs: list[Pair], lang: str | None) -> str:
    guessed = lang or resolve_language("", " ".join(p.article[:200] for p in pairs[:50]))
    if guessed not in ("en", "zh"):
        raise SystemExit(f"language {guessed!r} is not supported; expected en or zh")
    return guessed


def pairs_with_phrases(data: str) -> list[Pair]:
    """The pairs of `data` that have a phrase; those without one are skipped with a note on
    stderr (a newsroom file may hold a few headlines no phrase was taken from)."""
    pairs = read_pairs(data)
    kept = [p for p in pairs if p.phrase]
    if not kept:
        raise SystemExit(f"no line of {data} has a 'phrase'")
    if len(kept) < len(pairs):
        print(f"skipping {len(pairs) - len(kept)} of {len(pairs)} lines of {data}: no 'phrase'",
              file=sys.stderr)
    return kept


def load_predictor(model: str | None, lang: str, served_as: str, allow_repeats: bool,
                   unsupported_penalty: float | None = None) -> HeadlinePredictor:
    """`unsupported_penalty`: override the checkpoint's (full English generators)."""
    predictor = HeadlinePredictor.load(model or shipped_checkpoint(lang, served_as), threads=2)
    if predictor.lang != lang:
        raise SystemExit(f"{model} is a {predictor.lang!r} model, but the data is {lang!r}")
    if allow_repeats:
        predictor.rule = None
    if unsupported_penalty is not None:
        if not isinstance(predictor.words, WholeWords) or predictor.kind != "generator":
            raise SystemExit("--unsupported-penalty needs an English full generator with a "
                             "whole-word list")
        predictor.words.unsupported_penalty = unsupported_penalty
    return predictor


def best_headlines(predictor: HeadlinePredictor, pairs: list[Pair], beam: int,
                   strategy: str | None = None) -> list[str]:
    """Each article's best candidate: a full headline, or with `strategy` a constrained one
    for the pair's phrase. Progress goes to stderr."""
    outputs: list[Headlines] = []
    for i in range(0, len(pairs), CHUNK):
        chunk = pairs[i : i + CHUNK]
        articles = [p.article for p in chunk]
        outputs += (predictor.headlines(articles, beam) if strategy is None else
                    predictor.constrained(articles, [p.phrase for p in chunk], strategy, beam))
        print(f"\r{len(outputs)}/{len(pairs)} articles", end="", file=sys.stderr, flush=True)
    print(file=sys.stderr)
    return [o.best for o in outputs]


def quality(pairs: list[Pair], predictions: list[str], lang: str,
            train_data: list[str] | None = None, predictions_path: str | None = None,
            known: list[str] | None = None, min_count: int = 1) -> dict:
    """`degenerate` and `unsupported` of the best headlines; writes --predictions."""
    if predictions_path:
        with open(predictions_path, "w", encoding="utf-8") as f:
            for p, generated in zip(pairs, predictions, strict=True):
                f.write(json.dumps({"article_id": p.id, "reference": p.headline,
                                    "generated": generated}, ensure_ascii=False) + "\n")
    return self_checks(pairs, predictions, lang,
                       degenerate_vocabulary(lang, train_data, known, min_count))


def degenerate_vocabulary(lang: str, train_data: list[str] | None = None,
                          known: list[str] | None = None,
                          min_count: int = 1) -> frozenset[str] | None:
    """The training vocabulary of `degenerate`: the words of `train_data` seen at least
    `min_count` times if given, else the model's own (`known`: the whole-word list its
    checkpoint stores), else the shared training split's; None when none is on this machine."""
    if known and not train_data:
        return frozenset(known)
    paths = train_data or default_training_files(lang)
    return vocabulary_from_files(paths, lang, min_count) if paths else None


def self_checks(pairs: list[Pair], headlines: list[str], lang: str,
                vocab: frozenset[str] | None) -> dict:
    """`degenerate` (None without a vocabulary: no shared datasets here, e.g. CI; say so
    rather than guess) and the `unsupported` shares of one headline per pair."""
    articles = [p.article for p in pairs]
    measures = unsupported_rates(headlines, articles, lang)
    if vocab is None:
        return {"degenerate": None, "degenerate_note": "no training vocabulary found; "
                "pass --train-data or set NLP_DATA_DIR", **measures}
    return {**degenerate_shares(headlines, articles, vocab, lang), **measures}


def default_training_files(lang: str) -> list[str]:
    """The shared training split of ``lang``, if the datasets are on this machine."""
    try:
        path = data_dir() / "headline" / lang / "train.jsonl"
    except SystemExit:  # data_dir() explains a missing directory by exiting
        return []
    return [str(path)] if path.exists() else []


def evaluate_headline(data: str, model: str | None = None, beam: int = 4,
                      lang: str | None = None, allow_repeats: bool = False,
                      predictions_path: str | None = None,
                      train_data: list[str] | None = None,
                      unsupported_penalty: float | None = None,
                      length_penalty: float | None = None, min_count: int = 1) -> dict:
    pairs = read_pairs(data)
    lang = data_language(pairs, lang)
    predictor = load_predictor(model, lang, FULL_MODEL, allow_repeats, unsupported_penalty)
    if length_penalty is not None:
        predictor.alpha = length_penalty
    t0 = time.time()
    predictions = best_headlines(predictor, pairs, beam)
    seconds = round(time.time() - t0, 1)
    return {**rouge(predictions, [p.headline for p in pairs], lang), "articles": len(pairs),
            "ald": ald(predictions, [p.headline for p in pairs], lang),
            **_repeats(predictions, lang),
            **quality(pairs, predictions, lang, train_data, predictions_path,
                      predictor.meta.get("whole_words"), min_count),
            "model": predictor.name, "lang": lang, "beam": beam,
            "length_penalty": predictor.alpha, "seconds": seconds,
            "unsupported_penalty": (predictor.words.unsupported_penalty
                                    if isinstance(predictor.words, WholeWords) else 0.0)}


def _repeats(predictions: list[str], lang: str) -> dict:
    return {"repeated_word": repeated_word_rate(predictions)} if lang == "en" else {}


def evaluate_constrained(data: str, strategy: str, model: str | None = None, beam: int = 3,
                         lang: str | None = None, allow_repeats: bool = False,
                         predictions_path: str | None = None,
                         train_data: list[str] | None = None, min_count: int = 1,
                         length_penalty: float | None = None) -> dict:
    pairs = pairs_with_phrases(data)
    lang = data_language(pairs, lang)
    predictor = load_predictor(model, lang, CONSTRAINED_MODEL, allow_repeats)
    if length_penalty is not None:
        predictor.alpha = length_penalty
    t0 = time.time()
    predictions = best_headlines(predictor, pairs, beam, strategy)
    references = [p.headline for p in pairs]
    seconds = round(time.time() - t0, 1)
    return {**rouge(predictions, references, lang), "articles": len(pairs),
            "success_rate": success_rate(predictions, [p.phrase for p in pairs], lang),
            "ald": ald(predictions, references, lang), **_repeats(predictions, lang),
            **quality(pairs, predictions, lang, train_data, predictions_path,
                      predictor.meta.get("whole_words"), min_count),
            "model": predictor.name, "strategy": strategy if predictor.kind == "seq2bf" else "he",
            "lang": lang, "beam": beam, "length_penalty": predictor.alpha,
            "seconds": seconds}


LEAD_WORDS = 8  # English: issue 20's "first eight words of the article"
DATELINE_LEAD_WORDS = 15  # issue 47: "first 15 words after the dateline"


def evaluate_lead(data: str, lang: str | None = None,
                  train_data: list[str] | None = None) -> dict:
    """Lead-1 (the paper's First sentence) and, for English, the first eight words and the
    first fifteen after the dateline, and the lead trimmed to a headline (trim.py); each with
    `evaluate`'s self-checks, which `editors` applies to the file's own headlines (what a
    writer of the house's style scores on them: the floor of `degenerate` and `unsupported`)."""
    pairs = read_pairs(data)
    lang = data_language(pairs, lang)
    references = [p.headline for p in pairs]
    vocab = degenerate_vocabulary(lang, train_data)

    def scores(predictions: list[str]) -> dict:
        return {**rouge(predictions, references, lang),
                "ald": ald(predictions, references, lang),
                **self_checks(pairs, predictions, lang, vocab)}

    result = {**scores([lead_sentence(p.article, lang) for p in pairs]),
              "articles": len(pairs), "model": "lead-1", "lang": lang}
    if lang == "en":
        result["lead_8_words"] = scores([" ".join(p.article.split()[:LEAD_WORDS])
                                         for p in pairs])
        result["lead_15_words_after_dateline"] = scores(
            [" ".join(without_dateline(p.article).split()[:DATELINE_LEAD_WORDS]) for p in pairs])
        result["trimmed_lead"] = scores([trimmed_lead(p.article) for p in pairs])
    best = [best_sentence(p, lang) for p in pairs]
    result["sentence_oracle"] = {**scores([s for s, _ in best]),
                                 "first_sentence_share": round(
                                     sum(i == 0 for _, i in best) / max(len(best), 1), 4)}
    result["editors"] = self_checks(pairs, references, lang, vocab)
    return result


def best_sentence(pair: Pair, lang: str) -> tuple[str, int]:
    """The sentence oracle: the article's sentence with the best ROUGE-L F against the
    reference, and its position (first best on ties; ("", 0) for a blank article). An upper
    bound for any method that returns one sentence of the article as it stands."""
    found = baseline_sentences(pair.article, lang)
    if not found:
        return "", 0
    scored = rouge_per_article(found, [pair.headline] * len(found), lang)
    i = max(range(len(found)), key=lambda j: (scored[j]["rougeL"].fmeasure, -j))
    return found[i], i


def evaluate_phrase_baselines(data: str, lang: str | None = None,
                              train_data: list[str] | None = None) -> dict:
    """Two extractive baselines that, like Seq2BF, always contain the phrase.

    `phrase`: the phrase alone. The test phrases are taken from the reference headlines, so
    this is the ROUGE a constrained model gets for free; a model has to beat it to show it
    adds anything. `lead_with_phrase`: the article's first sentence containing the phrase
    (the constrained Lead-1), or, when no sentence contains it, the phrase followed by
    Lead-1. Each with `evaluate`'s self-checks; `editors`: those of the file's own headlines.
    """
    pairs = pairs_with_phrases(data)
    lang = data_language(pairs, lang)
    references = [p.headline for p in pairs]
    vocab = degenerate_vocabulary(lang, train_data)
    found = [first_sentence_with(p.article, p.phrase, lang) for p in pairs]
    joiner = "" if lang == "zh" else " "
    leads = [f or p.phrase + joiner + lead_sentence(p.article, lang)
             for f, p in zip(found, pairs, strict=True)]

    def scores(predictions: list[str]) -> dict:
        return {**rouge(predictions, references, lang),
                "success_rate": success_rate(predictions, [p.phrase for p in pairs], lang),
                "ald": ald(predictions, references, lang),
                **self_checks(pairs, predictions, lang, vocab)}

    return {"phrase": scores([p.phrase for p in pairs]), "lead_with_phrase": scores(leads),
            "phrase_in_article": round(sum(f is not None for f in found) / len(pairs), 4),
            "editors": self_checks(pairs, references, lang, vocab),
            "articles": len(pairs), "lang": lang}
