"""Train the clause picker (nlp_models/headline/picker.py) and store it in a copy of a
Chinese generator checkpoint, which then serves the picked span as its best headline.

    python -m training picker --config training/configs/picker_zh.toml \
        --checkpoint model_repository/headline_generator/N/headline_zh.pt \
        --out runs/picker_zh/best.pt

Each article's candidates are labelled with their ROUGE-L F against the reference; the
loss is the cross-entropy between the picker's softmax over the candidates and
softmax(ROUGE-L F / tau), one article per step (Adam). After every epoch the picker is
scored on each dev set (the ROUGE-L F of its picks); the epoch with the best mean is kept,
as for the generators (training/headline/train.py: in-distribution dev and a held-out
source, so that selection does not reward what only the training source does). The judge
weight (picker.py) is then chosen the same way from JUDGE_WEIGHTS: on each dev article the
generator of --checkpoint scores the picker's shortlist.
"""

from __future__ import annotations

import json
import random
import sys
import time
import tomllib
from dataclasses import dataclass
from pathlib import Path

import torch

from nlp_models.headline.picker import RULES, SHORTLIST, Candidate, ClausePicker, features
from nlp_models.headline.predictor import HeadlinePredictor
from training.headline.metrics import rouge_per_article
from training.paths import REPO_ROOT, data_dir
from training.provenance import write_derived

JUDGE_WEIGHTS = (0.0, 0.25, 0.5, 1.0, 2.0)


@dataclass
class Article:
    text: str
    candidates: list[Candidate]
    dense: torch.Tensor
    buckets: list[list[int]]
    scores: list[float]  # each candidate's ROUGE-L F against the reference
    reference: str


def read_set(spec: dict) -> list[tuple[str, str]]:
    """(article, headline) pairs of one config entry: `shared` (relative to the shared data
    directory) or `path` (relative to the repository); optional `source` (keep only that
    source), `first` (the first N) or `sample` (N drawn with seed 0)."""
    path = data_dir() / spec["shared"] if "shared" in spec else REPO_ROOT / spec["path"]
    with open(path, encoding="utf-8") as f:
        rows = [json.loads(line) for line in f if line.strip()]
    pairs = [(r["article"], r["headline"]) for r in rows
             if "source" not in spec or r.get("source") == spec["source"]]
    if "sample" in spec:
        pairs = random.Random(0).sample(pairs, min(spec["sample"], len(pairs)))
    return pairs[: spec["first"]] if "first" in spec else pairs


def prepare(pairs: list[tuple[str, str]], picker: ClausePicker, name: str) -> list[Article]:
    out, start = [], time.time()
    for k, (article, headline) in enumerate(pairs, 1):
        sents, cands = picker.candidates(article)
        if cands:
            dense, buckets = features(sents, cands)
            scores = [s["rougeL"].fmeasure for s in
                      rouge_per_article([c.text for c in cands], [headline] * len(cands), "zh")]
            out.append(Article(article, cands, dense, buckets, scores, headline))
        if k % 2000 == 0 or k == len(pairs):
            print(f"{name}: {k}/{len(pairs)} articles prepared ({time.time() - start:.0f} s)",
                  file=sys.stderr, flush=True)
    return out


def dev_score(picker: ClausePicker, articles: list[Article], total: int) -> float:
    """Mean ROUGE-L F of the picks over all `total` articles (one without a candidate
    scores 0, as an empty headline would)."""
    with torch.no_grad():
        picked = [a.scores[int(picker(a.dense, a.buckets).argmax())] for a in articles]
    return sum(picked) / max(total, 1)


def fit_picker(train_pairs: list[tuple[str, str]], dev_pairs: dict[str, list[tuple[str, str]]],
               tc: dict, checkpoint: str) -> tuple[ClausePicker, list[dict], int, int]:
    """A clause picker trained on (article, headline) pairs, its epoch chosen by the mean
    ROUGE-L F of its picks on the dev sets, then its judge weight with the generator of
    `checkpoint`. Returns the picker, the curve (the judge choice last), the best epoch and
    the number of training articles that had candidates."""
    torch.manual_seed(tc["seed"])
    torch.set_num_threads(tc.get("threads", 1))
    picker = ClausePicker(tc.get("max_chars"))
    train = prepare(train_pairs, picker, "train")
    devs = {name: (prepare(pairs, picker, name), len(pairs)) for name, pairs in dev_pairs.items()}
    optimizer = torch.optim.Adam(picker.parameters(), lr=tc["lr"])
    rng = random.Random(tc["seed"])
    best, curve = (-1.0, None, 0), []
    for epoch in range(1, tc["epochs"] + 1):
        picker.train()
        rng.shuffle(train)
        for a in train:
            target = torch.softmax(torch.tensor(a.scores) / tc["tau"], 0)
            loss = -(target * picker(a.dense, a.buckets).log_softmax(0)).sum()
            optimizer.zero_grad()
            loss.backward()
            optimizer.step()
        picker.eval()
        dev = {name: round(dev_score(picker, arts, n), 4) for name, (arts, n) in devs.items()}
        mean = sum(dev.values()) / len(dev)
        curve.append({"epoch": epoch, "dev": dev, "mean": round(mean, 4)})
        print(json.dumps(curve[-1]), file=sys.stderr, flush=True)
        if mean > best[0]:
            best = (mean, {k: v.clone() for k, v in picker.state_dict().items()}, epoch)
    picker.load_state_dict(best[1])
    picker.eval()
    judged = choose_judge_weight(picker, checkpoint, devs)
    picker.judge_weight = judged["judge_weight"]
    return picker, curve + [judged], best[2], len(train)


def train_picker(config: str, checkpoint: str, out: str) -> dict:
    cfg = tomllib.loads(Path(config).read_text())
    train = [pair for spec in cfg["data"]["train"] for pair in read_set(spec)]
    devs = {spec["name"]: read_set(spec) for spec in cfg["data"]["dev"]}
    picker, curve, epoch, articles = fit_picker(train, devs, cfg["train"], checkpoint)
    return _save(checkpoint, out, picker, config, cfg, curve, epoch, articles)


def set_rules(checkpoint: str, rules: int, out: str) -> dict:
    """A copy of a checkpoint whose clause picker builds its candidates under `rules`
    (nlp_models/headline/picker.py, RULES), its weights and judge weight kept. The rules
    decide which spans are candidates, not how one is scored, so a picker trained under
    older rules can serve newer ones; measure it before publishing (headline_generator 17:
    docs/models/headline.md, "No bylines, no broken quotes")."""
    if not 1 <= rules <= RULES:
        raise SystemExit(f"--rules {rules}: the picker knows rules 1 to {RULES}")
    state = torch.load(checkpoint, map_location="cpu", weights_only=False)
    picker = state.get("meta", {}).get("picker")
    if picker is None:
        raise SystemExit(f"{checkpoint} has no clause picker (train one: python -m training "
                         "picker --config ... --checkpoint ... --out ...)")
    before = picker.get("rules", 1)
    path = write_derived(checkpoint, out, state, {"picker": {**picker, "rules": rules}},
                         rules={"before": before, "after": rules})
    return {"checkpoint": str(path), "rules": rules, "rules_before": before}


def choose_judge_weight(picker: ClausePicker, checkpoint: str,
                        devs: dict[str, tuple[list[Article], int]]) -> dict:
    """The JUDGE_WEIGHTS entry with the best mean dev ROUGE-L F of the judged picks."""
    generator = HeadlinePredictor.load(checkpoint)
    dev: dict[float, dict[str, float]] = {w: {} for w in JUDGE_WEIGHTS}
    for name, (articles, total) in devs.items():
        sums, start = dict.fromkeys(JUDGE_WEIGHTS, 0.0), time.time()
        for k, a in enumerate(articles, 1):
            shortlist = picker.shortlist(a.text, SHORTLIST)
            gold = dict(zip((c.text for c in a.candidates), a.scores, strict=True))
            judged = generator.judge(a.text, [p.text for p in shortlist])
            for w in JUDGE_WEIGHTS:
                best = max(range(len(shortlist)),
                           key=lambda i, w=w: shortlist[i].log_prob + w * judged[i])
                sums[w] += gold[shortlist[best].text]
            if k % 200 == 0 or k == len(articles):
                print(f"judging {name}: {k}/{len(articles)} ({time.time() - start:.0f} s)",
                      file=sys.stderr, flush=True)
        for w in JUDGE_WEIGHTS:
            dev[w][name] = round(sums[w] / max(total, 1), 4)
    mean = {w: sum(d.values()) / len(d) for w, d in dev.items()}
    weight = max(JUDGE_WEIGHTS, key=lambda w: (mean[w], -w))
    return {"judge_weight": weight, "dev": dev[weight], "mean": round(mean[weight], 4),
            "by_weight": {str(w): {**dev[w], "mean": round(mean[w], 4)} for w in JUDGE_WEIGHTS}}


def _save(checkpoint: str, out: str, picker: ClausePicker, config: str, cfg: dict,
          curve: list[dict], epoch: int, articles: int) -> dict:
    state = torch.load(checkpoint, map_location="cpu", weights_only=False)
    if state["lang"] != "zh" or state["kind"] != "generator":
        raise SystemExit(f"{checkpoint} is a {state['lang']} {state['kind']} checkpoint; the "
                         "clause picker serves Chinese full headlines")
    path = write_derived(checkpoint, out, state, {"picker": picker.to_state()},
                         config_file=config, config=cfg, training_articles=articles,
                         curve=curve, best_epoch=epoch)
    judged = curve[-1]
    return {"checkpoint": str(path), "best_epoch": epoch, "picker_alone": curve[epoch - 1]["dev"],
            "judge_weight": judged["judge_weight"], "dev": judged["dev"], "mean": judged["mean"]}
