"""Train a hashtag generator (SegTrm or a comparison model) from a TOML config.

    python -m training train hashtag --config training/configs/hashtag_en.toml \
        [--variant soft] [--similarity manhattan] [--copy] [--quick] [--resume] \
        [--train-file FILE ...] [--dev-ood-file FILE] [--max-minutes N]

The config fixes language, sizes and schedule; --variant/--similarity pick the model so all
comparison models share everything else; --copy (or `copy = true` in `[model]`) adds the
copy mechanism (model.py). Writes runs/hashtag_<lang>_<variant>[_<sim>][_copy]/:
`best.pt` (fp16, best dev ROUGE-1 of greedy output), `last.pt` (for --resume), `log.jsonl`.
--train-file / --dev-ood-file / --max-minutes override the config's `[data]` and
`max_minutes`, so one config serves runs with and without the extra data (use --out to keep
such runs apart: the run name does not say which data it used; the checkpoint's meta does).

Optional `[data]` in the config: `train_files` (JSONL files added to the shared train split,
e.g. the output of `python -m training data hashtag`) and `dev_ood_file` (a second dev set of
held-out sources: every training pair of its sources is dropped, and the kept epoch is the
one with the best mean of the two dev ROUGE-1 scores). Relative paths are from the
repository root.
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

from nlp_models.hashtag.decode import greedy
from nlp_models.hashtag.model import SegTrm, SegTrmConfig
from nlp_models.hashtag.predictor import save_checkpoint
from nlp_models.hashtag.text import split_generated, target_words
from nlp_models.hashtag.vocab import Vocab, build_vocab, from_state
from training.hashtag.data import (
    Pair,
    batches,
    encode_sources,
    make_batch,
    read_pairs,
    selection_score,
    training_pairs,
)
from training.hashtag.metrics import score
from training.paths import REPO_ROOT, data_dir
from training.provenance import record_run


def run_name(lang: str, variant: str, similarity: str, copy: bool = False) -> str:
    name = f"hashtag_{lang}_{variant}"
    name += f"_{similarity}" if variant in ("soft", "hard") else ""
    return name + ("_copy" if copy else "")


def dev_rouge(model: SegTrm, pairs: list[Pair], vocab: Vocab, lang: str) -> dict:
    """Greedy decoding on dev posts, scored with the evaluation protocol."""
    model.eval()
    tops = []
    for i in range(0, len(pairs), 64):
        chunk = pairs[i : i + 64]
        ids, segs, _ = encode_sources([p.text for p in chunk], vocab, model.cfg)
        tops += [split_generated(vocab.decode_words(t)) for t in greedy(model, ids, segs)]
    model.train()
    return score(tops, tops, [p.hashtags for p in pairs], lang)


def data_path(path: str) -> Path:
    p = Path(path)
    return p if p.is_absolute() else REPO_ROOT / p


def load_data(lang: str, tc: dict, dc: dict, quick: bool) -> tuple[list[Pair], ...]:
    """(train, dev, dev_ood) pairs: the shared splits, the config's extra training files, and
    the held-out-source dev set (empty if none) whose sources leave the training data."""
    root = data_dir() / "hashtag" / lang
    train_pairs = read_pairs(root / "train.jsonl")
    for extra in dc.get("train_files", []):
        train_pairs += read_pairs(data_path(extra))
    dev = read_pairs(root / "dev.jsonl")[: tc.get("dev_posts", 10**9)]
    dev_ood: list[Pair] = []
    if dc.get("dev_ood_file"):
        dev_ood = read_pairs(data_path(dc["dev_ood_file"]))
        n = len(train_pairs)
        train_pairs = training_pairs(train_pairs, dev_ood)
        print(f"dev_ood: {len(dev_ood)} pairs of {sorted({p.source for p in dev_ood})}; "
              f"{n - len(train_pairs)} training pairs of those sources dropped", flush=True)
        dev_ood = dev_ood[: tc.get("dev_ood_posts", tc.get("dev_posts", 10**9))]
    if quick:
        train_pairs, dev, dev_ood = train_pairs[:3000], dev[:100], dev_ood[:100]
    return train_pairs, dev, dev_ood


def lr_at(step: int, total: int, peak: float, warmup: float) -> float:
    """Linear warm-up over the first `warmup` share of steps, then linear decay to peak/32."""
    w = max(1, int(total * warmup))
    if step < w:
        return peak * (step + 1) / w
    return peak * max(1 / 32, 1 - (step - w) / max(1, total - w))


def load_config(config_path: str, data: dict | None = None,
                max_minutes: float | None = None) -> dict:
    """The TOML config with command-line overrides of `[data]` keys and `max_minutes`."""
    with open(config_path, "rb") as f:
        cfg = tomllib.load(f)
    cfg["data"] = {**cfg.get("data", {}), **{k: v for k, v in (data or {}).items() if v}}
    if max_minutes is not None:
        cfg["train"]["max_minutes"] = max_minutes
    return cfg


def train(config_path: str, variant: str | None = None, similarity: str | None = None,
          quick: bool = False, resume: bool = False, out_dir: str | None = None,
          epochs: int | None = None, copy: bool = False, data: dict | None = None,
          max_minutes: float | None = None) -> Path:
    cfg = load_config(config_path, data, max_minutes)
    lang, mc, tc = cfg["lang"], dict(cfg["model"]), cfg["train"]
    mc["variant"] = variant or mc.get("variant", "soft")
    mc["similarity"] = similarity or mc.get("similarity", "manhattan")
    mc["copy"] = copy or mc.get("copy", False)
    name = run_name(lang, mc["variant"], mc["similarity"], mc["copy"]) + ("_quick" if quick else "")
    out = Path(out_dir or "runs") / name
    out.mkdir(parents=True, exist_ok=True)
    torch.set_num_threads(tc.get("threads", 2))
    torch.manual_seed(tc.get("seed", 1))
    rng = random.Random(tc.get("seed", 1))

    train_pairs, dev, dev_ood = load_data(lang, tc, cfg.get("data", {}), quick)
    dc, root = cfg.get("data", {}), data_dir() / "hashtag" / lang
    record_run(out, config_path, cfg, [root / "train.jsonl", root / "dev.jsonl"]
               + [data_path(p) for p in dc.get("train_files", [])]
               + ([data_path(dc["dev_ood_file"])] if dc.get("dev_ood_file") else []))
    print(f"{name}: building the {lang} vocabulary", file=sys.stderr, flush=True)
    targets = [" ".join(target_words(p.hashtags, lang)) for p in train_pairs]
    vocab = build_vocab(lang, [p.text for p in train_pairs] + targets, cfg.get("vocab_size", 8000))
    model = SegTrm(SegTrmConfig(vocab_size=len(vocab), **mc))
    opt = torch.optim.AdamW(model.parameters(), lr=tc["lr"], betas=(0.9, 0.999), eps=1e-6,
                            weight_decay=tc.get("weight_decay", 0.01))
    epochs = 1 if quick else epochs or tc["epochs"]
    steps_per_epoch = math.ceil(len(train_pairs) / tc["batch_size"])
    total_steps = epochs * steps_per_epoch
    start_epoch, best, best_epoch, step_no = 0, -1.0, 0, 0
    if resume and (out / "last.pt").exists():
        state = torch.load(out / "last.pt", weights_only=False)
        vocab = from_state(state["vocab"])
        model.load_state_dict(state["model"])
        opt.load_state_dict(state["opt"])
        start_epoch, best, best_epoch = state["epoch"] + 1, state["best"], state["best_epoch"]
        step_no = start_epoch * steps_per_epoch
        print(f"resumed after epoch {start_epoch}, best selection score {best:.4f}", flush=True)

    n_params = sum(p.numel() for p in model.parameters())
    print(f"{name}: {n_params / 1e6:.2f}M parameters, vocab {len(vocab)}, "
          f"{len(train_pairs)} train / {len(dev)} dev / {len(dev_ood)} dev_ood pairs", flush=True)
    deadline = time.time() + (60 if quick else tc.get("max_minutes", 10**6) * 60)
    for epoch in range(start_epoch, epochs):
        t0, total_loss, n = time.time(), 0.0, 0
        for n, group in enumerate(batches(train_pairs, tc["batch_size"], rng), 1):
            for g in opt.param_groups:
                g["lr"] = lr_at(step_no, total_steps, tc["lr"], tc.get("warmup", 0.04))
            b = make_batch(group, vocab, model.cfg, lang)
            loss = model(b.ids, b.segs, b.y_in, b.y_out, tc.get("label_smoothing", 0.1))
            opt.zero_grad()
            loss.backward()
            torch.nn.utils.clip_grad_norm_(model.parameters(), tc.get("clip", 1.0))
            opt.step()
            step_no += 1
            total_loss += loss.item()
            if n % 50 == 0 or n == steps_per_epoch:
                print(f"\repoch {epoch + 1}/{epochs} step {n}/{steps_per_epoch} "
                      f"loss {total_loss / n:.4f}", end="", file=sys.stderr, flush=True)
            if time.time() > deadline:
                break
        print(file=sys.stderr)
        metrics = dev_rouge(model, dev, vocab, lang)
        ood = dev_rouge(model, dev_ood, vocab, lang) if dev_ood else None
        selected = selection_score(metrics, ood)
        record = {"epoch": epoch + 1, "loss": round(total_loss / max(n, 1), 4), "dev": metrics,
                  **({"dev_ood": ood, "selection": round(selected, 4)} if ood else {}),
                  "seconds": round(time.time() - t0, 1)}
        print(json.dumps(record), flush=True)
        with open(out / "log.jsonl", "a") as f:
            f.write(json.dumps(record) + "\n")
        if selected > best:
            best, best_epoch = selected, epoch + 1
            meta = {"config": Path(config_path).name, "run": name, "epoch": epoch + 1,
                    "data": cfg["data"], "dev": metrics, **({"dev_ood": ood} if ood else {})}
            save_checkpoint(out / "best.pt", model, vocab, lang, meta)
        torch.save({"model": model.state_dict(), "opt": opt.state_dict(), "epoch": epoch,
                    "best": best, "best_epoch": best_epoch, "vocab": vocab.to_state(),
                    "config": asdict(model.cfg)}, out / "last.pt")
        if time.time() > deadline:
            print(f"time budget reached after epoch {epoch + 1}", flush=True)
            break
    what = "mean dev/dev_ood ROUGE-1" if dev_ood else "dev ROUGE-1"
    print(f"best {what} {best:.4f} (epoch {best_epoch}); checkpoint {out / 'best.pt'}",
          flush=True)
    return out / "best.pt"
