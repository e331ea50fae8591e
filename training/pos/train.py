"""Train a POS tagger variant from a TOML config.

    python -m training train pos --config training/configs/pos_dcnn.toml [--quick]

Writes to runs/<name>/: `best.pt` (fp16, best mean dev accuracy), `last.pt` (full state for
`--resume`), `log.jsonl` (one line per epoch). `--quick` trains for about a minute on a
small slice, for smoke tests.
"""

from __future__ import annotations

import json
import math
import random
import sys
import time
import tomllib
from dataclasses import asdict
from pathlib import Path

import torch
import torch.nn.functional as F

from training.paths import data_dir
from training.pos.clusters import Clusters
from training.pos.data import Sentence, Vocabularies, batches, make_batch, read_conll
from training.pos.model import Tagger, TaggerConfig
from training.pos.predictor import save_checkpoint


def load_config(path: str | Path) -> dict:
    with open(path, "rb") as f:
        return tomllib.load(f)


def load_split(spec: dict[str, str], root: Path) -> list[Sentence]:
    """{"ritter/train": "ptb", ...} -> sentences tagged with their head."""
    out = []
    for rel, head in spec.items():
        out += read_conll(root / f"{rel}.conll", head)
    return out


def accuracy(model: Tagger, sents: list[Sentence], vocabs: Vocabularies) -> float:
    model.eval()
    correct = total = 0
    # no_grad, not inference_mode: TorchScript graphs that were run with autograd on
    # refuse inference tensors ("Inference tensors cannot be saved for backward").
    with torch.no_grad():
        for group in batches(sents, 128, shuffle=False, rng=random.Random(0)):
            b = make_batch(group, vocabs)
            pred = model(b.words, b.types, b.chars, b.lengths, b.head, b.clusters).argmax(-1)
            mask = b.tags != -100
            correct += (pred[mask] == b.tags[mask]).sum().item()
            total += mask.sum().item()
    model.train()
    return correct / max(total, 1)


def train(config_path: str, quick: bool = False, resume: bool = False, out_dir: str | None = None):
    cfg = load_config(config_path)
    name = cfg["name"] + ("_quick" if quick else "")
    out = Path(out_dir or "runs") / name
    out.mkdir(parents=True, exist_ok=True)
    tc, dc = cfg["train"], cfg["data"]
    torch.set_num_threads(tc.get("threads", 1))
    torch.manual_seed(tc.get("seed", 1))
    rng = random.Random(tc.get("seed", 1))

    root = data_dir() / "pos"
    train_sents = load_split(dc["train"], root)
    newswire = load_split(dc.get("newswire", {}), root)
    dev = {rel: load_split({rel: head}, root) for rel, head in dc["dev"].items()}
    if quick:
        heads = sorted({s.head for s in train_sents})
        step = max(1, len(train_sents) // 1500)
        train_sents = [s for h in heads for s in train_sents if s.head == h][::step]
        newswire = newswire[:500]
        dev = {k: v[:100] for k, v in dev.items()}
    own_keys = ("min_word_count", "clusters")  # config keys that are not TaggerConfig fields
    # ARK word clusters (training/pos/clusters.py): the file resolved by deploy.local prepare
    clusters = Clusters() if cfg["model"].get("clusters", False) else None
    vocabs = Vocabularies.build(
        train_sents + newswire, cfg["model"].get("min_word_count", 1), clusters
    )
    model_cfg = TaggerConfig(
        **{k: v for k, v in cfg["model"].items() if k not in own_keys},
        n_cluster_features=len(clusters) if clusters else 0,
        n_words=len(vocabs.words),
        n_chars=len(vocabs.chars),
        tagsets={h: len(v) for h, v in vocabs.tags.items()},
    )
    model_cfg.char_widths = tuple(model_cfg.char_widths)
    model = Tagger(model_cfg)
    opt = torch.optim.Adam(model.parameters(), lr=tc["lr"])
    start_epoch, best, best_epoch = 0, -1.0, 0
    if resume and (out / "last.pt").exists():
        state = torch.load(out / "last.pt", weights_only=False)
        model.load_state_dict(state["model"])
        opt.load_state_dict(state["opt"])
        vocabs = Vocabularies.from_json(state["vocabs"])
        start_epoch, best = state["epoch"] + 1, state["best"]
        best_epoch = state.get("best_epoch", state["epoch"] + 1)
        print(f"resumed from epoch {start_epoch}, best dev {best:.4f}", flush=True)

    n_params = sum(p.numel() for p in model.parameters())
    print(f"{name}: {model_cfg.variant}, {n_params / 1e6:.2f}M parameters, "
          f"{len(train_sents)} + {len(newswire)} newswire sentences, vocab {len(vocabs.words)}",
          flush=True)
    epochs = 1 if quick else tc["epochs"]
    deadline = time.time() + (60 if quick else tc.get("max_minutes", 10**6) * 60)
    per_epoch = min(len(newswire), dc.get("newswire_per_epoch", len(newswire)))
    for epoch in range(start_epoch, epochs):
        t0 = time.time()
        epoch_sents = train_sents + rng.sample(newswire, per_epoch)
        groups = list(batches(epoch_sents, tc["batch_size"], shuffle=True, rng=rng))
        total_loss = 0.0
        for step, group in enumerate(groups, 1):
            b = make_batch(group, vocabs, tc.get("word_dropout", 0.0))
            logits = model(b.words, b.types, b.chars, b.lengths, b.head, b.clusters)
            loss = F.cross_entropy(logits.flatten(0, 1), b.tags.flatten(), ignore_index=-100)
            opt.zero_grad()
            loss.backward()
            torch.nn.utils.clip_grad_norm_(model.parameters(), tc.get("clip", 5.0))
            opt.step()
            total_loss += loss.item()
            if step % 50 == 0 or step == len(groups):
                print(f"\repoch {epoch + 1}/{epochs} step {step}/{len(groups)} "
                      f"loss {total_loss / step:.4f}", end="", file=sys.stderr, flush=True)
            if time.time() > deadline:
                break
        print(file=sys.stderr)
        dev_acc = {k: accuracy(model, v, vocabs) for k, v in dev.items()}
        mean_dev = sum(dev_acc.values()) / len(dev_acc)
        record = {"epoch": epoch + 1, "loss": total_loss / max(step, 1), "dev": dev_acc,
                  "mean_dev": mean_dev, "seconds": round(time.time() - t0, 1)}
        print(json.dumps(record), flush=True)
        with open(out / "log.jsonl", "a") as f:
            f.write(json.dumps(record) + "\n")
        if mean_dev > best:
            best, best_epoch = mean_dev, epoch + 1
            meta = {"config": Path(config_path).name, "epoch": epoch + 1, "dev": dev_acc}
            save_checkpoint(out / "best.pt", model, vocabs, meta)
        torch.save({"model": model.state_dict(), "opt": opt.state_dict(), "epoch": epoch,
                    "best": best, "best_epoch": best_epoch, "vocabs": vocabs.to_json(),
                    "config": asdict(model_cfg)}, out / "last.pt")
        if epoch + 1 - best_epoch >= tc.get("patience", epochs):
            print(f"no dev improvement for {tc['patience']} epochs: stopping", flush=True)
            break
        if time.time() > deadline:
            print(f"time budget reached after epoch {epoch + 1}", flush=True)
            break
    print(f"best mean dev accuracy {best:.4f}; checkpoint {out / 'best.pt'}", flush=True)
    if not math.isfinite(best) or best < 0:
        raise SystemExit("training produced no checkpoint")
    return out / "best.pt"
