"""Train a POS tagger variant from a TOML config.

    python -m training train pos --config training/configs/pos_dcnn.toml [--quick]

Writes to runs/<name>/: `best.pt` (fp16, best mean dev accuracy), `last.pt` (full state for
`--resume`), `log.jsonl` (one line per evaluation). `--quick` trains for about a minute on a
small slice, for smoke tests. The loop (epochs, patience, last.pt, time budget, the
learning rate: constant `lr` for Adam, or warm-up and linear decay with [train] `warmup`) is
training/loop.py. `--init CHECKPOINT` continues from a tagger checkpoint (its sizes,
vocabularies and weights, with the config's data and a fresh optimizer and schedule); a
config made for it has no [model] table.
"""

from __future__ import annotations

import math
import random
import tomllib
from dataclasses import asdict
from pathlib import Path

import numpy as np
import torch
import torch.nn.functional as F

from nlp_models.pos.clusters import Clusters
from nlp_models.pos.features import Vocabularies
from nlp_models.pos.model import Tagger, TaggerConfig
from nlp_models.pos.predictor import load_checkpoint, save_checkpoint
from training.loop import Loop, LoopConfig
from training.paths import REPO_ROOT, data_dir
from training.pos.data import Sentence, batches, make_batch, read_conll
from training.pos.embeddings import load_embeddings
from training.provenance import record_run


def load_config(path: str | Path) -> dict:
    with open(path, "rb") as f:
        return tomllib.load(f)


def conll_path(split: str, root: Path) -> Path:
    """A config's split name as a file: "ritter/train" is in the shared data (`root`);
    "data/pos/ud_ewt/all" (made by `python -m training data pos`) is under the repository."""
    base = REPO_ROOT if split.startswith("data/") else root
    return base / f"{split}.conll"


def load_split(spec: dict[str, str], root: Path) -> list[Sentence]:
    """{"ritter/train": "ptb", ...} -> sentences tagged with their head."""
    out = []
    for split, head in spec.items():
        path = conll_path(split, root)
        if not path.exists():
            hint = (" (made by python -m training data pos, or data pos-pseudo for "
                    "data/pos/pseudo: docs/models/pos.md)" if split.startswith("data/") else "")
            raise SystemExit(f"{path} not found{hint}")
        out += read_conll(path, head)
    return out


def load_pretrained(path: str) -> tuple[list[str], np.ndarray]:
    """Pre-trained word vectors (training/pos/embeddings.py), most frequent word first."""
    p = Path(path)
    if not p.is_absolute():
        p = REPO_ROOT / p
    if not p.exists():
        raise SystemExit(f"{p} not found; make it with `python -m training embeddings pos`")
    return load_embeddings(p)


def load_train(dc: dict, root: Path) -> list[Sentence]:
    """The [data] `train` splits. `repeat = {"ritter/train" = 4}` puts a split into every
    epoch that many times, so a small set weighs more in the shared encoder and its head
    (docs/models/pos.md, "Ritter's tweets weighed four times")."""
    repeat = dc.get("repeat", {})
    if unknown := set(repeat) - set(dc["train"]):
        raise SystemExit(f"repeat names splits that are not in train: {sorted(unknown)}")
    return [s for split, head in dc["train"].items()
            for s in load_split({split: head}, root) * repeat.get(split, 1)]


def init_word_embeddings(model: Tagger, vocabs: Vocabularies, words: list[str],
                         vectors: np.ndarray) -> int:
    """Copy pre-trained vectors into the word embedding, scaled to the random rows' unit
    variance; words without one keep their random row. Returns how many were copied."""
    if vectors.shape[1] != model.cfg.word_dim:
        raise SystemExit(f"pre-trained vectors are {vectors.shape[1]}-d, word_dim is "
                         f"{model.cfg.word_dim}")
    scale = 1.0 / max(float(vectors.std()), 1e-6)
    index = {w: i for i, w in enumerate(words)}
    rows = [(vocabs.words.stoi[w], index[w]) for w in vocabs.words.itos[2:] if w in index]
    if rows:
        dst, src = zip(*rows, strict=True)
        with torch.no_grad():
            model.word_embed.weight[list(dst)] = torch.from_numpy(vectors[list(src)] * scale)
    return len(rows)


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


# [model] keys that are not TaggerConfig fields
_NOT_TAGGER_KEYS = ("min_word_count", "clusters", "pretrained", "pretrained_max_words")


class PosTask:
    """The tagger for training/loop.py: each epoch the tweet sets plus a fresh sample of
    newswire, batches of one tagset and similar length, cross-entropy with word dropout; the
    mean dev accuracy over the dev sets as the selection score."""

    def __init__(self, model: Tagger, vocabs: Vocabularies, train_sents: list[Sentence],
                 newswire: list[Sentence], per_epoch: int, dev: dict[str, list[Sentence]],
                 tc: dict):
        self.model, self.vocabs, self.tc = model, vocabs, tc
        self.train_sents, self.newswire, self.per_epoch, self.dev = (
            train_sents, newswire, per_epoch, dev)

    def batches(self, rng: random.Random) -> list[list[Sentence]]:
        sents = self.train_sents + rng.sample(self.newswire, self.per_epoch)
        return list(batches(sents, self.tc["batch_size"], shuffle=True, rng=rng))

    def loss(self, group: list[Sentence], rng: random.Random) -> dict[str, torch.Tensor]:
        b = make_batch(group, self.vocabs, self.tc.get("word_dropout", 0.0))
        logits = self.model(b.words, b.types, b.chars, b.lengths, b.head, b.clusters)
        return {"loss": F.cross_entropy(logits.flatten(0, 1), b.tags.flatten(),
                                        ignore_index=-100)}

    def evaluate(self) -> tuple[dict, float]:
        dev_acc = {k: accuracy(self.model, v, self.vocabs) for k, v in self.dev.items()}
        mean_dev = sum(dev_acc.values()) / len(dev_acc)
        return {"dev": dev_acc, "mean_dev": mean_dev}, mean_dev

    def save_best(self, path: Path, meta: dict) -> None:
        save_checkpoint(path, self.model, self.vocabs, meta)

    def state(self) -> dict:
        return {"vocabs": self.vocabs.to_json(), "config": asdict(self.model.cfg)}


def new_model(mc: dict, sents: list[Sentence], resume: bool) -> tuple[Tagger, Vocabularies]:
    """A tagger of the config's sizes, its vocabularies built from the training sentences
    (plus the pre-trained embedding's most frequent words, whose vectors initialize it)."""
    # ARK word clusters (nlp_models/pos/clusters.py): the file resolved by deploy.local prepare
    clusters = Clusters() if mc.get("clusters", False) else None
    pretrained = load_pretrained(mc["pretrained"]) if mc.get("pretrained") else None
    extra = pretrained[0][: mc.get("pretrained_max_words", 50_000)] if pretrained else ()
    vocabs = Vocabularies.build(sents, mc.get("min_word_count", 1), clusters, extra)
    model_cfg = TaggerConfig(
        **{k: v for k, v in mc.items() if k not in _NOT_TAGGER_KEYS},
        n_cluster_features=len(clusters) if clusters else 0,
        n_words=len(vocabs.words),
        n_chars=len(vocabs.chars),
        tagsets={h: len(v) for h, v in vocabs.tags.items()},
    )
    model_cfg.char_widths = tuple(model_cfg.char_widths)
    model = Tagger(model_cfg)
    if pretrained and not resume:
        found = init_word_embeddings(model, vocabs, *pretrained)
        print(f"word embeddings: {found} of {len(vocabs.words)} from {mc['pretrained']}",
              flush=True)
    return model, vocabs


def warm_start(path: str) -> tuple[Tagger, Vocabularies]:
    """Continue from a tagger checkpoint (a run's best.pt or a published version): its sizes,
    vocabularies and weights, in fp32 and trainable. The 80-minute runs stop while dev
    accuracy is still rising; a warm start gives them a second budget with a decaying
    learning rate without re-training from scratch."""
    p = REPO_ROOT / path  # an absolute path stays as it is
    if not p.exists():
        raise SystemExit(f"--init {p} not found")
    model, vocabs, _ = load_checkpoint(p)
    print(f"warm start from {path}", flush=True)
    return model.train().requires_grad_(True), vocabs


def train(config_path: str, quick: bool = False, resume: bool = False, out_dir: str | None = None,
          epochs: int | None = None, init: str | None = None, seed: int | None = None):
    cfg = load_config(config_path)
    if seed is not None:  # runs that differ only in seed, side by side
        cfg["name"] += f"_seed{seed}"
        cfg["train"]["seed"] = seed
    if not init and "model" not in cfg:
        raise SystemExit(f"{config_path} has no [model] table: it continues a checkpoint, "
                         "give --init CHECKPOINT")
    name = cfg["name"] + ("_quick" if quick else "")
    out = Path(out_dir or "runs") / name
    out.mkdir(parents=True, exist_ok=True)
    tc, dc = cfg["train"], cfg["data"]
    torch.set_num_threads(tc.get("threads", 1))
    torch.manual_seed(tc.get("seed", 1))
    rng = random.Random(tc.get("seed", 1))

    root = data_dir() / "pos"
    train_sents = load_train(dc, root)
    newswire = load_split(dc.get("newswire", {}), root)
    dev = {rel: load_split({rel: head}, root) for rel, head in dc["dev"].items()}
    used = [*dc["train"], *dc.get("newswire", {}), *dc["dev"]]
    mc = cfg.get("model", {})
    inputs = [path for path in (mc.get("pretrained"), init) if path]
    record_run(out, config_path, cfg, [conll_path(split, root) for split in used]
               + [REPO_ROOT / path for path in inputs])
    if quick:
        heads = sorted({s.head for s in train_sents})
        step = max(1, len(train_sents) // 1500)
        train_sents = [s for h in heads for s in train_sents if s.head == h][::step]
        newswire = newswire[:500]
        dev = {k: v[:100] for k, v in dev.items()}
    model, vocabs = (warm_start(init) if init
                     else new_model(mc, train_sents + newswire, resume))
    opt = torch.optim.Adam(model.parameters(), lr=tc["lr"])
    epochs = epochs or tc["epochs"]
    per_epoch = min(len(newswire), dc.get("newswire_per_epoch", len(newswire)))
    task = PosTask(model, vocabs, train_sents, newswire, per_epoch, dev, tc)
    loop = Loop(model, opt, task, LoopConfig.of(tc, epochs, quick, clip=5.0), out, rng,
                {"config": Path(config_path).name})
    if resume and (out / "last.pt").exists():
        state = torch.load(out / "last.pt", weights_only=False)
        task.vocabs = vocabs = Vocabularies.from_json(state["vocabs"])
        loop.resume(state)

    n_params = sum(p.numel() for p in model.parameters())
    print(f"{name}: {model.cfg.variant}, {n_params / 1e6:.2f}M parameters, "
          f"{len(train_sents)} + {len(newswire)} newswire sentences, vocab {len(vocabs.words)}",
          flush=True)
    best = loop.run()
    if not math.isfinite(best):
        raise SystemExit("training produced no checkpoint")
