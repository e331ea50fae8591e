"""Article/headline pairs -> encoded examples -> padded batches for all headline models.

Lines of the data files are `{"article": ..., "headline": ..., "phrase": ...}` (extra fields
ignored). The phrase is a substring of the headline; for Seq2BF the headline is encoded in
three parts, before / phrase / after, so that the phrase's token ids are exactly those the
model is given at inference (the phrase encoded on its own). For English that can add a
space where a phrase is glued to punctuation ("(Toyota" -> "( Toyota"); ROUGE ignores it.

He et al.'s comparator reads `phrase [SEP] article`; during training the phrase is removed
from the article in half of the examples (their phrase dropping), so the model learns to
take it from the prefix.
"""

from __future__ import annotations

import json
import random
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path

import torch

from nlp_models.headline.lead import whole_sentences
from nlp_models.headline.sentences import SENTENCE_BREAK, sentences
from nlp_models.headline.seq2bf import NOT_YET, STRATEGIES, layout
from nlp_models.headline.vocab import BOS, EOS, PAD, Source, Vocab, prefixed_source
from training.headline.metrics import contains_phrase

PHRASE_DROP = 0.5  # He et al.: share of training examples whose article loses the phrase


@dataclass
class Pair:
    article: str
    headline: str
    phrase: str = ""
    id: str = ""  # the line's `id` (its 0-based line number when absent)


@dataclass
class Prefixed:
    """He et al.'s input and the headline in that input's extended ids (so a copying He
    model can copy from the phrase as well as from the article)."""

    source: Source
    target: list[int]  # + [EOS]


@dataclass
class Example:
    source: Source  # the article
    target: list[int]  # headline in extended ids, + [EOS]
    left: list[int]  # headline tokens before the phrase
    phrase: list[int]
    right: list[int]
    prefixed: Prefixed | None  # He et al.'s input: phrase [SEP] article
    prefixed_dropped: Prefixed | None  # the same with the phrase taken out of the article


def read_pairs(path: str | Path) -> list[Pair]:
    with open(path, encoding="utf-8") as f:
        rows = [json.loads(line) for line in f if line.strip()]
    return [Pair(r["article"], r.get("headline", ""), r.get("phrase") or "",
                 str(r.get("id", i))) for i, r in enumerate(rows)]


def split_lead(article: str, lang: str) -> tuple[str, str]:
    """(first sentence of the first paragraph, the rest of the article); ("", "") if blank."""
    text = article.strip()
    first_paragraph = next((line for line in text.splitlines() if line.strip()), "")
    lead = next((s.strip() for s in SENTENCE_BREAK[lang].split(first_paragraph) if s.strip()),
                "")
    return lead, text[text.find(lead) + len(lead):].strip() if lead else ""


def lead_sentence(article: str, lang: str) -> str:
    """The baselines' Lead-1: the first sentence of the first paragraph, in English by the
    lead rule's split (no end after "Sen.", "J.", "Inc.": "Sens." is no lead). `split_lead`
    keeps the plain split the training data was made with."""
    if lang != "en":
        return split_lead(article, lang)[0]
    first_paragraph = next((line for line in article.splitlines() if line.strip()), "")
    found = whole_sentences(first_paragraph)
    return found[0] if found else ""


def baseline_sentences(article: str, lang: str) -> list[str]:
    """The article's sentences as the baselines read them (English split as
    `lead_sentence`)."""
    return whole_sentences(article) if lang == "en" else sentences(article, lang)


def first_sentence_with(article: str, phrase: str, lang: str) -> str | None:
    """The article's first sentence (any paragraph, `baseline_sentences`) containing
    `phrase`, or None."""
    return next((s for s in baseline_sentences(article, lang)
                 if contains_phrase(s, phrase, lang)), None)


def lead_gap_pairs(pairs: list[Pair], lang: str, min_words: int = 4) -> list[Pair]:
    """Self-supervised pairs from the training articles alone, for pre-training (PEGASUS's
    gap-sentence generation, lead variant): the first sentence is the target and is removed
    from the article. Leads here restate most of the headline's content (Lead-1 recall is
    0.55 ROUGE-1 on English test), so the model practises reading a document to write a
    short summary of it before it sees the 22k real headlines. Articles whose lead or rest
    is shorter than `min_words` words (characters for Chinese) are skipped."""

    def size(text: str) -> int:
        return len(text) if lang == "zh" else len(text.split())

    out = []
    for p in pairs:
        lead, rest = split_lead(p.article, lang)
        if size(lead) >= min_words and size(rest) >= min_words:
            out.append(Pair(rest, lead))
    return out


def split_headline(headline: str, phrase: str) -> tuple[str, str]:
    """Text before and after the first occurrence of the phrase (which must occur)."""
    at = headline.find(phrase)
    if not phrase or at < 0:
        raise ValueError(f"phrase {phrase!r} is not in headline {headline!r}")
    return headline[:at], headline[at + len(phrase):]


def _prefixed(vocab: Vocab, pair: Pair, body: Source, max_source: int,
              max_target: int) -> Prefixed:
    source = prefixed_source(vocab, pair.phrase, body, max_source)
    return Prefixed(source, vocab.encode_target(pair.headline, source.oovs)[: max_target - 1]
                    + [EOS])


def encode(pair: Pair, vocab: Vocab, max_source: int, max_target: int) -> Example:
    source = vocab.encode_source(pair.article)
    source.ids, source.ext_ids = source.ids[:max_source], source.ext_ids[:max_source]
    target = vocab.encode_target(pair.headline, source.oovs)[: max_target - 1] + [EOS]
    left = right = phrase = []
    prefixed = dropped = None
    if pair.phrase and pair.phrase in pair.headline:
        before, after = split_headline(pair.headline, pair.phrase)
        # the sides are Seq2BF's targets: extended ids, so a copying model can copy them
        left = vocab.encode_target(before, source.oovs)
        right = vocab.encode_target(after, source.oovs)
        phrase = vocab.encode(pair.phrase)
        prefixed = _prefixed(vocab, pair, source, max_source, max_target)
        without = vocab.encode_source(pair.article.replace(pair.phrase, " "))
        dropped = _prefixed(vocab, pair, without, max_source, max_target)
    return Example(source, target, left, phrase, right, prefixed, dropped)


def pad(rows: list[list[int]], value: int = PAD) -> torch.Tensor:
    width = max(len(r) for r in rows)
    return torch.tensor([r + [value] * (width - len(r)) for r in rows], dtype=torch.long)


@dataclass
class GeneratorBatch:
    src: torch.Tensor  # (B, S)
    src_ext: torch.Tensor  # (B, S) extended ids
    n_ext: int  # article-local ids in use (max over the batch)
    y_in: torch.Tensor  # (B, T) [BOS] y1 ..
    targets: torch.Tensor  # (B, T) y1 .. [EOS], extended ids

    def inputs(self) -> tuple:
        return self.src, self.src_ext, self.n_ext, self.y_in, self.targets


def generator_batch(examples: list[Example], prefixed: bool = False,
                    rng: random.Random | None = None) -> GeneratorBatch:
    """Full-generator batch; `prefixed` gives He et al.'s input (phrase [SEP] article)."""
    if prefixed:
        inputs = [e.prefixed_dropped if rng and rng.random() < PHRASE_DROP else e.prefixed
                  for e in examples]
        sources, targets = [x.source for x in inputs], [x.target for x in inputs]
    else:
        sources, targets = [e.source for e in examples], [e.target for e in examples]
    src, src_ext = pad([s.ids for s in sources]), pad([s.ext_ids for s in sources])
    n_ext = max(len(s.oovs) for s in sources)
    # a model without copying reads extended ids as UNK
    return GeneratorBatch(src, src_ext, n_ext, pad([[BOS] + t[:-1] for t in targets]),
                          pad(targets))


@dataclass
class Seq2BFBatch:
    src: torch.Tensor
    tokens: torch.Tensor  # (B, N) headline rows in reading order
    positions: torch.Tensor  # (B, N) relative to the phrase
    steps: torch.Tensor  # (B, N) generation step per row
    back_targets: torch.Tensor  # extended ids
    fwd_targets: torch.Tensor
    src_ext: torch.Tensor  # (B, S) extended ids, for copying
    n_ext: int

    def inputs(self) -> tuple:
        return (self.src, self.tokens, self.positions, self.steps, self.back_targets,
                self.fwd_targets, self.src_ext, self.n_ext)


def seq2bf_batch(examples: list[Example], strategy: str,
                 rng: random.Random | None = None) -> Seq2BFBatch:
    """`strategy` "mixed" draws one of the four orders per example."""
    laid = []
    for e in examples:
        order = rng.choice(STRATEGIES) if strategy == "mixed" else strategy
        laid.append(layout(e.left, e.phrase, e.right, order))
    return Seq2BFBatch(pad([e.source.ids for e in examples]), pad([x.tokens for x in laid]),
                       pad([x.positions for x in laid], 0), pad([x.steps for x in laid], NOT_YET),
                       pad([x.back_targets for x in laid]), pad([x.fwd_targets for x in laid]),
                       pad([e.source.ext_ids for e in examples]),
                       max(len(e.source.oovs) for e in examples))


def batches(examples: list[Example], max_tokens: int,
            rng: random.Random) -> Iterator[list[Example]]:
    """Shuffled batches of similar source length, each at most `max_tokens` padded source
    tokens (long articles come in small batches, short ones in large ones)."""
    order = sorted(examples, key=lambda e: len(e.source.ids) * (1 + 0.1 * rng.random()))
    groups, current = [], []
    for e in order:
        width = max([len(e.source.ids)] + [len(x.source.ids) for x in current])
        if current and width * (len(current) + 1) > max_tokens:
            groups.append(current)
            current = []
        current.append(e)
    groups += [current] if current else []
    rng.shuffle(groups)
    yield from groups
