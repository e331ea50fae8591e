"""``train`` (every model, from a config file) and ``embeddings`` (the POS tagger's word
vectors, trained before it)."""

from __future__ import annotations

import argparse
import json

from training.paths import REPO_ROOT

COMMANDS = ("train", "embeddings")


def add_parsers(sub: argparse._SubParsersAction) -> None:
    p_train = sub.add_parser("train", help="train a model from a config file")
    p_train.add_argument("task", choices=["pos", "hashtag", "headline", "constrained-headline",
                                          "compressor"])
    p_train.add_argument("--config", help="TOML file under training/configs/ (all but "
                         "compressor)")
    p_train.add_argument("--data", help="compressor: the directory `data compression` wrote")
    p_train.add_argument("--variant", help="hashtag: transformer|softbase|hardbase|soft|hard; "
                         "headline: xl-cc|pointer-generator|xl|transformer; constrained-headline "
                         "--strategy he: its base, transformer (default), xl or xl-cc (copying)")
    p_train.add_argument("--strategy", help="constrained-headline: tok-b|tok-f|seq-b|seq-f|"
                         "mixed (Seq2BF) or he (He et al.'s comparator)")
    p_train.add_argument("--smooth-alpha", type=float,
                         help="headline: smooth-embedding alpha (0 = off; default from config)")
    p_train.add_argument("--similarity", help="hashtag: euclidean|mahalanobis|cosine|manhattan")
    p_train.add_argument("--epochs", type=int,
                         help="hashtag, headlines, pos: override the config's epochs")
    p_train.add_argument("--pretrain-epochs", type=int, default=0,
                         help="headline: first N epochs of lead-sentence pre-training on the "
                         "training articles (run name gets _gsg)")
    p_train.add_argument("--copy", action="store_true",
                         help="constrained-headline (Seq2BF): copy from the article; hashtag: "
                         "copy from the post (our extensions; run name gets _copy)")
    p_train.add_argument("--train-file", action="append", metavar="FILE",
                         help="hashtag: extra training JSONL (repeatable; overrides the "
                         "config's [data] train_files)")
    p_train.add_argument("--dev-ood-file", metavar="FILE",
                         help="hashtag: held-out-source dev set (overrides [data] dev_ood_file)")
    p_train.add_argument("--max-per-target", type=int, metavar="N",
                         help="hashtag: at most N training pairs per target sequence "
                         "(overrides [data] max_per_target)")
    p_train.add_argument("--max-minutes", type=float,
                         help="hashtag, compressor: wall-clock cap (hashtag: overrides "
                         "the config's max_minutes; compressor: default 60)")
    p_train.add_argument("--quick", action="store_true", help="about one minute, for smoke tests")
    p_train.add_argument("--resume", action="store_true", help="continue from runs/<name>/last.pt")
    p_train.add_argument("--seed", type=int,
                         help="pos: override the config's seed (run name gets _seedN)")
    p_train.add_argument("--init", metavar="CHECKPOINT",
                         help="headlines, pos: fine-tune this checkpoint (its architecture, "
                              "weights and vocabulary) instead of training from scratch")
    p_train.add_argument("--out", default=str(REPO_ROOT / "runs"), help="runs directory")

    p_emb = sub.add_parser("embeddings", help="pos: word2vec on unlabeled tweets (gensim)")
    p_emb.add_argument("task", choices=["pos"])
    p_emb.add_argument("--out", default=str(REPO_ROOT / "runs" / "embeddings" /
                                            "tweets_w2v200.npz"))
    p_emb.add_argument("--dim", type=int, default=200)
    p_emb.add_argument("--epochs", type=int, default=5)


def run(args: argparse.Namespace) -> int:
    if args.command == "embeddings":
        from training.pos.embeddings import train_embeddings

        print(json.dumps(train_embeddings(args.out, args.dim, args.epochs)))
    elif args.task == "compressor":
        from pathlib import Path

        from training.headline.compression import train as train_compressor

        if args.data is None:
            raise SystemExit("train compressor needs --data DIR (python -m training data "
                             "compression --out DIR)")
        out = Path(args.out) / ("compressor_quick" if args.quick else "compressor")
        train_compressor(Path(args.data), out, epochs=args.epochs or 8,
                         max_minutes=args.max_minutes or 60, resume=args.resume,
                         quick=args.quick)
    elif args.config is None:
        raise SystemExit(f"train {args.task} needs --config FILE")
    elif "headline" in args.task:
        from training.headline.train import train

        choice = args.variant if args.task == "headline" else args.strategy
        he_base = args.variant if args.task != "headline" and args.variant else "transformer"
        train(args.config, args.task, choice, args.smooth_alpha, quick=args.quick,
              resume=args.resume, out_dir=args.out, epochs=args.epochs,
              pretrain_epochs=args.pretrain_epochs, he_base=he_base, copy=args.copy,
              init=args.init)
    elif args.task == "hashtag":
        from training.hashtag.train import train as train_hashtag

        train_hashtag(args.config, args.variant, args.similarity, quick=args.quick,
                      resume=args.resume, out_dir=args.out, epochs=args.epochs, copy=args.copy,
                      data={"train_files": args.train_file, "dev_ood_file": args.dev_ood_file,
                            "max_per_target": args.max_per_target},
                      max_minutes=args.max_minutes)
    else:
        from training.pos.train import train

        train(args.config, quick=args.quick, resume=args.resume, out_dir=args.out,
              epochs=args.epochs, init=args.init, seed=args.seed)
    return 0
