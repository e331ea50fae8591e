"""Benchmarks: each prints one JSON object, comparing serving paths measured in one run.

    python -m bench pipeline [--tweets 8000] [--with-hashtags] [--workers 1]
    python -m bench pos [--tweets 2000] [--skip-pipeline]
    python -m bench pos-peer [--data FILE --tagset ptb|ark|universal ...] [--repeats 3]
                             [--model CKPT]
    python -m bench hashtag [--posts 1000] [--beam 4] [--skip-pipeline]
    python -m bench hashtag-stream --data FILE.jsonl --lang en|zh [--step 10 | --rate N]
                             [--limit N] [--tagged-only] [--predictions OUT.jsonl]
                             [--no-generator-only]
    python -m bench headline [--lang en|zh] [--articles 30] [--words 400] [--chars 800]
                             [--skip-pipeline]
    python -m bench headline-api [--requests 32] [--words 400] [--articles 8]
    python -m bench faults [--posts 5000] [--rate 100] [--only worker_kill,...]
    python -m bench headline-api-overload [--clients 20] [--seconds 30] [--words 400]
    python -m bench headline-api-reconnect [--down 40]
    python -m bench backfill [--posts 3000] [--wait 420] [--producer-clock]
"""

from __future__ import annotations

import argparse
import json


def main() -> None:
    parser = argparse.ArgumentParser(prog="python -m bench", description=__doc__,
                                     formatter_class=argparse.RawDescriptionHelpFormatter)
    sub = parser.add_subparsers(dest="which", required=True)
    p_pipe = sub.add_parser("pipeline", help="posts pipeline: in process vs Triton vs our "
                            "Faust worker vs a hand-written peer vs naive, with CPU per tweet "
                            "per process")
    p_pipe.add_argument("--tweets", type=int, default=8000)
    p_pipe.add_argument("--with-hashtags", action="store_true",
                        help="POS tagger + hashtag generator + memory (default: POS only)")
    p_pipe.add_argument("--workers", type=int, default=1,
                        help="Faust workers for (c), scaled out on the same machine")
    p_pos = sub.add_parser("pos", help="POS tagger: in process vs Triton vs pipeline vs naive")
    p_pos.add_argument("--tweets", type=int, default=2000)
    p_pos.add_argument("--skip-pipeline", action="store_true", help="only (a) and (b)")
    p_peer = sub.add_parser("pos-peer", help="POS tagger beside the ARK tagger (Owoputi et "
                            "al. 2013): accuracy on ARK tags and tokens/s, same tweets")
    p_peer.add_argument("--data", action="append", default=[], metavar="FILE",
                        help="repeatable, one --tagset each (default: RIT-Test, RIT-Dev, "
                        "NPSChat test, DAILY547, OCT27 test); CoNLL, or for universal the "
                        "Lowlands TSV (data/pos/lowlands/test.tsv)")
    p_peer.add_argument("--tagset", action="append", default=[],
                        choices=["ptb", "ark", "universal"],
                        help="gold tagset of the --data file at the same position")
    p_peer.add_argument("--repeats", type=int, default=3, help="timed passes per tagger")
    p_peer.add_argument("--ark-decoder", default="greedy", choices=["greedy", "viterbi"],
                        help="RunTagger's default: greedy")
    p_peer.add_argument("--model", metavar="CHECKPOINT",
                        help="our tagger's checkpoint, e.g. runs/<run>/best.pt (default: shipped)")
    p_tag = sub.add_parser("hashtag", help="POS + hashtags: in process vs Triton vs pipeline")
    p_tag.add_argument("--posts", type=int, default=1000)
    p_tag.add_argument("--beam", type=int, default=4, help="serving beam (Triton config: 4)")
    p_tag.add_argument("--skip-pipeline", action="store_true", help="only in process and Triton")
    p_stream = sub.add_parser("hashtag-stream", help="suggested hashtags on a time-ordered "
                              "stream through the pipeline (hashtag memory on) vs trending, "
                              "TF-IDF and the generator alone; last line is JSON")
    p_stream.add_argument("--data", required=True, help="a stream of `python -m training data "
                          "hashtag-stream` (shared hashtag format + created_at, time order)")
    p_stream.add_argument("--lang", required=True, choices=["en", "zh"])
    p_stream.add_argument("--step", type=int, default=10,
                          help="produce up to the N-th next tagged post, wait until it is "
                          "searchable, go on (default 10; 0: use --rate)")
    p_stream.add_argument("--rate", type=float, default=20.0,
                          help="with --step 0: posts produced per second (a fast replay "
                          "hides the last seconds' posts from the memory)")
    p_stream.add_argument("--tagged-only", action="store_true",
                          help="produce only the posts that carry hashtags (what the memory "
                          "remembers and what is scored)")
    p_stream.add_argument("--limit", type=int, help="first N posts of the file")
    p_stream.add_argument("--predictions", metavar="OUT.jsonl",
                          help="write each scored post with its suggestions")
    p_stream.add_argument("--no-generator-only", action="store_true",
                          help="skip the second pipeline run with the memory off")
    p_head = sub.add_parser("headline", help="headline generators: in process vs Triton vs "
                            "pipeline")
    p_head.add_argument("--articles", type=int, default=30)
    p_head.add_argument("--words", type=int, default=400, help="words per English article")
    p_head.add_argument("--lang", choices=("en", "zh"), default="en")
    p_head.add_argument("--chars", type=int, default=800, help="characters per Chinese article")
    p_head.add_argument("--skip-pipeline", action="store_true", help="only in process and Triton")
    p_api = sub.add_parser("headline-api", help="gRPC headline API at concurrency 1/4/16 vs "
                           "in process")
    p_api.add_argument("--requests", type=int, default=32, help="requests per concurrency level")
    p_api.add_argument("--words", type=int, default=400, help="words per article")
    p_api.add_argument("--articles", type=int, default=8, help="distinct articles, cycled")
    p_faults = sub.add_parser("faults", help="fault suite: posts through the stack while "
                              "workers, servers and inputs break")
    p_faults.add_argument("--posts", type=int, default=5000, help="good posts per scenario")
    p_faults.add_argument("--rate", type=float, default=100, help="posts per second fed")
    p_faults.add_argument("--only", default="", help="comma-separated scenario names")
    p_faults.add_argument("--broker-down", type=float, default=90, help="seconds")
    p_faults.add_argument("--es-fault", type=float, default=30, help="seconds of 429s")
    p_faults.add_argument("--pairs", type=int, default=2,
                          help="clean/malformed runs alternated this many times")
    p_over = sub.add_parser("headline-api-overload", help="gRPC headline API, many clients "
                            "retrying at once: no queue vs queue + retry-after hint")
    p_over.add_argument("--clients", type=int, default=20)
    p_over.add_argument("--seconds", type=float, default=30.0, help="per scenario")
    p_over.add_argument("--words", type=int, default=400, help="words per article")
    p_over.add_argument("--queue-wait", type=float, help="NLP_HEADLINE_QUEUE_WAIT of the "
                        "queue scenario (default: the server's)")
    p_back = sub.add_parser("headline-api-reconnect", help="gRPC headline API after a Triton "
                            "restart: gRPC's default reconnect backoff vs the channel options")
    p_back.add_argument("--down", type=float, default=40.0, help="seconds Triton stays down")
    p_fill = sub.add_parser("backfill", help="posts stamped with old creation times, sent "
                            "while no worker runs: deleted by retention, then indexed")
    p_fill.add_argument("--posts", type=int, default=3000)
    p_fill.add_argument("--wait", type=float, default=420,
                        help="seconds with no worker (the broker checks retention every 300)")
    p_fill.add_argument("--producer-clock", action="store_true",
                        help="the run's posts.raw stamped by the producer (CreateTime), as "
                        "before retention counted from arrival")
    args = parser.parse_args()
    if args.which == "faults":
        from bench.faults import run as run_faults

        result = run_faults(args.posts, args.rate, args.only, args.broker_down, args.es_fault,
                            pairs=args.pairs)
        print(json.dumps(result, indent=2))
        raise SystemExit(0 if result["all_targets_met"] else 1)
    if args.which == "pipeline":
        from bench.pipeline import run as run_pipeline

        print(json.dumps(run_pipeline(args.tweets, args.with_hashtags, args.workers), indent=2))
    elif args.which == "pos":
        from bench.pos import run

        print(json.dumps(run(args.tweets, args.skip_pipeline), indent=2))
    elif args.which == "pos-peer":
        from bench.pos_peer import run as run_peer
        from deploy.process import DeployError

        if len(args.data) != len(args.tagset):
            parser.error("give one --tagset per --data file")
        datasets = list(zip(args.data, args.tagset, strict=True)) or None
        try:
            result = run_peer(datasets, args.repeats, args.ark_decoder, args.model)
        except DeployError as exc:  # no Java / Maven / Maven Central: say so, no traceback
            raise SystemExit(f"python -m bench pos-peer: {exc}") from None
        print(json.dumps(result, indent=2))
    elif args.which == "hashtag":
        from bench.hashtag import run as run_hashtag

        print(json.dumps(run_hashtag(args.posts, args.skip_pipeline, args.beam), indent=2))
    elif args.which == "hashtag-stream":
        from bench.hashtag_stream import run as run_stream

        print(json.dumps(run_stream(args.data, args.lang, args.rate, args.step, args.limit,
                                    args.predictions, not args.no_generator_only,
                                    args.tagged_only)))
    elif args.which == "headline":
        from bench.headline import run as run_headline

        print(json.dumps(run_headline(args.articles, args.words, args.skip_pipeline, args.lang,
                                      args.chars), indent=2))
    elif args.which == "headline-api":
        from bench.headline_api import run as run_api

        print(json.dumps(run_api(args.requests, args.words, args.articles), indent=2))
    elif args.which == "headline-api-overload":
        from bench.headline_api_overload import run as run_overload

        print(json.dumps(run_overload(args.clients, args.seconds, args.words,
                                       args.queue_wait), indent=2))
    elif args.which == "backfill":
        from bench.backfill import run as run_backfill

        print(json.dumps(run_backfill(args.posts, args.wait, args.producer_clock)))
    elif args.which == "headline-api-reconnect":
        from bench.headline_api_reconnect import run as run_reconnect

        print(json.dumps(run_reconnect(args.down), indent=2))


if __name__ == "__main__":
    main()
