"""Train a headline model from a TOML config.

    python -m training train headline --config training/configs/headline_en.toml \
        [--variant xl-cc|pointer-generator|xl|transformer] [--smooth-alpha 0.001]
    python -m training train constrained-headline --config training/configs/headline_en.toml \
        [--strategy tok-b|tok-f|seq-b|seq-f|mixed|he [--variant transformer|xl|xl-cc]]
    (both: [--epochs N] [--quick] [--resume] [--init CHECKPOINT]; headline also
    [--pretrain-epochs N])

The config fixes language, sizes and schedule, so every model of a table shares them;
the flags pick the model. `--strategy he` trains He et al.'s comparator (a vanilla
Transformer reading `phrase [SEP] article`, phrase dropping; `--variant` swaps its base). Writes
runs/<name>/best.pt (fp16, best selection score, below), last.pt (--resume), log.jsonl (one
line per evaluation: the learning curve). Evaluation runs after every epoch and, with
`eval_every = N` in the config's [train], every N steps inside epochs too. last.pt is also
written inside an epoch, every `save_minutes` (default 15) and when the time budget
(`max_minutes`) runs out, with the epoch's batch order and position: `--resume` continues
mid-epoch, so a run of many hours survives the end of a session.
`--init CHECKPOINT` fine-tunes a trained model instead of starting from scratch: its
architecture, weights and vocabulary, with the config's `max_source` and `dropout` and a
fresh optimizer and schedule (run name <name>_init).
`--pretrain-epochs N` first trains a full generator N epochs on lead-sentence pairs built
from the training articles alone (data.lead_gap_pairs), then on the headlines as usual with
a fresh optimizer and schedule; the run is named <name>_gsg. Pre-training is not resumable.
The loop (epochs, schedule, evaluation, last.pt, time budget) is training/loop.py.

Extra data (`[data]` table of the config, all optional; paths relative to the repository
root unless absolute; the files come from `python -m training data headline --out DIR`):

    [data]
    train_extra = ["data/headline/en/train_extra.jsonl"]  # added to train.jsonl
    registers = ["news"]          # keep only these `register`s of the extra files
    dev_ood = "data/headline/en/dev_ood.jsonl"            # a second dev set
    dev_ood_articles = 300

Checkpoint selection: without `dev_ood`, the best greedy ROUGE-L F on the first
`dev_articles` dev pairs. With it, the best *mean* of that and the ROUGE-L F on
the first `dev_ood_articles` dev_ood pairs: both sets weigh equally, so an epoch that gains
on the in-domain set by losing more on the unseen sources is not kept.
"""

from __future__ import annotations

import json
import random
import sys
import tomllib
from collections import Counter
from dataclasses import asdict
from pathlib import Path

import torch

from nlp_models.headline.model import HeadlineConfig, HeadlineGenerator
from nlp_models.headline.predictor import HeadlinePredictor, build_model, save_checkpoint
from nlp_models.headline.seq2bf import Seq2BF, Seq2BFConfig
from nlp_models.headline.vocab import Vocab, build_vocab, from_state
from training.headline.data import (
    Example,
    Pair,
    batches,
    encode,
    generator_batch,
    lead_gap_pairs,
    read_pairs,
    seq2bf_batch,
)
from training.headline.metrics import rouge
from training.headline.quality import training_vocabulary
from training.loop import Loop, LoopConfig
from training.paths import REPO_ROOT, data_dir
from training.provenance import record_run

SEQ2BF_ONLY = ("strategy", "copy")  # config keys one model family has and the other has not
GENERATOR_ONLY = ("variant", "coverage_weight", "smooth_alpha")


def run_name(lang: str, task: str, choice: str, smooth_alpha: float, pretrain: int = 0,
             he_base: str = "transformer", copy: bool = False) -> str:
    if task == "headline":
        return (f"headline_{lang}_{choice}" + ("_smooth" if smooth_alpha > 0 else "")
                + ("_gsg" if pretrain else ""))
    if choice == "he" and he_base != "transformer":
        return f"constrained_{lang}_he-{he_base}"
    return f"constrained_{lang}_{choice}" + ("_copy" if copy else "")


def build(task: str, choice: str, mc: dict, vocab_size: int,
          he_base: str = "transformer") -> tuple[torch.nn.Module, str]:
    """(model, checkpoint kind) for `train headline` / `train constrained-headline`.
    He et al.'s comparator runs on `he_base`, a generator variant: "transformer" as in their
    paper, "xl" for the encoder Seq2BF uses, or "xl-cc", which can copy from the phrase and
    the article (our extension, the fair match for Seq2BF with copying)."""
    if task == "headline":
        cfg = {k: v for k, v in mc.items() if k not in SEQ2BF_ONLY}
        return HeadlineGenerator(HeadlineConfig(vocab_size, variant=choice, **cfg)), "generator"
    if choice == "he":
        if he_base not in ("transformer", "xl", "xl-cc"):
            raise SystemExit(f"He et al.'s comparator runs on transformer, xl or xl-cc, "
                             f"not {he_base!r}")
        cfg = {k: v for k, v in mc.items() if k not in SEQ2BF_ONLY + GENERATOR_ONLY}
        return HeadlineGenerator(HeadlineConfig(vocab_size, variant=he_base, **cfg)), "he"
    cfg = {k: v for k, v in mc.items() if k not in GENERATOR_ONLY + ("encoder",)}
    return Seq2BF(Seq2BFConfig(vocab_size, strategy=choice, encoder="xl", **cfg)), "seq2bf"


def dev_scores(predictor: HeadlinePredictor, pairs: list[Pair]) -> dict:
    """Greedy output on dev articles, scored like the evaluation (ROUGE F)."""
    articles = [p.article for p in pairs]
    if predictor.kind == "generator":
        outputs = predictor.headlines(articles, beam=1)
    else:
        outputs = predictor.constrained(articles, [p.phrase for p in pairs], beam=1)
    scores = rouge([o.best for o in outputs], [p.headline for p in pairs],
                   predictor.lang)
    predictor.model.train()
    return {name: s["f"] for name, s in scores.items()}


def _path(path: str) -> Path:
    p = Path(path)
    return p if p.is_absolute() else REPO_ROOT / p


def extra_data(cfg: dict) -> tuple[list[Pair], list[Pair]]:
    """The config's extra training pairs (filtered by `registers`) and dev_ood pairs."""
    dc = cfg.get("data", {})
    registers = dc.get("registers")
    extra: list[Pair] = []
    for path in dc.get("train_extra", []):
        with open(_path(path), encoding="utf-8") as f:
            rows = [json.loads(line) for line in f if line.strip()]
        extra += [Pair(r["article"], r["headline"], r.get("phrase") or "", str(r.get("id", "")))
                  for r in rows if registers is None or r.get("register") in registers]
    dev_ood = read_pairs(_path(dc["dev_ood"])) if dc.get("dev_ood") else []
    return extra, dev_ood[: dc.get("dev_ood_articles", 300)]


def selection_score(metrics: dict, ood: dict | None) -> float:
    """Checkpoint selection: dev ROUGE-L F, or its mean with dev_ood's when there is one."""
    return metrics["rougeL"] if ood is None else (metrics["rougeL"] + ood["rougeL"]) / 2


def token_counts(examples: list[Example], size: int) -> torch.Tensor:
    counts = Counter(i for e in examples for i in e.source.ids + e.target if i < size)
    out = torch.zeros(size)
    for i, n in counts.items():
        out[i] = n
    return out


def loss_of(model: torch.nn.Module, kind: str, group: list[Example], strategy: str,
            rng: random.Random) -> dict[str, torch.Tensor]:
    if kind == "seq2bf":
        return model(*seq2bf_batch(group, strategy, rng).inputs())
    return model(*generator_batch(group, prefixed=kind == "he", rng=rng).inputs())


def optimizer(model: torch.nn.Module, tc: dict) -> torch.optim.Optimizer:
    return torch.optim.AdamW(model.parameters(), lr=tc["lr"], betas=(0.9, 0.98), eps=1e-9,
                             weight_decay=tc.get("weight_decay", 0.01))


class HeadlineTask:
    """The headline models for training/loop.py: token-budget batches, the model's own loss
    terms, greedy dev ROUGE-L F (with dev_ood: the mean of both) as the selection score."""

    def __init__(self, model: torch.nn.Module, kind: str, choice: str, vocab: Vocab, lang: str,
                 examples: list[Example], max_tokens: int, dev: list[Pair],
                 dev_ood: list[Pair], whole_words: list[str]):
        self.model, self.kind, self.choice, self.vocab, self.lang = model, kind, choice, vocab, lang
        self.examples, self.max_tokens = examples, max_tokens
        self.dev, self.dev_ood, self.whole_words = dev, dev_ood, whole_words

    def batches(self, rng: random.Random) -> list[list[Example]]:
        return list(batches(self.examples, self.max_tokens, rng))

    def loss(self, group: list[Example], rng: random.Random) -> dict[str, torch.Tensor]:
        return loss_of(self.model, self.kind, group, self.choice, rng)

    def evaluate(self) -> tuple[dict, float]:
        # decoded as serving will: with the whole-word rule where it applies
        predictor = HeadlinePredictor(self.model, self.vocab, self.lang, self.kind,
                                      {"whole_words": self.whole_words})
        metrics = dev_scores(predictor, self.dev)
        ood = dev_scores(predictor, self.dev_ood) if self.dev_ood else None
        return ({"dev": metrics, **({"dev_ood": ood} if ood else {})},
                selection_score(metrics, ood))

    def save_best(self, path: Path, meta: dict) -> None:
        words = {"whole_words": self.whole_words} if self.whole_words else {}
        save_checkpoint(path, self.model, self.vocab, self.lang, self.kind, {**meta, **words})

    def state(self) -> dict:
        return {"vocab": self.vocab.to_state(), "config": asdict(self.model.cfg)}


class PretrainTask(HeadlineTask):
    """Gap-sentence pre-training: no dev evaluation, nothing to select."""

    def evaluate(self) -> tuple[dict, float]:
        return {"pretrain": True}, 0.0

    def save_best(self, path: Path, meta: dict) -> None:
        pass


def pretrain(model: HeadlineGenerator, pairs: list[Pair], lang: str, vocab: Vocab, tc: dict,
             epochs: int, quick: bool, out: Path) -> None:
    """Gap-sentence pre-training (see data.lead_gap_pairs) with its own optimizer and
    schedule; its log.jsonl and last.pt go to `out/pretrain/` (not resumable)."""
    examples = [encode(p, vocab, model.cfg.max_source, model.cfg.max_target)
                for p in lead_gap_pairs(pairs, lang)]
    print(f"pre-training on {len(examples)} lead-sentence pairs", flush=True)
    task = PretrainTask(model, "generator", model.cfg.variant, vocab, lang, examples,
                        tc["max_tokens"], [], [], [])
    cfg = LoopConfig.of({**tc, "eval_every": 0}, epochs, quick, warmup=0.05)
    (out / "pretrain").mkdir(exist_ok=True)
    Loop(model, optimizer(model, tc), task, cfg, out / "pretrain",
         random.Random(tc.get("seed", 1)), {}).run()


def from_init(path: str | Path, task: str, mc: dict, lang: str) -> tuple[torch.nn.Module, Vocab]:
    """A model to fine-tune: the architecture, weights and vocabulary of a checkpoint, with
    the config's reading budget and dropout (`max_source`, `dropout`)."""
    state = torch.load(path, map_location="cpu", weights_only=False)
    expected = "generator" if task == "headline" else ("seq2bf", "he")
    if state["kind"] not in expected or state["lang"] != lang:
        raise SystemExit(f"--init {path} is a {state['lang']} {state['kind']} checkpoint; "
                         f"this run trains a {lang} {task} model")
    config = {**state["config"], "max_source": mc["max_source"], "dropout": mc["dropout"]}
    model = build_model(state["kind"], config)
    model.load_state_dict({k: v.float() for k, v in state["model"].items()})
    return model, from_state(state["vocab"])


def train(config_path: str, task: str, choice: str | None = None, smooth_alpha: float | None = None,
          quick: bool = False, resume: bool = False, out_dir: str | None = None,
          epochs: int | None = None, pretrain_epochs: int = 0,
          he_base: str = "transformer", copy: bool = False, init: str | None = None) -> Path:
    with open(config_path, "rb") as f:
        cfg = tomllib.load(f)
    lang, mc, tc = cfg["lang"], dict(cfg["model"]), cfg["train"]
    choice = choice or ("xl-cc" if task == "headline" else "tok-b")
    if smooth_alpha is not None:
        mc["smooth_alpha"] = smooth_alpha
    if copy and (task == "headline" or choice == "he"):
        raise SystemExit("--copy is for Seq2BF (`train constrained-headline --strategy ...`)")
    mc["copy"] = copy
    if pretrain_epochs and (task != "headline" or init):
        raise SystemExit("--pretrain-epochs is for `train headline` (full generators) from "
                         "scratch only")
    name = (run_name(lang, task, choice, mc.get("smooth_alpha", 0.0), pretrain_epochs, he_base,
                     copy)
            + ("_init" if init else "") + ("_quick" if quick else ""))
    out = Path(out_dir or "runs") / name
    out.mkdir(parents=True, exist_ok=True)
    torch.set_num_threads(tc.get("threads", 2))
    torch.manual_seed(tc.get("seed", 1))
    rng = random.Random(tc.get("seed", 1))

    root = data_dir() / "headline" / lang
    train_pairs, dev = read_pairs(root / "train.jsonl"), read_pairs(root / "dev.jsonl")
    dev = dev[: tc.get("dev_articles", len(dev))]
    extra, dev_ood = extra_data(cfg)
    dc = cfg.get("data", {})
    record_run(out, config_path, cfg, [root / "train.jsonl", root / "dev.jsonl"]
               + [_path(p) for p in dc.get("train_extra", [])]
               + ([_path(dc["dev_ood"])] if dc.get("dev_ood") else []))
    if quick:
        train_pairs, dev = train_pairs[:2000 - min(len(extra), 1000)], dev[:50]
        extra, dev_ood = extra[:1000], dev_ood[:50]
    train_pairs = train_pairs + extra
    if init:
        model, vocab = from_init(init, task, mc, lang)
        kind = "generator" if task == "headline" else ("he" if choice == "he" else "seq2bf")
    else:
        print(f"{name}: building the {lang} vocabulary", file=sys.stderr, flush=True)
        vocab = build_vocab(lang, [p.article for p in train_pairs]
                            + [p.headline for p in train_pairs], cfg.get("vocab_size", 12000))
        model, kind = build(task, choice, mc, len(vocab), he_base)
    # the words an English headline may use (wholewords.py), saved with the checkpoint
    whole_words = (sorted(training_vocabulary((p.article + "\n" + p.headline
                                               for p in train_pairs), lang))
                   if lang == "en" else [])
    resume_state = None
    if resume and (out / "last.pt").exists():
        resume_state = torch.load(out / "last.pt", weights_only=False)
        vocab = from_state(resume_state["vocab"])
    print(f"{name}: encoding {len(train_pairs)} training pairs", file=sys.stderr, flush=True)
    examples = [encode(p, vocab, model.cfg.max_source, model.cfg.max_target) for p in train_pairs]
    if kind != "generator":
        examples = [e for e in examples if e.phrase]
    if isinstance(model, HeadlineGenerator) and not resume and not init:
        model.set_token_counts(token_counts(examples, len(vocab)))

    epochs = epochs or tc["epochs"]
    if pretrain_epochs and not resume:
        pretrain(model, train_pairs, lang, vocab, tc, pretrain_epochs, quick, out)
    task = HeadlineTask(model, kind, choice, vocab, lang, examples, tc["max_tokens"], dev,
                        dev_ood, whole_words)
    loop = Loop(model, optimizer(model, tc), task, LoopConfig.of(tc, epochs, quick, warmup=0.05),
                out, rng, {"config": Path(config_path).name, "run": name, "epochs": epochs,
                           "pretrain_epochs": pretrain_epochs,
                           **({"init": str(init)} if init else {})})
    if resume_state:
        loop.resume(resume_state)
    n_params = sum(p.numel() for p in model.parameters())
    print(f"{name}: {n_params / 1e6:.2f}M parameters, vocab {len(vocab)}, {len(examples)} train "
          f"/ {len(dev)} dev pairs, {loop.steps_per_epoch} steps per epoch", flush=True)
    loop.run()
    return out / "best.pt"
