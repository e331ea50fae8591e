"""``data``: convert raw corpora into the training, dev and test files of the models
(each converter lives beside its model's training code). Progress goes to stderr, the
result (counts per source and rule) is the last stdout line as JSON."""

from __future__ import annotations

import argparse
import json
from pathlib import Path

from training.paths import data_dir

COMMANDS = ("data",)


def add_parsers(sub: argparse._SubParsersAction) -> None:
    p = sub.add_parser("data", help="convert the raw extra corpora and write held-out-"
                       "source dev sets: hashtag -> DIR/<lang>/{extra,dev_ood}.jsonl, "
                       "headline -> DIR/<lang>/{train_extra,dev_ood}.jsonl; pos -> gold PTB "
                       "tags from UD treebanks, DIR/ud_ewt/all.conll, DIR/ud_gum/open.conll; "
                       "pos-pseudo -> DIR/tweets.conll, raw tweets every --teacher tags "
                       "alike; headline-newsrooms -> DIR/<newsroom>/{archive,test}.jsonl; "
                       "compression -> DIR/{train,dev,test_<source>,lead_<source>}.jsonl; "
                       "last line is JSON counts")
    p.add_argument("task", choices=["hashtag", "hashtag-stream", "headline", "compression",
                                    "headline-sina", "headline-portal",
                                    "headline-newsrooms", "pos", "pos-pseudo"])
    p.add_argument("--out", required=True, help="output directory")
    p.add_argument("--lang", nargs="+", choices=["en", "zh"], default=["en", "zh"])
    p.add_argument("--ewt", type=Path, help="pos: checkout of UD_English-EWT")
    p.add_argument("--gum", type=Path, help="pos: checkout of UD_English-GUM")
    p.add_argument("--ewt-commit", help="pos: the EWT checkout's commit, for SOURCES.json")
    p.add_argument("--gum-commit", help="pos: the GUM checkout's commit, for SOURCES.json")
    p.add_argument("--sina", type=Path, help="headline-sina: checkout of "
                   "Patrick233/Cluster-Chinese-news-Article at d1badb6 (Chinese test "
                   "set of an unseen source -> DIR/zh/unseen_sina.jsonl)")
    p.add_argument("--portal", type=Path, help="headline-portal: checkout of "
                   "lzjqsdd/NewsSpider at 58c576e (Chinese test set of other unseen "
                   "sources -> DIR/zh/unseen_portal.jsonl)")
    p.add_argument("--teacher", action="append", default=[], metavar="CKPT",
                   help="pos-pseudo: a tagger checkpoint that votes (two or more)")
    p.add_argument("--tweets", type=int, default=8000,
                   help="pos-pseudo: how many unanimous tweets to keep")
    p.add_argument("--tagset", choices=["ptb", "ark"], default="ptb",
                   help="pos-pseudo: the head whose tags the teachers vote on")


def run(args: argparse.Namespace) -> int:
    if args.task == "hashtag-stream":
        from training.hashtag.streams import build as build_streams

        print(json.dumps(build_streams(data_dir(), Path(args.out))))
    elif args.task == "hashtag":
        from training.hashtag.extra import main as build_hashtag_data

        build_hashtag_data(args.out, args.lang)
    elif args.task == "compression":
        from training.headline.compression import build as build_compression

        print(json.dumps(build_compression(data_dir(), Path(args.out))))
    elif args.task == "headline-sina":
        from training.headline.sina import build as build_sina

        if args.sina is None:
            raise SystemExit("headline-sina needs --sina DIR")
        build_sina(args.sina, data_dir(), Path(args.out))
    elif args.task == "headline-newsrooms":
        from training.headline.newsrooms import build as build_newsrooms

        print(json.dumps(build_newsrooms(data_dir(), Path(args.out), sina=args.sina)))
    elif args.task == "headline-portal":
        from training.headline.portal import build as build_portal

        if args.portal is None:
            raise SystemExit("headline-portal needs --portal DIR")
        build_portal(args.portal, data_dir(), Path(args.out))
    elif args.task == "pos":
        from training.pos.treebanks import build as build_treebanks

        commits = {"ewt": args.ewt_commit, "gum": args.gum_commit}
        print(json.dumps(build_treebanks(Path(args.out), args.ewt, args.gum, commits)))
    elif args.task == "pos-pseudo":
        from training.pos.pseudo import main as build_pseudo

        build_pseudo(args.teacher, args.out, args.tweets, args.tagset)
    else:
        from training.headline.extra import build

        print(json.dumps(build(data_dir(), Path(args.out), args.lang), ensure_ascii=False))
    return 0
