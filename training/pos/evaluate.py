"""Token accuracy of a tagger on a CoNLL file.

    python -m training evaluate pos --data FILE.conll --tagset ptb|ark [--model PATH] [--raw]

By default the tagger gets the gold tokens. With --raw it gets what a user sends: each
sentence as text (the gold tokens joined by spaces) through the served tokenizer; a gold token
counts as right only if the tokenizer produced exactly that token and tagged it right, so
tokenization that differs from the corpus's conventions costs accuracy.
"""

from __future__ import annotations

from pathlib import Path

import torch

from nlp_models.pos.predictor import PosPredictor
from training.pos.data import read_conll
from training.repository import shipped


def shipped_checkpoint() -> Path:
    """The serving version's checkpoint in the repository's model_repository."""
    return shipped("pos_tagger", "pos_tagger.pt")


def evaluate(data: str, tagset: str, model: str | None = None, raw: bool = False) -> dict:
    torch.set_num_threads(1)
    path = Path(model) if model else shipped_checkpoint()
    predictor = PosPredictor(path)
    if tagset not in predictor.tagsets:
        raise SystemExit(f"{path} has no {tagset!r} head (it has {predictor.tagsets})")
    sentences = read_conll(data, tagset)
    if raw:
        predicted = [_raw_tags(predictor, s.tokens, tagset) for s in sentences]
    else:
        predicted = [p[tagset] for p in predictor.tag_tokens([s.tokens for s in sentences])]
    correct = total = 0
    for s, p in zip(sentences, predicted, strict=True):
        correct += sum(g == t for g, t in zip(s.tags, p, strict=True))
        total += len(s.tags)
    out = {"accuracy": correct / max(total, 1), "tokens": total, "sentences": len(sentences),
           "tagset": tagset, "data": str(data), "model": str(path)}
    if raw:
        same = sum(t is not None for p in predicted for t in p)
        out["tokens_tokenized_as_gold"] = same / max(total, 1)
    return out


def _raw_tags(predictor: PosPredictor, tokens: list[str], tagset: str) -> list[str | None]:
    """Tag `tokens` joined by spaces as raw text; None where no predicted token has exactly
    the gold token's span."""
    starts, pos = [], 0
    for tok in tokens:
        starts.append(pos)
        pos += len(tok) + 1
    (result,) = predictor.tag_texts([" ".join(tokens)])
    by_span = {(t.start, t.end): (t.ptb if tagset == "ptb" else t.ark) for t in result.tokens}
    return [by_span.get((a, a + len(tok))) for a, tok in zip(starts, tokens, strict=True)]
