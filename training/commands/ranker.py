"""``python -m training ranker collect|fit|evaluate``: the headline ranker, offline (issue 83,
stage 2; training/headline/ranker.py). Each prints its result as JSON."""

from __future__ import annotations

import argparse
import json
from pathlib import Path

from training.commands import usage_error

COMMANDS = ("ranker",)


def add_parsers(sub: argparse._SubParsersAction) -> None:
    p = sub.add_parser("ranker", help="headline (English full): propose candidates and fit or "
                       "measure one learned ranker over them (nlp_models/headline/ranker.py)")
    p.add_argument("step", choices=["collect", "fit", "evaluate"])
    p.add_argument("--model", help="collect: an English generator file with a compressor "
                   "(python -m training lead --spans compressed)")
    p.add_argument("--data", help="collect: JSONL pairs {article, headline}")
    p.add_argument("--limit", type=int, default=0, help="collect: the first N pairs")
    p.add_argument("--every", type=int, default=1, metavar="K",
                   help="collect: every K-th pair (spread over a file ordered by source)")
    p.add_argument("--target", type=int, default=12,
                   help="collect: the house's length in words (12: un-adapted)")
    p.add_argument("--noun-groups", action="store_true",
                   help="collect: compressions keep noun groups whole or with their heads, "
                   "prepositions with their objects (the serving POS tagger's tags)")
    p.add_argument("--candidates", action="append", type=Path, metavar="FILE",
                   help="fit, evaluate: what collect wrote (repeatable); collect: where to write")
    p.add_argument("--ranker", type=Path, help="fit: where to write; evaluate: what to read")
    p.add_argument("--show", type=int, default=0, metavar="N",
                   help="evaluate: print the first N articles' picks to stderr")


def run(args: argparse.Namespace) -> int:
    from training.headline import ranker as rk

    if args.step == "collect":
        if not (args.model and args.data and args.candidates):
            return usage_error("ranker", "collect needs --model, --data and --candidates")
        from nlp_models.headline.predictor import HeadlinePredictor
        from training.headline.compression_eval import ptb_tagger

        pairs = [json.loads(line) for line in open(args.data) if line.strip()]
        pairs = pairs[:: args.every][: args.limit or None]
        pred = HeadlinePredictor.load(args.model)
        tagger = ptb_tagger() if args.noun_groups else None
        count = rk.collect(pred, pairs, args.target, args.candidates[0], tagger)
        print(json.dumps({"articles": count, "out": str(args.candidates[0])}))
        return 0
    if not (args.candidates and args.ranker):
        return usage_error("ranker", f"{args.step} needs --candidates and --ranker")
    rows = rk.read_rows(args.candidates)
    if args.step == "fit":
        ranker = rk.fit(rows)
        args.ranker.write_text(json.dumps(ranker.to_state(), indent=1))
        print(json.dumps({"articles": len(rows), **ranker.to_state()}))
        return 0
    from nlp_models.headline.ranker import Ranker

    ranker = Ranker.from_state(json.loads(args.ranker.read_text()))
    print(json.dumps(rk.evaluate(rows, ranker, show=args.show)))
    return 0
