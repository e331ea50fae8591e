"""Training CLI: train, evaluate and publish the pipeline's models.

    python -m training train pos --config training/configs/pos_dcnn.toml [--quick] [--resume]
        [--init CHECKPOINT] [--seed N]
    python -m training data hashtag --out DIR [--lang en zh]
    python -m training data hashtag-stream --out data/hashtag_stream
    python -m training data pos --out data/pos --ewt UD_English-EWT --gum UD_English-GUM
    python -m training data headline-sina --sina SINA_CHECKOUT --out data/headline
    python -m training data headline-portal --portal PORTAL_CHECKOUT --out data/headline
    python -m training data headline-newsrooms --out data/newsrooms [--sina SINA_CHECKOUT]
    python -m training data compression --out data/compression
    python -m training train compressor --data data/compression [--resume] [--max-minutes 60]
    python -m training evaluate compressor --data data/compression --model runs/compressor/best.pt
        [--source doj] [--show 20] [--noun-groups]
    python -m training data pos-pseudo --teacher A.pt --teacher B.pt --out data/pos/pseudo
        [--tweets 8000] [--tagset ptb|ark]
    python -m training train hashtag --config training/configs/hashtag_en.toml
        [--variant transformer|softbase|hardbase|soft|hard] [--similarity euclidean|...]
        [--copy] [--train-file FILE] [--dev-ood-file FILE] [--max-per-target N] [--max-minutes N]
    python -m training evaluate hashtag --data FILE.jsonl --lang en|zh [--model PATH]
        [--prior-weight W] [--predictions FILE]
    python -m training tune hashtag --checkpoint CKPT --dev FILE [--dev FILE] --out TUNED.pt
        [--max-len N]
    python -m training tune hashtag-merge --data DEV_STREAM.jsonl --lang en|zh [--limit N]
        [--out services/stream/hashtag_merge.json] [--report REPORT.json] [--cache R.pkl]
    python -m training baseline hashtag --data FILE.jsonl --lang en|zh [--train-file FILE]
        [--dev-ood-file FILE] [--max-per-target N]
    python -m training evaluate pos --data FILE.conll --tagset ptb|ark [--model PATH] [--raw]
    python -m training baseline pos --data FILE.conll --tagset ptb|ark
    python -m training inspect pos [--model PATH]
    python -m training inspect headline [--model PATH]
    python -m training embeddings pos [--out runs/embeddings/tweets_w2v200.npz] [--dim 200]
    python -m training train headline --config training/configs/headline_en.toml
        [--variant xl-cc|pointer-generator|transformer] [--smooth-alpha A]
    python -m training train constrained-headline --config training/configs/headline_en.toml
        [--strategy tok-b|tok-f|seq-b|seq-f|mixed|he] [--copy]
    python -m training evaluate headline --data FILE.jsonl [--model PATH] [--beam 4]
    python -m training evaluate constrained-headline --data FILE.jsonl --strategy tok-b [--beam 3]
    python -m training baseline headline --data FILE.jsonl [--train-data FILE]
    python -m training baseline constrained-headline --data FILE.jsonl [--train-data FILE]
    python -m training compare headline|constrained-headline --data FILE.jsonl --model A --model B
        [--strategy tok-b] [--start N]
    python -m training publish pos_tagger|hashtag_generator|headline_generator|
        constrained_headline_generator --checkpoint runs/<run>/best.pt
        [--repository model_repository] [--triton HOST:PORT] [--no-switch] [--force]
        [--gate-data FILE[:OPT]]
    python -m training adapt headline|constrained-headline (--data ARCHIVE.jsonl | --from-index
        [--source S] [--since YYYY-MM-DD]) --out DIR [--lang en|zh] [--minutes 20] [--mix 1.0]
    python -m training switch MODEL [--triton HOST:PORT]
    python -m training rollback MODEL [--to VERSION] [--triton HOST:PORT] [--no-switch]
    python -m training inspect versions [--triton HOST:PORT]
    python -m training data headline --out DIR [--data DATA_DIR] [--lang en|zh]
    python -m training whole-words --checkpoint CKPT --out runs/<run>_ww/best.pt
    python -m training picker --config training/configs/picker_zh.toml --checkpoint CKPT
        --out runs/<run>/best.pt
    python -m training picker --checkpoint CKPT --rules N --out runs/<run>/best.pt
    python -m training lead --checkpoint CKPT --margin M --length-bonus B --out runs/<run>/best.pt
        [--spans clauses|trimmed|phrase] [--target WORDS]
    python -m training lead --checkpoint CKPT --tune-on HELD_OUT.jsonl --out runs/<run>/best.pt
    python -m training ranker collect --model FILE --data PAIRS.jsonl --candidates OUT.jsonl
        [--limit N] [--every K] [--target 12] [--noun-groups]
    python -m training ranker fit --candidates DEV.jsonl --ranker RANKER.json
    python -m training ranker evaluate --candidates TEST.jsonl --ranker RANKER.json [--show N]
"""

from __future__ import annotations

import argparse

from training.commands import (
    adapt,
    data,
    evaluate,
    headline_rules,
    inspect,
    ranker,
    refresh,
    train,
    tune,
)

#: one module per group of subcommands, each with add_parsers, COMMANDS and run
COMMAND_MODULES = (train, evaluate, refresh, adapt, data, headline_rules, tune, inspect, ranker)


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(prog="python -m training", description=__doc__,
                                     formatter_class=argparse.RawDescriptionHelpFormatter)
    sub = parser.add_subparsers(dest="command", required=True)
    for module in COMMAND_MODULES:
        module.add_parsers(sub)
    args = parser.parse_args(argv)
    module = next(m for m in COMMAND_MODULES if args.command in m.COMMANDS)
    raise SystemExit(module.run(args))


if __name__ == "__main__":
    main()
