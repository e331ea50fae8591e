"""``evaluate``, ``baseline`` and ``compare``: score models and the simple baselines they
must beat; the last stdout line is JSON."""

from __future__ import annotations

import argparse
import json

from training.commands import usage_error

COMMANDS = ("evaluate", "baseline", "compare")
#: the option each task cannot do without
NEEDS = {"pos": "tagset", "hashtag": "lang", "constrained-headline": "strategy"}


def add_parsers(sub: argparse._SubParsersAction) -> None:
    p_eval = sub.add_parser("evaluate", help="score a model; last stdout line is JSON")
    p_eval.add_argument("task", choices=["pos", "hashtag", "headline", "constrained-headline",
                                         "compressor"])
    p_eval.add_argument("--data", required=True,
                        help="pos: CoNLL TOKEN<TAB>TAG lines; hashtag: JSONL {text, hashtags}; "
                        "headlines: JSONL {article, headline, phrase}; compressor: the "
                        "directory `data compression` wrote")
    p_eval.add_argument("--source", action="append", metavar="NAME",
                        help="compressor: a held-out source (repeatable; default all four)")
    p_eval.add_argument("--show", type=int, default=0, metavar="N",
                        help="compressor: print N compressions of each source to stderr")
    p_eval.add_argument("--noun-groups", action="store_true",
                        help="compressor: also at the house length with noun groups kept "
                        "whole or with their heads (the serving POS tagger's tags)")
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
                        help="headlines, full and constrained: alpha of beam search's length "
                             "penalty (default: the checkpoint's, else per language: "
                             "decode.length_penalty)")
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
    p_base.add_argument("--train-data", action="append", metavar="FILE",
                        help="headlines: training JSONL whose words are the vocabulary for "
                        "`degenerate`, as in evaluate (default <data>/headline/<lang>/train.jsonl)")


def run(args: argparse.Namespace) -> int:
    need = NEEDS.get(args.task)
    if need and getattr(args, need, "") is None:
        return usage_error(args.command, f"{args.command} {args.task} needs --{need}")
    if "headline" in args.task:
        print(json.dumps(headline(args)))
    elif args.task == "compressor":
        from pathlib import Path

        from training.headline.compression_eval import DEFAULT_SOURCES, evaluate, ptb_tagger

        if args.model is None:
            return usage_error(args.command, "evaluate compressor needs --model")
        tagger = ptb_tagger() if args.noun_groups else None
        print(json.dumps(evaluate(Path(args.model), Path(args.data),
                                  args.source or DEFAULT_SOURCES, args.show, tagger)))
    elif args.command == "evaluate" and args.task == "hashtag":
        from training.hashtag.evaluate import evaluate as evaluate_hashtag

        print(json.dumps(evaluate_hashtag(args.data, args.lang, args.model, args.beam or 20,
                                          args.n_best, args.predictions, args.threads,
                                          args.prior_weight), ensure_ascii=False))
    elif args.command == "evaluate":
        from training.pos.evaluate import evaluate

        print(json.dumps(evaluate(args.data, args.tagset, args.model, args.raw)))
    elif args.task == "hashtag":
        from training.hashtag.baseline import evaluate_baseline as hashtag_baseline
        from training.hashtag.baseline import evaluate_oracle, evaluate_prior, training_pairs

        train = training_pairs(args.lang, {"train_files": args.train_file or [],
                                           "dev_ood_file": args.dev_ood_file,
                                           "max_per_target": args.max_per_target})
        print(json.dumps({"ext_tfidf": hashtag_baseline(args.data, args.lang, train),
                          "most_frequent": evaluate_prior(args.data, args.lang, train),
                          "post_oracle": evaluate_oracle(args.data, args.lang)},
                         ensure_ascii=False))
    else:
        from training.pos.baseline import evaluate_baseline

        print(json.dumps(evaluate_baseline(args.data, args.tagset)))
    return 0


def headline(args: argparse.Namespace) -> dict:
    """``evaluate``, ``compare`` or ``baseline`` of a headline task."""
    if args.command == "evaluate" and args.task == "headline":
        from training.headline.evaluate import evaluate_headline

        return evaluate_headline(args.data, args.model, args.beam or 4, args.lang,
                                 args.allow_repeats, args.predictions, args.train_data,
                                 args.unsupported_penalty, args.length_penalty, args.min_count)
    if args.command == "evaluate":
        from training.headline.evaluate import evaluate_constrained

        return evaluate_constrained(args.data, args.strategy, args.model, args.beam or 3,
                                    args.lang, args.allow_repeats, args.predictions,
                                    args.train_data, args.min_count, args.length_penalty)
    if args.command == "compare":
        from training.headline.compare import compare

        strategy = args.strategy if args.task == "constrained-headline" else None
        return compare(args.data, args.model, strategy, args.beam, args.lang, args.start,
                       args.resamples, args.allow_repeats)
    if args.task == "headline":
        from training.headline.evaluate import evaluate_lead

        return evaluate_lead(args.data, args.lang, args.train_data)
    from training.headline.evaluate import evaluate_phrase_baselines

    return evaluate_phrase_baselines(args.data, args.lang, args.train_data)
