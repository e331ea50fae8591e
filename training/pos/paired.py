"""Paired token counts of two POS checkpoints on the public test sets (gold tokens).

    python -m training.pos.paired FIRST.pt SECOND.pt

One JSON line per set: tokens, and how many only the first / only the second tags right
(McNemar's counts), which says more than two accuracies on sets of 2-8K tokens.
"""

from __future__ import annotations

import json
import sys

import torch

from nlp_models.pos.predictor import PosPredictor
from training.paths import data_dir
from training.pos.data import read_conll

TEST_SETS = [("ritter/test", "ptb"), ("ritter/dev", "ptb"), ("npschat/test", "ptb"),
             ("ark_daily547/test", "ark"), ("ark_oct27/test", "ark")]


def paired(first: str, second: str) -> list[dict]:
    torch.set_num_threads(1)
    a, b = PosPredictor(first), PosPredictor(second)
    rows = []
    for name, tagset in TEST_SETS:
        sents = read_conll(data_dir() / "pos" / f"{name}.conll", tagset)
        tokens = [s.tokens for s in sents]
        only_a = only_b = n = 0
        for s, x, y in zip(sents, a.tag_tokens(tokens), b.tag_tokens(tokens), strict=True):
            for gold, ta, tb in zip(s.tags, x[tagset], y[tagset], strict=True):
                n += 1
                only_a += ta == gold != tb
                only_b += tb == gold != ta
        rows.append({"set": name, "tagset": tagset, "tokens": n,
                     "only_first_right": only_a, "only_second_right": only_b})
    return rows


if __name__ == "__main__":
    if len(sys.argv) != 3:
        raise SystemExit(__doc__)
    for row in paired(sys.argv[1], sys.argv[2]):
        print(json.dumps(row))
