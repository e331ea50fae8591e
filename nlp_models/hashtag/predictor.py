"""Load a SegTrm checkpoint and turn raw posts into hashtags with scores.

Used by `training evaluate hashtag`, the benchmark and the Triton model, so the three can
never disagree. Checkpoints hold the config, the vocabulary and fp16 weights (compute runs in
fp32: CPU fp16 matmuls are slow).
"""

from __future__ import annotations

from dataclasses import asdict, dataclass
from pathlib import Path

import torch

from nlp_models.hashtag.decode import Hypothesis, beam_search
from nlp_models.hashtag.model import SegTrm, SegTrmConfig, encode_sources
from nlp_models.hashtag.text import join_words, normalize_hashtag, split_generated
from nlp_models.hashtag.vocab import Vocab, from_state

MAX_BATCH = 64  # posts per forward pass; bigger batches only add padding on this CPU


@dataclass
class Generated:
    """One post's output: the best sequence's hashtags and a ranked, de-duplicated list."""

    best: list[list[str]]  # hashtags of the top sequence, each a list of words
    # Hashtags of all n-best sequences in sequence rank order, each with the log-probability
    # of the first (highest-ranked) sequence that contains it.
    ranked: list[tuple[list[str], float]]
    truncated: bool
    lang: str

    def hashtags(self) -> list[tuple[str, float]]:
        """For output: (hashtag as one string, score), best first."""
        return [(join_words(words, self.lang), score) for words, score in self.ranked]


def save_checkpoint(path: str | Path, model: SegTrm, vocab: Vocab, lang: str, meta: dict) -> None:
    state = {k: v.half() if v.is_floating_point() else v for k, v in model.state_dict().items()}
    torch.save({"config": asdict(model.cfg), "vocab": vocab.to_state(), "lang": lang,
                "model": state, "meta": meta}, path)


class HashtagPredictor:
    def __init__(self, checkpoint: str | Path, threads: int | None = None):
        if threads:
            torch.set_num_threads(threads)
        state = torch.load(checkpoint, map_location="cpu", weights_only=False)
        self.cfg = SegTrmConfig(**state["config"])
        self.vocab = from_state(state["vocab"])
        self.lang: str = state["lang"]
        self.meta: dict = state.get("meta", {})
        self.model = SegTrm(self.cfg)
        self.model.load_state_dict({k: v.float() for k, v in state["model"].items()})
        self.model.eval().requires_grad_(False)

    def generate(self, texts: list[str], beam: int = 4, n_best: int = 1) -> list[Generated]:
        out: list[Generated] = []
        for i in range(0, len(texts), MAX_BATCH):
            chunk = texts[i : i + MAX_BATCH]
            ids, segs, truncated = encode_sources(chunk, self.vocab, self.cfg)
            hyps = beam_search(self.model, ids, segs, beam=beam, n_best=n_best)
            out += [self._result(h, bool(t)) for h, t in zip(hyps, truncated, strict=True)]
        return out

    def _result(self, hyps: list[Hypothesis], truncated: bool) -> Generated:
        seen: dict[str, tuple[list[str], float]] = {}
        best: list[list[str]] = []
        for rank, h in enumerate(hyps):
            tags = split_generated(self.vocab.decode_words(h.tokens))
            if rank == 0:
                best = _unique(tags)
            for words in tags:
                key = normalize_hashtag("".join(words))
                if key and key not in seen:
                    seen[key] = (words, h.logprob)
        return Generated(best, list(seen.values()), truncated, self.lang)


def _unique(tags: list[list[str]]) -> list[list[str]]:
    """Drop repeated hashtags (same normalized form), keeping the first."""
    seen, out = set(), []
    for words in tags:
        key = normalize_hashtag("".join(words))
        if key and key not in seen:
            seen.add(key)
            out.append(words)
    return out
