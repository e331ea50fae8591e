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
e.g. the output of `python -m training data hashtag`), `dev_ood_file` (a second dev set of
held-out sources: every training pair of its sources is dropped, and the kept epoch is the
one with the best mean of the two dev ROUGE-1 scores) and `max_per_target` (at most this many
training pairs per target sequence, `data.cap_recurring`). Relative paths are from the
repository root.
"""

from __future__ import annotations

import random
import sys
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
    cap_recurring,
    encode_sources,
    make_batch,
    read_pairs,
    selection_score,
    training_pairs,
)
from training.hashtag.metrics import score
from training.loop import Loop, LoopConfig
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
    if cap := dc.get("max_per_target"):
        n = len(train_pairs)
        train_pairs = cap_recurring(train_pairs, cap)
        print(f"max_per_target {cap}: {n - len(train_pairs)} of {n} training pairs dropped "
              "(recurring target sequences)", flush=True)
    if quick:
        train_pairs, dev, dev_ood = train_pairs[:3000], dev[:100], dev_ood[:100]
    return train_pairs, dev, dev_ood


def load_config(config_path: str, data: dict | None = None,
                max_minutes: float | None = None) -> dict:
    """The TOML config with command-line overrides of `[data]` keys and `max_minutes`."""
    with open(config_path, "rb") as f:
        cfg = tomllib.load(f)
    cfg["data"] = {**cfg.get("data", {}), **{k: v for k, v in (data or {}).items() if v}}
    if max_minutes is not None:
        cfg["train"]["max_minutes"] = max_minutes
    return cfg


class HashtagTask:
    """SegTrm for training/loop.py: shuffled batches of similar length, label-smoothed loss,
    greedy dev ROUGE-1 (with dev_ood: the mean of both) as the selection score."""

    def __init__(self, model: SegTrm, vocab: Vocab, lang: str, train_pairs: list[Pair],
                 dev: list[Pair], dev_ood: list[Pair], tc: dict):
        self.model, self.vocab, self.lang = model, vocab, lang
        self.train_pairs, self.dev, self.dev_ood, self.tc = train_pairs, dev, dev_ood, tc

    def batches(self, rng: random.Random) -> list[list[Pair]]:
        return list(batches(self.train_pairs, self.tc["batch_size"], rng))

    def loss(self, group: list[Pair], rng: random.Random) -> dict[str, torch.Tensor]:
        b = make_batch(group, self.vocab, self.model.cfg, self.lang)
        return {"loss": self.model(b.ids, b.segs, b.y_in, b.y_out,
                                   self.tc.get("label_smoothing", 0.1))}

    def evaluate(self) -> tuple[dict, float]:
        metrics = dev_rouge(self.model, self.dev, self.vocab, self.lang)
        ood = dev_rouge(self.model, self.dev_ood, self.vocab, self.lang) if self.dev_ood else None
        return {"dev": metrics, **({"dev_ood": ood} if ood else {})}, selection_score(metrics, ood)

    def save_best(self, path: Path, meta: dict) -> None:
        save_checkpoint(path, self.model, self.vocab, self.lang, meta)

    def state(self) -> dict:
        return {"vocab": self.vocab.to_state(), "config": asdict(self.model.cfg)}


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
    resume_state = None
    if resume and (out / "last.pt").exists():
        resume_state = torch.load(out / "last.pt", weights_only=False)
        vocab = from_state(resume_state["vocab"])
    model = SegTrm(SegTrmConfig(vocab_size=len(vocab), **mc))
    opt = torch.optim.AdamW(model.parameters(), lr=tc["lr"], betas=(0.9, 0.999), eps=1e-6,
                            weight_decay=tc.get("weight_decay", 0.01))
    task = HashtagTask(model, vocab, lang, train_pairs, dev, dev_ood, tc)
    loop = Loop(model, opt, task,
                LoopConfig.of(tc, epochs or tc["epochs"], quick, warmup=0.04, floor=1 / 32),
                out, rng, {"config": Path(config_path).name, "run": name, "data": cfg["data"]})
    if resume_state:
        loop.resume(resume_state)
    n_params = sum(p.numel() for p in model.parameters())
    print(f"{name}: {n_params / 1e6:.2f}M parameters, vocab {len(vocab)}, "
          f"{len(train_pairs)} train / {len(dev)} dev / {len(dev_ood)} dev_ood pairs", flush=True)
    loop.run()
    return out / "best.pt"
