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

from nlp_models import registry
from nlp_models.pos.predictor import PosPredictor
from training.pos.data import read_conll
from training.repository import shipped


def shipped_checkpoint() -> Path:
    """The serving version's checkpoint in the repository's model_repository."""
    return shipped(registry.POS.name, "pos_tagger.pt")


def evaluate(data: str, tagset: str, model: str | None = None, raw: bool = False) -> dict:
    torch.set_num_threads(1)
    path = Path(model) if model else shipped_checkpoint()
    predictor = PosPredictor(path)
    if tagset not in predictor.tagsets:
        raise SystemExit(f"{path} has no {tagset!r} head (it has {predictor.tagsets})")
    sentences = read_conll(data, tagset)
    if raw:
        predicted = raw_text_tags(predictor, [s.tokens for s in sentences], tagset)
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


def raw_text_tags(predictor: PosPredictor, sentences: list[list[str]], tagset: str
                  ) -> list[list[str | None]]:
    """Tag each sentence's tokens joined by spaces as raw text, one sentence per call (the
    figures in docs/models/pos.md were measured so; batching moves a few near-tied tokens);
    per gold token the tag of the predicted token with exactly its span, else None."""
    out = []
    for tokens in sentences:
        (result,) = predictor.tag_texts([" ".join(tokens)])
        out.append(on_gold_tokens(tokens, [((t.start, t.end), t.ptb if tagset == "ptb" else t.ark)
                                           for t in result.tokens]))
    return out


def gold_spans(tokens: list[str]) -> list[tuple[int, int]]:
    """Character spans of gold tokens in their text, the tokens joined by single spaces."""
    spans, at = [], 0
    for tok in tokens:
        spans.append((at, at + len(tok)))
        at += len(tok) + 1
    return spans


def on_gold_tokens(gold_tokens: list[str], tagged: list[tuple[tuple[int, int] | None, str]]
                   ) -> list[str | None]:
    """Each gold token's predicted tag when the tokenizer produced exactly that token, else
    None (scored as wrong)."""
    by_span = {span: tag for span, tag in tagged if span is not None}
    return [by_span.get(span) for span in gold_spans(gold_tokens)]
