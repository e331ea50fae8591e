"""The compressor measured alone, on sources it never saw, against trim.py's rules.

    python -m training evaluate compressor --data data/compression --model runs/compressor/best.pt
        [--source doj ...] [--show 20] [--noun-groups]

Per held-out source (`compression.build` wrote its files), two measures:

* **harvested** (`test_<source>.jsonl`): the sentences whose deletion is the editors'
  headline. Token F1 of the keep mask (the compressor at its own length, trim.py's trim of the
  same sentence, each aligned to the sentence as the pairs were), ROUGE-L F against the
  headline, and length in words.
* **lead** (`lead_<source>.jsonl`): every pair of the same period, compressed from the
  article's first sentence as served (no choice of sentence): ROUGE-L F and length.

Systems: the compressor at its own length (`model`) and at the house's mean length
(`model@house`; `model@house/runs`: in few runs of the sentence, `compressor.RUN_GAP`),
trim.py at its served target (`trim@12`) and at the house length (`trim@house`), the first
house-length words (`first_words`) and the whole sentence. Harvested rows also give the
mean number of runs of the sentence's words a system keeps (1: one stretch; more reads
choppier). The last stdout line is JSON; `--show N` prints N harvested compressions side
by side.
"""

from __future__ import annotations

import json
import sys
from pathlib import Path

import torch

from nlp_models.headline.compressor import (
    RUN_GAP,
    Compressor,
    Tagger,
    detokenize,
    is_word,
    noun_groups,
    tokens,
    word_count,
)
from nlp_models.headline.lead import first_sentence
from nlp_models.headline.trim import TARGET_WORDS, _trimmed
from training.headline.compression import align, read_jsonl
from training.headline.metrics import rouge_per_article
from training.headline.newsrooms import EN_NEWSROOMS


def ptb_tagger() -> Tagger:
    """Tokens -> Penn Treebank tags, by the serving POS tagger in process."""
    from nlp_models.pos.predictor import PosPredictor
    from training.pos.evaluate import shipped_checkpoint

    predictor = PosPredictor(shipped_checkpoint())
    return lambda toks: predictor.tag_tokens([toks])[0]["ptb"]


def _compress(model: Compressor, sentences: list[str], house: int,
              tagger: Tagger | None = None) -> dict[str, list[str]]:
    """Each sentence compressed by `model`; with `tagger`, also at the house length with
    its noun groups kept whole or with their heads (`/groups`)."""
    toks = [tokens(s) for s in sentences]
    out: dict[str, list[str]] = {"model": [], "model@house": [], "model@house/runs": []}
    if tagger:
        out |= {"model@house/groups": [], "model@house/runs/groups": []}
    for t, scored in zip(toks, model.scores(toks), strict=True):
        forced = [False] * len(t)
        out["model"].append(detokenize(scored.select(t, forced, None, model.gap)))
        out["model@house"].append(detokenize(scored.select(t, forced, house, model.gap)))
        out["model@house/runs"].append(detokenize(scored.select(t, forced, house, RUN_GAP)))
        if tagger:
            groups = noun_groups(tagger(t)) if t else None
            out["model@house/groups"].append(
                detokenize(scored.select(t, forced, house, model.gap, groups)))
            out["model@house/runs/groups"].append(
                detokenize(scored.select(t, forced, house, RUN_GAP, groups)))
    return out


def _systems(model: Compressor, sentences: list[str], articles: list[str], house: int,
             tagger: Tagger | None = None) -> dict[str, list[str]]:
    out = _compress(model, sentences, house, tagger)
    out["trim@12"] = [_trimmed(s, a, TARGET_WORDS) if s else "" for s, a in
                      zip(sentences, articles, strict=True)]
    out["trim@house"] = [_trimmed(s, a, house) if s else "" for s, a in
                         zip(sentences, articles, strict=True)]
    out["first_words"] = [detokenize(_first_words(tokens(s), house)) for s in sentences]
    out["sentence"] = sentences
    return out


def _first_words(toks: list[str], n: int) -> list[str]:
    words = [i for i, t in enumerate(toks) if is_word(t)][:n]
    return toks[: words[-1] + 1] if words else []


def _mask_f1(pairs: list[dict], texts: list[str]) -> tuple[float, float]:
    """(token F1 of each text's keep mask, aligned to its sentence, against the gold masks;
    mean runs of the sentence's words each text keeps: 1 is a contiguous stretch, more
    read choppier)."""
    tp = pred = gold = runs = 0
    for p, text in zip(pairs, texts, strict=True):
        mask, _ = align(p["tokens"], tokens(text))
        tp += sum(m and g for m, g in zip(mask, p["keep"], strict=True))
        pred, gold = pred + sum(mask), gold + sum(p["keep"])
        kept = [m for m, t in zip(mask, p["tokens"], strict=True) if is_word(t)]
        runs += sum(1 for i, m in enumerate(kept) if m and (i == 0 or not kept[i - 1]))
    precision, recall = tp / max(pred, 1), tp / max(gold, 1)
    return (round(100 * 2 * precision * recall / max(precision + recall, 1e-9), 2),
            round(runs / max(len(pairs), 1), 2))


def _scores(systems: dict[str, list[str]], references: list[str]) -> dict[str, dict]:
    out = {}
    for name, texts in systems.items():
        rl = [s["rougeL"].fmeasure for s in rouge_per_article(texts, references, "en")]
        out[name] = {"rougeL": round(100 * sum(rl) / len(rl), 2),
                     "words": round(sum(map(word_count, texts)) / len(texts), 1)}
    out["editors"] = {"words": round(sum(map(word_count, references)) / len(references), 1)}
    return out


def evaluate(model_path: Path, data: Path, sources: list[str], show: int = 0,
             tagger: Tagger | None = None) -> dict:
    torch.set_num_threads(1)
    model = Compressor.from_state(torch.load(model_path, weights_only=False))
    result: dict = {"model": str(model_path)}
    for source in sources:
        test = read_jsonl(data / f"test_{source}.jsonl")
        house = round(test[0]["house_words"])
        systems = _systems(model, [p["sentence"] for p in test], [p["article"] for p in test],
                           house, tagger)
        harvested = _scores(systems, [p["headline"] for p in test])
        for name in [n for n in systems if n != "sentence"]:
            harvested[name]["keep_f1"], harvested[name]["runs"] = _mask_f1(test, systems[name])
        leads = read_jsonl(data / f"lead_{source}.jsonl")
        lead_systems = _systems(model, [first_sentence(r["article"]) for r in leads],
                                [r["article"] for r in leads], house, tagger)
        result[source] = {"house_words": house, "harvested": {"n": len(test), **harvested},
                          "lead": {"n": len(leads),
                                   **_scores(lead_systems, [r["headline"] for r in leads])}}
        print(f"{source}: {json.dumps(result[source])}", file=sys.stderr, flush=True)
        for p, i in zip(test[:show], range(show), strict=False):
            print(f"\n[{source} {p['id']}]\n  sentence: {p['sentence']}\n  editors:  "
                  f"{p['headline']}\n  trim@12:  {systems['trim@12'][i]}\n  model:    "
                  f"{systems['model'][i]}\n  model@{house}: {systems['model@house'][i]}\n"
                  f"  model@{house}/runs: {systems['model@house/runs'][i]}", file=sys.stderr)
            if tagger:
                print(f"  model@{house}/groups: {systems['model@house/groups'][i]}\n"
                      f"  model@{house}/runs/groups: {systems['model@house/runs/groups'][i]}",
                      file=sys.stderr)
    return result


DEFAULT_SOURCES = list(EN_NEWSROOMS)
