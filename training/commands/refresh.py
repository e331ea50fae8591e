"""``publish``, ``switch``, ``rollback`` and ``inspect versions``: the refresh path's CLI
(training/publish.py does the work). Progress goes to stderr, the result is the last
stdout line as JSON.

The Triton they switch is the configured one (``NLP_TRITON_HOST`` and
``NLP_TRITON_HTTP_PORT``, default 127.0.0.1:8000; admin key from
``NLP_TRITON_ADMIN_KEY`` or the local stack's state dir) unless ``--triton`` names another;
``--no-switch`` only stages.
"""

from __future__ import annotations

import argparse
import json
import sys
from pathlib import Path

from nlp_models import registry
from services.settings import Settings
from training.gate import GateSet
from training.publish import (
    EXIT_ERROR,
    EXIT_NOT_SWITCHED,
    EXIT_PUBLISHED,
    EXIT_REFUSED,
    Options,
    PublishError,
    publish,
    rollback,
    switch,
    versions,
)

COMMANDS = ("publish", "switch", "rollback")


def add_parsers(sub: argparse._SubParsersAction) -> None:
    models = list(registry.MODELS)
    pub = sub.add_parser("publish", help="gate a checkpoint against the version Triton serves, "
                         "publish it as the next one and switch Triton to it "
                         "(training/publish.py); last stdout line is JSON; exit 0 published "
                         "(and serving unless --no-switch), 3 refused by the gate, 4 staged "
                         "but Triton did not answer, 1 error")
    pub.add_argument("model", choices=models, help="Triton model")
    pub.add_argument("--checkpoint", required=True, help="e.g. runs/<run>/best.pt")
    _triton_options(pub)
    pub.add_argument("--force", action="store_true",
                     help="publish even if the gate finds the candidate worse")
    pub.add_argument("--gate-data", action="append", default=[], metavar="FILE[:OPTION]",
                     help="gate on FILE instead of the model's dev sets (repeatable); OPTION "
                     "is the tagset for pos_tagger (ptb|ark), else the language (default: "
                     "the checkpoint's)")
    pub.add_argument("--gate-size", type=int,
                     help="examples scored per gate set, the first N (default: all for "
                     "pos_tagger, 300 for the generators)")
    pub.add_argument("--keep", type=int, default=2,
                     help="newest versions kept on disk besides the serving one and the one "
                     "a rollback returns to (at least 2)")

    sw = sub.add_parser("switch", help="make Triton serve the newest version on disk (one "
                        "published with --no-switch or while Triton was down); exit 0 or 1")
    sw.add_argument("model", choices=models, help="Triton model")
    _triton_options(sw, switch=False)

    back = sub.add_parser("rollback", help="serve again the last version that served before "
                          "the serving one; last stdout line is JSON")
    back.add_argument("model", choices=models, help="Triton model")
    back.add_argument("--to", type=int, help="version (default: the newest below the serving "
                      "one that has served)")
    _triton_options(back)


def _triton_options(parser: argparse.ArgumentParser, switch: bool = True) -> None:
    parser.add_argument("--repository", help="Triton model repository (default: "
                        "NLP_MODEL_REPOSITORY, model_repository)")
    parser.add_argument("--triton", metavar="HOST:PORT",
                        help="Triton's HTTP address (default: NLP_TRITON_HOST:"
                        "NLP_TRITON_HTTP_PORT, 127.0.0.1:8000); its admin key from "
                        "NLP_TRITON_ADMIN_KEY or the local stack's state dir")
    if switch:
        parser.add_argument("--no-switch", action="store_true",
                            help="change the repository only: Triton keeps serving the old "
                            "version until `python -m training switch MODEL` or a restart")


def options(args: argparse.Namespace) -> Options:
    gates = tuple(GateSet(spec, Path(spec.rpartition(":")[0] or spec),
                          spec.rpartition(":")[2] if ":" in spec else "")
                  for spec in getattr(args, "gate_data", []))
    settings = Settings.from_env()
    return Options(Path(args.repository or settings.model_repository),
                   args.triton or settings.triton_http_url,
                   switch=not getattr(args, "no_switch", False),
                   force=getattr(args, "force", False), gate_data=gates,
                   gate_size=getattr(args, "gate_size", None), keep=getattr(args, "keep", 2),
                   command="python -m training " + " ".join(sys.argv[1:]))


def run(args: argparse.Namespace) -> int:
    """Exit status: 0 done, 1 error, 3 refused by the gate, 4 published but not serving."""
    base: dict = {"model": args.model}
    opts = options(args)
    try:
        if args.command == "rollback":
            result = rollback(args.model, args.to, opts)
        elif args.command == "switch":
            result = switch(args.model, opts)
        else:
            base.update(published=False, version=None, previous_version=None)
            result = publish(args.model, args.checkpoint, opts)
    except PublishError as exc:
        print(f"error: {exc}", file=sys.stderr)
        print(json.dumps({**base, "reason": str(exc)}))
        return EXIT_ERROR
    print(json.dumps(result, ensure_ascii=False))
    if args.command != "publish":
        return EXIT_PUBLISHED
    if not result["published"]:
        return EXIT_REFUSED
    if opts.switch and not result["switched"]:
        print(f"error: {result['reason']}", file=sys.stderr)
        return EXIT_NOT_SWITCHED
    return EXIT_PUBLISHED


def inspect_versions(repository: str | None, triton: str | None) -> dict:
    """``inspect versions``: per model, every version on disk and whether it serves,
    served before, or never served."""
    settings = Settings.from_env()
    opts = Options(Path(repository or settings.model_repository),
                   triton or settings.triton_http_url)
    return {model: versions(model, opts) for model in registry.MODELS}
