"""Load a trained tagger and tag raw texts or pre-tokenized sentences.

The one inference path: the Triton model, `python -m training evaluate pos` and the
in-process benchmark all go through `PosPredictor`.
"""

from __future__ import annotations

import re
from collections import OrderedDict
from dataclasses import asdict
from pathlib import Path

import torch

from nlp_models.contract import TaggedToken, TagResult
from nlp_models.pos.features import Vocabularies, encode_tokens
from nlp_models.pos.model import Tagger, TaggerConfig
from nlp_models.pos.tokenizer import tokenize

MAX_TOKENS = 128  # tokens tagged per text; the rest is cut and flagged `truncated`
TOKEN_CACHE_SIZE = 20_000  # token strings whose rows are kept (DCNN: 1,600 floats, ~130 MB)
MAX_BATCH = 32  # sentences per forward pass, sorted by length (docs/benchmarks.md: padding)
# A hashtag (`#` and a word starting with a letter; `#6` is a number) is HT in the PTB
# tagset whatever its role: Ritter et al. tag 126 of 126 such tokens HT, while the tagger
# gave 11 of 43 in RIT-Dev/Test UH, USR, URL or a word tag. ARK instead tags hashtags that
# are words of the sentence as words, so its head keeps the model's choice.
_HASHTAG = re.compile(r"#[^\W\d_]\w*")


def save_checkpoint(path: str | Path, model: Tagger, vocabs: Vocabularies, meta: dict) -> None:
    """Write a compact fp16 checkpoint: config, vocabularies, weights."""
    state = {k: v.detach().to(torch.float16) for k, v in model.state_dict().items()}
    cfg = asdict(model.cfg)
    cfg["char_widths"] = list(cfg["char_widths"])
    torch.save({"config": cfg, "vocabs": vocabs.to_json(), "state": state, "meta": meta}, path)


def load_checkpoint(
    path: str | Path, cluster_path: str | Path | None = None
) -> tuple[Tagger, Vocabularies, dict]:
    """Model, vocabularies, metadata. A model with cluster features also reads the ARK
    cluster file: `cluster_path`, else the resolved artifact (nlp_models/pos/clusters.py)."""
    ckpt = torch.load(path, map_location="cpu", weights_only=True)
    cfg = dict(ckpt["config"])
    cfg["char_widths"] = tuple(cfg["char_widths"])
    model = Tagger(TaggerConfig(**cfg))
    model.load_state_dict({k: v.float() for k, v in ckpt["state"].items()})
    model.eval().requires_grad_(False)  # inference only: no autograd bookkeeping at all
    vocabs = Vocabularies.from_json(ckpt["vocabs"], Path(cluster_path) if cluster_path else None)
    return model, vocabs, ckpt.get("meta", {})


class PosPredictor:
    def __init__(self, path: str | Path, cluster_path: str | Path | None = None):
        self.model, self.vocabs, self.meta = load_checkpoint(path, cluster_path)
        self.tagsets = list(self.vocabs.tags)
        self.device = torch.get_default_device()  # the instance's GPU under Triton, if any
        # Everything the model computes from one token alone (word embedding, char-CNN and
        # cluster features, and the DCNN's projections of them: Tagger.project_tokens)
        # depends only on the token string: computing it once per distinct token, and
        # remembering recent ones, saves about half of the CPU time of a pass.
        self._token_cache: OrderedDict[str, torch.Tensor] = OrderedDict()
        width = self.model.cfg.word_dim + self.model.type_dim
        self._padding = torch.zeros_like(  # row 0: all zeros, as wide as the model's rows
            self.model.project_tokens(torch.zeros(1, width, device=self.device))[0])

    @torch.inference_mode()
    def tag_tokens(self, sentences: list[list[str]]) -> list[dict[str, list[str]]]:
        """Tags for pre-tokenized sentences: one {tagset: [tag per token]} per sentence."""
        out: list[dict[str, list[str]]] = [{} for _ in sentences]
        # Sort by length so each forward pass pads little; restore the order afterwards.
        order = sorted(range(len(sentences)), key=lambda i: len(sentences[i]))
        for k in range(0, len(order), MAX_BATCH):
            idx = order[k : k + MAX_BATCH]
            chunk = [sentences[i] for i in idx]
            rows, types = self._token_rows(chunk)
            lengths = torch.tensor([max(1, len(s)) for s in chunk], device=self.device)
            best = self.model.tag_projected(rows, types, lengths)
            for head, ids in best.items():
                itos = self.vocabs.tags[head].itos
                for row, i in enumerate(idx):
                    n = len(sentences[i])
                    out[i][head] = [itos[j] for j in ids[row, :n].tolist()]
        for sentence, tags in zip(sentences, out, strict=True):
            if "ptb" in tags:
                tags["ptb"] = [_ptb_tag(tok, tag) for tok, tag in zip(sentence, tags["ptb"],
                                                                       strict=True)]
        return out

    def _token_rows(self, sentences: list[list[str]]) -> tuple[torch.Tensor, torch.Tensor]:
        """(U+1, P) `Tagger.project_tokens` rows of the distinct tokens in first-seen order
        (row 0 = padding, zeros) and (B,T) the row of each position (0 after a sentence)."""
        distinct = dict.fromkeys(tok for s in sentences for tok in s)
        cache = self._token_cache
        if missing := [t for t in distinct if t not in cache]:
            words, _, chars, _, clusters = encode_tokens([missing], self.vocabs)
            if clusters is not None:
                clusters = clusters.to(self.device)
            x = torch.cat([self.model.word_embed(words[0].to(self.device)),
                           self.model.type_features(chars.to(self.device), clusters)[1:]], 1)
            for tok, row in zip(missing, self.model.project_tokens(x), strict=True):
                cache[tok] = row
        for tok in distinct:
            cache.move_to_end(tok)
        while len(cache) > TOKEN_CACHE_SIZE:
            cache.popitem(last=False)
        index = {tok: i for i, tok in enumerate(distinct, 1)}
        T = max(1, max(map(len, sentences)))
        types = torch.tensor([[index[t] for t in s] + [0] * (T - len(s)) for s in sentences],
                             device=self.device)
        return torch.stack([self._padding, *(cache[t] for t in distinct)]), types

    def tag_texts(self, texts: list[str]) -> list[TagResult]:
        """Tokenize raw texts (Twitter-aware, with offsets) and tag every token with each
        tagset the model has ("" for one it has not); texts of more than MAX_TOKENS tokens
        are tagged in their first MAX_TOKENS and flagged `truncated`."""
        spans = [tokenize(t) for t in texts]
        kept = [s[:MAX_TOKENS] for s in spans]
        tags = self.tag_tokens([[sp.text for sp in s] for s in kept])
        results = []
        for s, full, tg in zip(kept, spans, tags, strict=True):
            none = [""] * len(s)
            ptb, ark = tg.get("ptb", none), tg.get("ark", none)
            tokens = tuple(TaggedToken(sp.text, sp.start, sp.end, ptb[i], ark[i])
                           for i, sp in enumerate(s))
            results.append(TagResult(tokens, truncated=len(full) > MAX_TOKENS))
        return results


def _ptb_tag(token: str, predicted: str) -> str:
    """The PTB tag of a token: HT for a hashtag (see _HASHTAG), else the model's."""
    return "HT" if _HASHTAG.fullmatch(token) else predicted
