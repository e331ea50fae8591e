"""Training CLI: train, evaluate and publish the pipeline's models.

    python -m training train pos --config training/configs/pos_dcnn.toml [--quick] [--resume]
        [--init CHECKPOINT] [--seed N]
    python -m training data hashtag --out DIR [--lang en zh]
    python -m training data hashtag-stream --out data/hashtag_stream
    python -m training data pos --out data/pos --ewt UD_English-EWT --gum UD_English-GUM
    python -m training data headline-sina --sina SINA_CHECKOUT --out data/headline
    python -m training data headline-portal --portal PORTAL_CHECKOUT --out data/headline
    python -m training data headline-newsrooms --out data/newsrooms [--sina SINA_CHECKOUT]
    python -m training data pos-pseudo --teacher A.pt --teacher B.pt --out data/pos/pseudo
        [--tweets 8000] [--tagset ptb|ark]
    python -m training train hashtag --config training/configs/hashtag_en.toml
        [--variant transformer|softbase|hardbase|soft|hard] [--similarity euclidean|...]
        [--copy] [--train-file FILE] [--dev-ood-file FILE] [--max-per-target N] [--max-minutes N]
    python -m training evaluate hashtag --data FILE.jsonl --lang en|zh [--model PATH]
        [--prior-weight W] [--predictions FILE]
    python -m training tune hashtag --checkpoint CKPT --dev FILE [--dev FILE] --out TUNED.pt
        [--max-len N]
    python -m training tune hashtag-memory --data DEV_STREAM.jsonl --lang en|zh [--limit N]
        [--out GRID.json]
    python -m training baseline hashtag --data FILE.jsonl --lang en|zh [--train-file FILE]
        [--dev-ood-file FILE] [--max-per-target N]
    python -m training evaluate pos --data FILE.conll --tagset ptb|ark [--model PATH] [--raw]
    python -m training baseline pos --data FILE.conll --tagset ptb|ark
    python -m training inspect pos [--model PATH]
    python -m training embeddings pos [--out runs/embeddings/tweets_w2v200.npz] [--dim 200]
    python -m training train headline --config training/configs/headline_en.toml
        [--variant xl-cc|pointer-generator|transformer] [--smooth-alpha A]
    python -m training train constrained-headline --config training/configs/headline_en.toml
        [--strategy tok-b|tok-f|seq-b|seq-f|mixed|he] [--copy]
    python -m training evaluate headline --data FILE.jsonl [--model PATH] [--beam 4]
    python -m training evaluate constrained-headline --data FILE.jsonl --strategy tok-b [--beam 3]
    python -m training baseline headline --data FILE.jsonl
    python -m training baseline constrained-headline --data FILE.jsonl
    python -m training compare headline|constrained-headline --data FILE.jsonl --model A --model B
        [--strategy tok-b] [--start N]
    python -m training publish pos_tagger|hashtag_generator|headline_generator|
        constrained_headline_generator --checkpoint runs/<run>/best.pt
        [--repository model_repository] [--triton HOST:PORT] [--no-switch] [--force]
        [--gate-data FILE[:OPT]]
    python -m training adapt headline|constrained-headline (--data ARCHIVE.jsonl | --from-index
        [--source S] [--since YYYY-MM-DD]) --out DIR [--lang en|zh] [--minutes 20] [--mix 1.0]
    python -m training switch MODEL [--triton HOST:PORT]
    python -m training rollback MODEL [--to VERSION] [--triton HOST:PORT] [--no-switch]
    python -m training inspect versions [--triton HOST:PORT]
    python -m training data headline --out DIR [--data DATA_DIR] [--lang en|zh]
    python -m training whole-words --checkpoint CKPT --out runs/<run>_ww/best.pt
    python -m training picker --config training/configs/picker_zh.toml --checkpoint CKPT
        --out runs/<run>/best.pt
    python -m training picker --checkpoint CKPT --rules N --out runs/<run>/best.pt
    python -m training lead --checkpoint CKPT --margin M --length-bonus B --out runs/<run>/best.pt
        [--spans clauses|trimmed] [--target WORDS]
    python -m training lead --checkpoint CKPT --tune-on HELD_OUT.jsonl --out runs/<run>/best.pt
"""

from __future__ import annotations

import argparse
import json

from training.commands import adapt, data, headline_rules, refresh, tune
from training.paths import REPO_ROOT

#: subcommands that live in their own module (add_parsers, COMMANDS, run)
COMMAND_MODULES = (refresh, adapt, data, headline_rules, tune)


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(prog="python -m training", description=__doc__,
                                     formatter_class=argparse.RawDescriptionHelpFormatter)
    sub = parser.add_subparsers(dest="command", required=True)

    p_train = sub.add_parser("train", help="train a model from a config file")
    p_train.add_argument("task", choices=["pos", "hashtag", "headline", "constrained-headline"])
    p_train.add_argument("--config", required=True, help="TOML file under training/configs/")
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
                         help="hashtag: wall-clock cap (overrides the config's max_minutes)")
    p_train.add_argument("--quick", action="store_true", help="about one minute, for smoke tests")
    p_train.add_argument("--resume", action="store_true", help="continue from runs/<name>/last.pt")
    p_train.add_argument("--seed", type=int,
                         help="pos: override the config's seed (run name gets _seedN)")
    p_train.add_argument("--init", metavar="CHECKPOINT",
                         help="headlines, pos: fine-tune this checkpoint (its architecture, "
                              "weights and vocabulary) instead of training from scratch")
    p_train.add_argument("--out", default=str(REPO_ROOT / "runs"), help="runs directory")

    p_eval = sub.add_parser("evaluate", help="score a model; last stdout line is JSON")
    p_eval.add_argument("task", choices=["pos", "hashtag", "headline", "constrained-headline"])
    p_eval.add_argument("--data", required=True,
                        help="pos: CoNLL TOKEN<TAB>TAG lines; hashtag: JSONL {text, hashtags}; "
                        "headlines: JSONL {article, headline, phrase}")
    p_eval.add_argument("--tagset", choices=["ptb", "ark"], help="pos: which tags to score")
    p_eval.add_argument("--raw", action="store_true",
                        help="pos: tag each sentence as text through the served tokenizer "
                        "(gold tokens joined by spaces); a token split differently is wrong")
    p_eval.add_argument("--lang", choices=["en", "zh"],
                        help="hashtag: language of the posts; headlines: default guessed")
    p_eval.add_argument("--model", help="checkpoint (default: the newest shipped version)")
    p_eval.add_argument("--beam", type=int,
                        help="beam size (hashtag 20 as the paper; headline 4; constrained 3)")
    p_eval.add_argument("--strategy", choices=["seq-b", "seq-f", "tok-b", "tok-f"],
                        help="constrained-headline: Seq2BF generation order")
    p_eval.add_argument("--n-best", type=int, default=10,
                        help="hashtag: sequences pooled for F1@k (paper: 10)")
    p_eval.add_argument("--unsupported-penalty", type=float, metavar="X",
                        help="headline (English): log-probability a name the article lacks "
                             "costs in the beam (default: the checkpoint's)")
    p_eval.add_argument("--length-penalty", type=float, metavar="A",
                        help="headline: alpha of beam search's length penalty (default: the "
                             "checkpoint's, else per language: decode.length_penalty)")
    p_eval.add_argument("--prior-weight", type=float, metavar="W",
                        help="hashtag: re-rank with log p(y|post) - W log p(y|empty post) "
                        "(default: the checkpoint's, set by `tune hashtag`)")
    p_eval.add_argument("--allow-repeats", action="store_true",
                        help="headlines: switch off the rules that no English word and no "
                             "Chinese character trigram is generated twice (to measure "
                             "what the rules do)")
    p_eval.add_argument("--predictions", metavar="FILE",
                        help="headlines: write one JSON line per article "
                        "(article_id, reference, generated); hashtag: per post (text, "
                        "references, generated)")
    p_eval.add_argument("--threads", type=int, default=2,
                        help="hashtag: torch threads (1 on a busy machine)")
    p_eval.add_argument("--train-data", action="append", metavar="FILE",
                        help="headlines: training JSONL whose words are the vocabulary for "
                        "`degenerate` (repeatable; default <data>/headline/<lang>/train.jsonl)")
    p_eval.add_argument("--min-count", type=int, default=1, metavar="N",
                        help="headlines: with --train-data, only words seen N times or more")

    p_cmp = sub.add_parser("compare", help="headlines: two models on the same articles, the "
                           "difference with a paired-bootstrap interval; last line is JSON")
    p_cmp.add_argument("task", choices=["headline", "constrained-headline"])
    p_cmp.add_argument("--data", required=True, help="JSONL {article, headline, phrase}")
    p_cmp.add_argument("--model", action="append", required=True,
                       help="checkpoint; give it twice, A then B (the difference is B - A)")
    p_cmp.add_argument("--strategy", choices=["seq-b", "seq-f", "tok-b", "tok-f"],
                       help="constrained-headline: Seq2BF generation order")
    p_cmp.add_argument("--beam", type=int, help="beam size (headline 4; constrained 3)")
    p_cmp.add_argument("--lang", choices=["en", "zh"], help="default guessed from the data")
    p_cmp.add_argument("--start", type=int, default=0,
                       help="first line used (dev lines 0-299 select checkpoints in training)")
    p_cmp.add_argument("--resamples", type=int, default=1000, help="bootstrap resamples")
    p_cmp.add_argument("--allow-repeats", action="store_true",
                       help="switch off the decoding rules against repeats, as in evaluate")

    for module in COMMAND_MODULES:
        module.add_parsers(sub)

    p_base = sub.add_parser("baseline", help="simple baselines (pos: most frequent tag; "
                            "hashtag: Ext.TFIDF and the most frequent training hashtags; "
                            "headline: Lead-1; constrained-headline: the phrase alone and the "
                            "first sentence with it); last line is JSON")
    p_base.add_argument("task", choices=["pos", "hashtag", "headline", "constrained-headline"])
    p_base.add_argument("--data", required=True, help="CoNLL file (pos) or JSONL")
    p_base.add_argument("--tagset", choices=["ptb", "ark"], help="pos: which tags to score")
    p_base.add_argument("--train-file", action="append", metavar="FILE",
                        help="hashtag: learn from these pairs too, as `train hashtag` does")
    p_base.add_argument("--dev-ood-file", metavar="FILE",
                        help="hashtag: drop the training pairs of this file's sources, as "
                        "`train hashtag` does")
    p_base.add_argument("--max-per-target", type=int, metavar="N",
                        help="hashtag: cap recurring target sequences, as `train hashtag` does")
    p_base.add_argument("--lang", choices=["en", "zh"],
                        help="hashtag: language (Ext.TFIDF); headline: default guessed")

    p_insp = sub.add_parser("inspect", help="pos: DCNN context vectors and scalings per "
                            "domain; versions: every model version on disk and whether it "
                            "serves, served or never served")
    p_insp.add_argument("task", choices=["pos", "versions"])
    p_insp.add_argument("--model", help="pos: dcnn checkpoint (default: the shipped one)")
    p_insp.add_argument("--repository", help="versions: Triton model repository (default: "
                        "NLP_MODEL_REPOSITORY, model_repository)")
    p_insp.add_argument("--triton", metavar="HOST:PORT",
                        help="versions: Triton's HTTP address (default: the configured one)")

    p_emb = sub.add_parser("embeddings", help="pos: word2vec on unlabeled tweets (gensim)")
    p_emb.add_argument("task", choices=["pos"])
    p_emb.add_argument("--out", default=str(REPO_ROOT / "runs" / "embeddings" /
                                            "tweets_w2v200.npz"))
    p_emb.add_argument("--dim", type=int, default=200)
    p_emb.add_argument("--epochs", type=int, default=5)

    args = parser.parse_args(argv)
    for module in COMMAND_MODULES:
        if args.command in module.COMMANDS:
            raise SystemExit(module.run(args))
    need = {"pos": "tagset", "hashtag": "lang",
            "constrained-headline": "strategy"}.get(getattr(args, "task", ""))
    if (need and args.command in ("evaluate", "baseline", "compare")
            and getattr(args, need, "") is None):
        parser.error(f"{args.command} {args.task} needs --{need}")
    if args.command == "compare" or (args.command in ("train", "evaluate", "baseline")
                                     and "headline" in args.task):
        headline_command(args)
    elif args.command == "train" and args.task == "hashtag":
        from training.hashtag.train import train as train_hashtag

        train_hashtag(args.config, args.variant, args.similarity, quick=args.quick,
                      resume=args.resume, out_dir=args.out, epochs=args.epochs, copy=args.copy,
                      data={"train_files": args.train_file, "dev_ood_file": args.dev_ood_file,
                            "max_per_target": args.max_per_target},
                      max_minutes=args.max_minutes)
    elif args.command == "train":
        from training.pos.train import train

        train(args.config, quick=args.quick, resume=args.resume, out_dir=args.out,
              epochs=args.epochs, init=args.init, seed=args.seed)
    elif args.command == "evaluate" and args.task == "hashtag":
        from training.hashtag.evaluate import evaluate as evaluate_hashtag

        print(json.dumps(evaluate_hashtag(args.data, args.lang, args.model, args.beam or 20,
                                          args.n_best, args.predictions, args.threads,
                                          args.prior_weight), ensure_ascii=False))
    elif args.command == "evaluate":
        from training.pos.evaluate import evaluate

        print(json.dumps(evaluate(args.data, args.tagset, args.model, args.raw)))
    elif args.command == "baseline" and args.task == "hashtag":
        from training.hashtag.baseline import evaluate_baseline as hashtag_baseline
        from training.hashtag.baseline import evaluate_oracle, evaluate_prior, training_pairs

        train = training_pairs(args.lang, {"train_files": args.train_file or [],
                                           "dev_ood_file": args.dev_ood_file,
                                           "max_per_target": args.max_per_target})
        print(json.dumps({"ext_tfidf": hashtag_baseline(args.data, args.lang, train),
                          "most_frequent": evaluate_prior(args.data, args.lang, train),
                          "post_oracle": evaluate_oracle(args.data, args.lang)},
                         ensure_ascii=False))
    elif args.command == "baseline":
        from training.pos.baseline import evaluate_baseline

        print(json.dumps(evaluate_baseline(args.data, args.tagset)))
    elif args.command == "embeddings":
        from training.pos.embeddings import train_embeddings

        print(json.dumps(train_embeddings(args.out, args.dim, args.epochs)))
    elif args.command == "inspect" and args.task == "versions":
        print(json.dumps(refresh.inspect_versions(args.repository, args.triton)))
    elif args.command == "inspect":
        from training.pos.inspect import inspect

        print(json.dumps(inspect(args.model), indent=1))


def headline_command(args: argparse.Namespace) -> None:
    if args.command == "train":
        from training.headline.train import train

        choice = args.variant if args.task == "headline" else args.strategy
        he_base = args.variant if args.task != "headline" and args.variant else "transformer"
        train(args.config, args.task, choice, args.smooth_alpha, quick=args.quick,
              resume=args.resume, out_dir=args.out, epochs=args.epochs,
              pretrain_epochs=args.pretrain_epochs, he_base=he_base, copy=args.copy,
              init=args.init)
    elif args.command == "evaluate" and args.task == "headline":
        from training.headline.evaluate import evaluate_headline

        print(json.dumps(evaluate_headline(args.data, args.model, args.beam or 4, args.lang,
                                           args.allow_repeats, args.predictions,
                                           args.train_data, args.unsupported_penalty,
                                           args.length_penalty, args.min_count)))
    elif args.command == "evaluate":
        from training.headline.evaluate import evaluate_constrained

        print(json.dumps(evaluate_constrained(args.data, args.strategy, args.model,
                                              args.beam or 3, args.lang, args.allow_repeats,
                                              args.predictions, args.train_data,
                                              args.min_count)))
    elif args.command == "compare":
        from training.headline.compare import compare

        strategy = args.strategy if args.task == "constrained-headline" else None
        print(json.dumps(compare(args.data, args.model, strategy, args.beam, args.lang,
                                 args.start, args.resamples, args.allow_repeats)))
    elif args.command == "baseline" and args.task == "headline":
        from training.headline.evaluate import evaluate_lead

        print(json.dumps(evaluate_lead(args.data, args.lang)))
    else:
        from training.headline.evaluate import evaluate_phrase_baselines

        print(json.dumps(evaluate_phrase_baselines(args.data, args.lang)))


if __name__ == "__main__":
    main()
