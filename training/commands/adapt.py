"""``adapt``: fine-tune a shipped headline generator on one newsroom's archive
(training/headline/adapt.py does the work). Progress goes to stderr, the result is the
last stdout line as JSON."""

from __future__ import annotations

import argparse
import json

from training.headline.adapt import AdaptOptions, adapt, index_rows, read_archive

COMMANDS = ("adapt",)
DEFAULTS = AdaptOptions()


def add_parsers(sub: argparse._SubParsersAction) -> None:
    p = sub.add_parser("adapt", help="fine-tune the served headline generator (full or "
                       "constrained) on a newsroom's own (article, headline) pairs, from a "
                       "file or the pipeline's articles index; writes DIR/best.pt for "
                       "`evaluate --model` and `publish`")
    p.add_argument("task", choices=["headline", "constrained-headline"])
    where = p.add_mutually_exclusive_group(required=True)
    where.add_argument("--data", metavar="ARCHIVE.jsonl",
                       help="the newsroom's pairs: article, headline[, phrase, date, id]")
    where.add_argument("--from-index", action="store_true",
                       help="the articles index's articles that arrived with a title "
                       "(NLP_ES_* settings say where Elasticsearch is)")
    p.add_argument("--source", help="--from-index: only this `source`")
    p.add_argument("--since", metavar="YYYY-MM-DD", help="--from-index: published on or after")
    p.add_argument("--lang", choices=["en", "zh"], default="en")
    p.add_argument("--out", required=True, metavar="DIR", help="e.g. runs/adapt_<newsroom>")
    p.add_argument("--base", metavar="CKPT",
                   help="checkpoint to adapt (default: the served one for the task and --lang)")
    p.add_argument("--minutes", type=float, default=DEFAULTS.minutes,
                   help=f"time budget (default {DEFAULTS.minutes:g})")
    p.add_argument("--epochs", type=int, default=DEFAULTS.epochs)
    p.add_argument("--lr", type=float, default=DEFAULTS.lr)
    p.add_argument("--mix", type=float, default=DEFAULTS.mix,
                   help="general training pairs per newsroom pair, against forgetting "
                   f"(default {DEFAULTS.mix:g}; 0: none)")
    p.add_argument("--holdout", type=float, default=DEFAULTS.holdout,
                   help="newest share of the archive held out for selection and the gate "
                   f"(default {DEFAULTS.holdout:g}; 50 to 300 pairs)")
    p.add_argument("--seed", type=int, default=DEFAULTS.seed)
    p.add_argument("--resume", action="store_true", help="continue DIR/last.pt")


def run(args: argparse.Namespace) -> int:
    opts = AdaptOptions(minutes=args.minutes, epochs=args.epochs, lr=args.lr, mix=args.mix,
                        holdout=args.holdout, seed=args.seed)
    if args.from_index:
        from services.config import PipelineConfig
        from services.es.bulk import make_client

        cfg = PipelineConfig.from_env()
        prefix = cfg.article_index_prefix
        rows = index_rows(make_client(cfg.servers.es_url), prefix, args.source, args.since,
                          args.lang)
        origin = {"index": f"{prefix}-*", "source": args.source, "since": args.since}
        files: list[str] = []
    else:
        rows, origin, files = read_archive(args.data), {"data": args.data}, [args.data]
    result = adapt(args.task, rows, args.out, args.lang, opts, args.base, args.resume, files,
                   origin)
    print(json.dumps(result))
    return 0
