"""Vocabularies for headline generation, with article-local ids for copying unknown tokens.

    0 [PAD]  1 [UNK]  2 [BOS]  3 [EOS]  4 [SEP]  then ordinary tokens

English: a cased SentencePiece BPE model trained on our articles and headlines (the paper
uses BPE; casing is kept because editors read the output and the copy mechanism should
reproduce names as written). Chinese: single characters (the paper segments with jieba; with
13k training pairs a word vocabulary would leave most names out of vocabulary, while ~5k
characters cover nearly all text and a copied character can spell any name).

Copying (pointer-generator style): a source token the vocabulary does not know gets an
*extended* id `len(vocab) + k`, k its index among the article's unknown surfaces, so the
decoder can copy it and the output spells it exactly as the article does. [SEP] separates
a required phrase from the article (He et al.'s comparator); [BOS]/[EOS] start and end a
headline, and in Seq2BF end the backward and the forward half.
"""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass

from nlp_models import vocab as base
from nlp_models.limits import MAX_COPIED_TOKEN_CHARS

SPECIALS = ["[PAD]", "[UNK]", "[BOS]", "[EOS]", "[SEP]"]
PAD, UNK, BOS, EOS, SEP = range(len(SPECIALS))


@dataclass
class Source:
    """An encoded article: in-vocabulary ids (UNK for unknown tokens), extended ids (unknown
    tokens numbered from len(vocab)), and the surfaces behind the extended ids."""

    ids: list[int]
    ext_ids: list[int]
    oovs: list[str]


class Copyable:
    """Encoding with article-local extended ids for unknown tokens (the copy mechanism);
    mixed into both vocabulary kinds, which provide `tokens`, `surface`, `join`."""

    def encode_source(self, text: str, known_oovs: Iterable[str] = ()) -> Source:
        """known_oovs: unknown tokens numbered already (they keep their extended ids). An
        unknown token longer than MAX_COPIED_TOKEN_CHARS gets no extended id: not copyable."""
        ids, ext, oovs = [], [], {s: k for k, s in enumerate(known_oovs)}
        for i, surface in self.tokens(text):
            ids.append(i)
            if i == UNK and len(surface.strip()) <= MAX_COPIED_TOKEN_CHARS:
                ext.append(len(self) + oovs.setdefault(surface, len(oovs)))
            else:
                ext.append(i)
        return Source(ids, ext, list(oovs))

    def encode_target(self, text: str, oovs: list[str]) -> list[int]:
        """Headline ids where unknown tokens that also occur in the article get their
        extended id (so copying them is rewarded) and other unknown tokens stay UNK."""
        index = {s: k for k, s in enumerate(oovs)}
        out = []
        for i, surface in self.tokens(text):
            k = index.get(surface) if i == UNK else None
            out.append(len(self) + k if k is not None else i)
        return out

    def decode(self, ids: Iterable[int], oovs: list[str] = ()) -> str:
        """Generated ids (extended ids allowed; specials skipped) -> text."""
        parts = []
        for i in ids:
            if i >= len(self):
                parts.append(oovs[i - len(self)])
            elif i > SEP:
                parts.append(self.surface(i))
        return self.join(parts)


class CharVocab(Copyable, base.CharVocab):
    """Chinese: one token per non-space character, case kept."""

    SPECIALS = SPECIALS


class SubwordVocab(Copyable, base.SubwordVocab):
    """English: cased SentencePiece BPE whose first ids are our SPECIALS."""

    SPECIALS = SPECIALS

    @classmethod
    def build(cls, texts: Iterable[str], size: int = 12000) -> SubwordVocab:
        return cls.train(texts, size, bos_id=BOS, eos_id=EOS, bos_piece="[BOS]",
                         eos_piece="[EOS]", user_defined_symbols=["[SEP]"], num_threads=2,
                         input_sentence_size=400_000, shuffle_input_sentence=True)


Vocab = CharVocab | SubwordVocab


def from_state(state: dict) -> Vocab:
    return SubwordVocab(state["model"]) if state["kind"] == "subword" else CharVocab(state["chars"])


def build_vocab(lang: str, texts: list[str], size: int = 12000) -> Vocab:
    """The language's vocabulary from training articles and headlines."""
    if lang == "en":
        return SubwordVocab.build(texts, size)
    if lang == "zh":
        return CharVocab.build(texts)
    raise ValueError(f"unsupported language {lang!r}; expected 'en' or 'zh'")


def prefixed_source(vocab: Vocab, phrase: str, body: Source, max_source: int) -> Source:
    """`phrase [SEP] article` from the encoded article, cut to max_source tokens. The
    article's unknown tokens keep their extended ids; the phrase's own are numbered after."""
    head = vocab.encode_source(phrase, body.oovs)
    return Source([*head.ids, SEP, *body.ids][:max_source],
                  [*head.ext_ids, SEP, *body.ext_ids][:max_source], head.oovs)
