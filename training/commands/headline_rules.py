"""Subcommands that store a decoding rule of the headline generators in a copy of a
checkpoint: ``whole-words`` (English: the training word list and the penalties), ``picker``
(Chinese: the clause picker) and ``lead`` (English: the lead rule). Each prints its result
as JSON."""

from __future__ import annotations

import argparse
import json

from training.commands import usage_error
from training.paths import REPO_ROOT

COMMANDS = ("whole-words", "picker", "lead")


def add_parsers(sub: argparse._SubParsersAction) -> None:
    p_ww = sub.add_parser("whole-words", help="headline (English full generator): copy a "
                          "checkpoint with its decoding settings: the training word list, which "
                          "turns the whole-word rule on (nlp_models/headline/wholewords.py), the "
                          "unsupported-name and length penalties")
    p_ww.add_argument("--checkpoint", required=True)
    p_ww.add_argument("--out", required=True, help="e.g. runs/<run>_ww/best.pt")
    p_ww.add_argument("--train-data", action="append", metavar="FILE",
                      help="training JSONL (repeatable; default <data>/headline/en/train.jsonl)")
    p_ww.add_argument("--min-count", type=int, default=1, metavar="N",
                      help="keep only the words --train-data has N times or more (rarer ones "
                           "are often pieces of broken words: 'mus', 'canc')")
    p_ww.add_argument("--unsupported-penalty", type=float, default=0.0, metavar="X",
                      help="also store the faithfulness penalty decoding applies to names the "
                           "article lacks (wholewords.py; 0 = off)")
    p_ww.add_argument("--length-penalty", type=float, metavar="A",
                      help="also store beam search's length-penalty alpha (default: the "
                           "language's, decode.length_penalty)")

    p_pick = sub.add_parser("picker", help="headline (Chinese full generator): train the "
                            "clause picker (nlp_models/headline/picker.py) and store it in a "
                            "copy of a generator checkpoint, which then serves the picked span "
                            "of the article as its best headline")
    p_pick.add_argument("--config", default=str(REPO_ROOT / "training/configs/picker_zh.toml"))
    p_pick.add_argument("--checkpoint", required=True, help="a Chinese generator checkpoint")
    p_pick.add_argument("--out", required=True, help="e.g. runs/picker_zh/best.pt")
    p_pick.add_argument("--rules", type=int, metavar="N",
                        help="train nothing: copy --checkpoint, whose picker then builds its "
                             "candidates under rules N (nlp_models/headline/picker.py: RULES)")

    p_lead = sub.add_parser("lead", help="headline (English full generator): store the lead "
                            "rule (nlp_models/headline/lead.py) in a copy of a generator "
                            "checkpoint, which then serves a clause of the article's first "
                            "sentence first when it judges it nearly as likely as its own")
    p_lead.add_argument("--checkpoint", required=True,
                        help="an English full or constrained (Seq2BF) generator checkpoint")
    p_lead.add_argument("--tune-on", metavar="FILE", help="choose spans, margin and length "
                        "bonus by ROUGE-L F on this JSONL (a newsroom's held-out pairs) "
                        "instead of giving them")
    p_lead.add_argument("--margin", type=float, metavar="M",
                        help="how far (mean log-probability per token) below the generated "
                             "headline a clause may be judged and still go first")
    p_lead.add_argument("--length-bonus", type=float, metavar="B",
                        help="added to a clause's judge score, in proportion to its length "
                             "up to 15 words")
    p_lead.add_argument("--spans", choices=["clauses", "trimmed", "phrase", "compressed"],
                        default="clauses",
                        help="what the lead offers: its clause runs, the lead trimmed to a "
                        "headline (nlp_models/headline/trim.py), or compressed by the learned "
                        "compressor (--compressor); to a constrained generator (phrase): the "
                        "first sentence holding the phrase, trimmed")
    p_lead.add_argument("--compressor", metavar="FILE",
                        help="--spans compressed: the compressor's best.pt (python -m "
                        "training train compressor), stored in the copy")
    p_lead.add_argument("--target", type=int, default=12,
                        help="--spans trimmed|phrase: the house's headline length in words")
    p_lead.add_argument("--out", required=True, help="e.g. runs/lead_en/best.pt")


def run(args: argparse.Namespace) -> int:
    if args.command == "whole-words":
        from training.headline.evaluate import default_training_files
        from training.headline.quality import add_word_list

        print(json.dumps(add_word_list(args.checkpoint, args.out, args.train_data,
                                       args.unsupported_penalty, args.length_penalty,
                                       default_training_files("en"), args.min_count)))
    elif args.command == "picker":
        from training.headline.picker import set_rules, train_picker

        if args.rules is not None:
            print(json.dumps(set_rules(args.checkpoint, args.rules, args.out)))
        else:
            print(json.dumps(train_picker(args.config, args.checkpoint, args.out)))
    elif args.command == "lead":
        from training.headline.lead import set_lead

        if args.tune_on:
            from training.headline.lead import tune_and_set

            print(json.dumps(tune_and_set(args.checkpoint, args.tune_on, args.out)))
        elif args.margin is None or args.length_bonus is None:
            return usage_error("lead", "lead needs --margin and --length-bonus, or "
                               "--tune-on FILE")
        else:
            print(json.dumps(set_lead(args.checkpoint, args.margin, args.length_bonus,
                                      args.out, args.spans, args.target,
                                      args.compressor)))
    return 0
