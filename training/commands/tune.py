"""``tune``: choose serving settings on dev data after training: the hashtag generator's
prior weight and threshold (a checkpoint carrying them), the learned hashtag merge's
weights and floors on a dev stream, or the headline compressor's run gap. Prints its result
as JSON."""

from __future__ import annotations

import argparse
import json

from training.commands import usage_error

COMMANDS = ("tune",)


def add_parsers(sub: argparse._SubParsersAction) -> None:
    p_tune = sub.add_parser("tune", help="hashtag: choose the served prior weight and "
                            "threshold on dev sets, writes a checkpoint carrying them; "
                            "hashtag-merge: fit the learned merge's weights and floors on a "
                            "dev stream; compressor: choose the run gap on dev pairs")
    p_tune.add_argument("task", choices=["hashtag", "hashtag-merge", "compressor"])
    p_tune.add_argument("--checkpoint", help="hashtag, compressor: e.g. runs/<run>/best.pt "
                        "(compressor: rewritten with the chosen run gap)")
    p_tune.add_argument("--dev", action="append", metavar="FILE",
                        help="hashtag: dev JSONL (repeat: in-distribution and held-out-source "
                        "dev)")
    p_tune.add_argument("--data", help="hashtag-merge: a dev stream of `data hashtag-stream`; "
                        "compressor: the directory `data compression` wrote (its dev.jsonl)")
    p_tune.add_argument("--lang", choices=["en", "zh"], help="hashtag-merge: its language")
    p_tune.add_argument("--limit", type=int, help="hashtag-merge: first N posts")
    p_tune.add_argument("--out", help="hashtag: e.g. runs/<run>/tuned.pt; hashtag-merge: the "
                        "model file whose language entry is written (e.g. "
                        "services/stream/hashtag_merge.json; default: none written)")
    p_tune.add_argument("--report", help="hashtag-merge: the full result, every floor tried, "
                        "as JSON")
    p_tune.add_argument("--cache", help="hashtag-merge: keep the replay (memory look-ups and "
                        "generated hashtags) in this file and reuse it on the next fit")
    p_tune.add_argument("--beam", type=int, default=4, help="the serving beam (default 4)")
    p_tune.add_argument("--n-best", type=int, default=3,
                        help="sequences whose hashtags are served (the served n_best, 3)")
    p_tune.add_argument("--max-len", type=int, metavar="N",
                        help="the beam's longest hypothesis in tokens (default: the model's "
                             "max_target)")
    p_tune.add_argument("--posts", type=int, default=1000, help="first N posts of each file")
    p_tune.add_argument("--held-out", metavar="FILE",
                        help="the --dev file from held-out sources, on which the "
                        "keyword and generator scores are calibrated (default: the "
                        "checkpoint's dev_ood_file)")
    p_tune.add_argument("--threads", type=int, default=2, help="torch threads")


def run(args: argparse.Namespace) -> int:
    if args.task == "compressor":
        from pathlib import Path

        from training.headline.compression import tune_gap

        if not (args.checkpoint and args.data):
            return usage_error("tune", "tune compressor needs --checkpoint and --data")
        print(json.dumps(tune_gap(Path(args.checkpoint), Path(args.data) / "dev.jsonl")))
    elif args.task == "hashtag-merge":
        from training.hashtag.merge_tune import main as tune_merge

        if not (args.data and args.lang):
            return usage_error("tune", "tune hashtag-merge needs --data and --lang")
        print(json.dumps(tune_merge(args.data, args.lang, args.limit, args.out, args.report,
                                    args.cache),
                         ensure_ascii=False))
    else:
        from training.hashtag.tune import tune

        if not (args.checkpoint and args.dev and args.out):
            return usage_error("tune", "tune hashtag needs --checkpoint, --dev and --out")
        print(json.dumps(tune(args.checkpoint, args.dev, args.out, args.beam, args.n_best,
                              args.posts, args.threads, args.max_len, args.held_out),
                         ensure_ascii=False))
    return 0
