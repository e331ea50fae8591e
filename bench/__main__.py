"""Benchmarks: each prints one JSON object, comparing serving paths measured in one run.

    python -m bench pos [--tweets 2000] [--skip-pipeline]
"""

from __future__ import annotations

import argparse
import json


def main() -> None:
    parser = argparse.ArgumentParser(prog="python -m bench", description=__doc__,
                                     formatter_class=argparse.RawDescriptionHelpFormatter)
    sub = parser.add_subparsers(dest="which", required=True)
    p_pos = sub.add_parser("pos", help="POS tagger: in process vs Triton vs pipeline vs naive")
    p_pos.add_argument("--tweets", type=int, default=2000)
    p_pos.add_argument("--skip-pipeline", action="store_true", help="only (a) and (b)")
    args = parser.parse_args()
    if args.which == "pos":
        from bench.pos import run

        print(json.dumps(run(args.tweets, args.skip_pipeline), indent=2))


if __name__ == "__main__":
    main()
