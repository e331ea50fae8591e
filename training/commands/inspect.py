"""``inspect``: the POS tagger's DCNN context vectors and scalings per domain; the
headline decoders' rules in the order they apply; or every model version on disk and
whether it serves."""

from __future__ import annotations

import argparse
import json

from nlp_models import registry
from training.commands import refresh

COMMANDS = ("inspect",)
HEADLINE_MODELS = (registry.HEADLINE.name, registry.CONSTRAINED.name)


def add_parsers(sub: argparse._SubParsersAction) -> None:
    p_insp = sub.add_parser("inspect", help="pos: DCNN context vectors and scalings per "
                            "domain; headline: the decoding rules each served headline file "
                            "(or --model) applies, in order; versions: every model version "
                            "on disk and whether it serves")
    p_insp.add_argument("task", choices=["pos", "headline", "versions"])
    p_insp.add_argument("--model", help="pos: dcnn checkpoint; headline: a headline "
                        "checkpoint (default: the served files of both headline models)")
    p_insp.add_argument("--repository", help="versions: Triton model repository (default: "
                        "NLP_MODEL_REPOSITORY, model_repository)")
    p_insp.add_argument("--triton", metavar="HOST:PORT",
                        help="versions: Triton's HTTP address (default: the configured one)")


def headline_rules(model: str | None) -> dict[str, list[str]]:
    """Per checkpoint, its decoder's rules in order (``HeadlinePredictor.decoding_rules``)."""
    from nlp_models.headline.predictor import HeadlinePredictor
    from training.repository import shipped

    paths = ([model] if model else
             [str(shipped(m, f"headline_{lang}.pt")) for m in HEADLINE_MODELS
              for lang in ("en", "zh")])
    return {path: HeadlinePredictor.load(path).decoding_rules() for path in paths}


def run(args: argparse.Namespace) -> int:
    if args.task == "versions":
        print(json.dumps(refresh.inspect_versions(args.repository, args.triton)))
    elif args.task == "headline":
        for path, rules in headline_rules(args.model).items():
            print(path)
            for number, rule in enumerate(rules, 1):
                print(f"  {number}. {rule}")
    else:
        from training.pos.inspect import inspect

        print(json.dumps(inspect(args.model), indent=1))
    return 0
