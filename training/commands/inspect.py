"""``inspect``: the POS tagger's DCNN context vectors and scalings per domain, or every
model version on disk and whether it serves."""

from __future__ import annotations

import argparse
import json

from training.commands import refresh

COMMANDS = ("inspect",)


def add_parsers(sub: argparse._SubParsersAction) -> None:
    p_insp = sub.add_parser("inspect", help="pos: DCNN context vectors and scalings per "
                            "domain; versions: every model version on disk and whether it "
                            "serves, served or never served")
    p_insp.add_argument("task", choices=["pos", "versions"])
    p_insp.add_argument("--model", help="pos: dcnn checkpoint (default: the shipped one)")
    p_insp.add_argument("--repository", help="versions: Triton model repository (default: "
                        "NLP_MODEL_REPOSITORY, model_repository)")
    p_insp.add_argument("--triton", metavar="HOST:PORT",
                        help="versions: Triton's HTTP address (default: the configured one)")


def run(args: argparse.Namespace) -> int:
    if args.task == "versions":
        print(json.dumps(refresh.inspect_versions(args.repository, args.triton)))
    else:
        from training.pos.inspect import inspect

        print(json.dumps(inspect(args.model), indent=1))
    return 0
