"""Average the weights of taggers fine-tuned from one checkpoint: a greedy model soup.

    python -m training soup pos --checkpoint runs/a/best.pt --checkpoint runs/b/best.pt ... \
        --out runs/soup/best.pt

Fine-tunes that start from the same weights (`train pos --init`) and differ only in seed or
data sample stay in one basin of the loss, so the mean of their weights is a model too, and
often a better one than any of them (Wortsman et al. 2022, "Model soups"). It costs nothing
at serving time: one model of the same size and speed. Greedy recipe: sort the ingredients
by mean dev accuracy (the training selection score: RIT-Dev and OCT27 test), start from the
best, and keep each next one only if the average with it does not lower mean dev. The test
sets are never read. Writes an fp16 checkpoint like `train pos`'s best.pt, whose meta lists
the ingredients and their scores; the last stdout line is JSON.
"""

from __future__ import annotations

import json
from pathlib import Path

import torch

from nlp_models.pos.features import Vocabularies
from nlp_models.pos.model import Tagger
from nlp_models.pos.predictor import load_checkpoint, save_checkpoint
from training.paths import data_dir
from training.pos.data import Sentence
from training.pos.train import accuracy, load_split

DEV = {"ritter/dev": "ptb", "ark_oct27/test": "ark"}  # the selection sets of every pos config


def mean_dev(model: Tagger, vocabs: Vocabularies, dev: dict[str, list[Sentence]]) -> float:
    return sum(accuracy(model, s, vocabs) for s in dev.values()) / len(dev)


def average(states: list[dict[str, torch.Tensor]]) -> dict[str, torch.Tensor]:
    """Element-wise mean of float tensors; other tensors (counters) from the first state."""
    return {k: torch.stack([s[k] for s in states]).mean(0) if v.is_floating_point() else v
            for k, v in states[0].items()}


def soup(paths: list[str], out: str) -> dict:
    torch.set_num_threads(1)
    root = data_dir() / "pos"
    dev = {rel: load_split({rel: head}, root) for rel, head in DEV.items()}
    loaded = [load_checkpoint(p) for p in paths]
    model, vocabs, _ = loaded[0]
    for p, (m, v, _) in zip(paths, loaded, strict=True):
        if m.cfg != model.cfg or v.to_json() != vocabs.to_json():
            raise SystemExit(f"{p}: sizes or vocabularies differ from {paths[0]}; only "
                             "fine-tunes of one checkpoint can be averaged")
    scores = [mean_dev(m, v, dev) for m, v, _ in loaded]
    for p, s in zip(paths, scores, strict=True):
        print(f"ingredient {p}: mean dev {s:.4f}", flush=True)
    order = sorted(range(len(paths)), key=lambda i: -scores[i])
    chosen, best = [order[0]], scores[order[0]]
    states = {i: m.state_dict() for i, (m, _, _) in enumerate(loaded)}
    for i in order[1:]:
        model.load_state_dict(average([states[j] for j in [*chosen, i]]))
        score = mean_dev(model, vocabs, dev)
        keep = score >= best
        print(f"+ {paths[i]}: mean dev {score:.4f} ({'kept' if keep else 'left out'})",
              flush=True)
        if keep:
            chosen, best = [*chosen, i], score
    model.load_state_dict(average([states[j] for j in chosen]))
    meta = {"soup": [{"checkpoint": paths[j], "mean_dev": scores[j]} for j in chosen],
            "left_out": [paths[j] for j in order if j not in chosen], "mean_dev": best}
    Path(out).parent.mkdir(parents=True, exist_ok=True)
    save_checkpoint(out, model, vocabs, meta)
    return {"out": out, **meta}


def main(paths: list[str], out: str) -> None:
    if len(paths) < 2:
        raise SystemExit("soup pos needs at least two --checkpoint")
    print(json.dumps(soup(paths, out)))
