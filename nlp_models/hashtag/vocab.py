"""Token vocabularies for the hashtag generator: subwords for English, characters for Chinese.

Both share one id layout so the model never needs to know the language:

    0 [PAD]  1 [UNK]  2 [S]  3 [SEG]  4 [SEP]  5 #   then ordinary tokens

English uses a SentencePiece BPE model trained on our own posts and word-split targets
(the paper used RoBERTa's tokenizer, which we cannot download). Chinese uses single characters,
as the paper does with LTP: no word segmenter runs at serving time, there are no segmentation
errors to propagate, and ~6k characters keep the embedding table small.

Source text is lower-cased in both languages: the corpora are small, the AV practice set is
lower-cased already, and targets are scored lower-cased.
"""

from __future__ import annotations

from collections.abc import Iterable

from nlp_models import vocab as base

SPECIALS = ["[PAD]", "[UNK]", "[S]", "[SEG]", "[SEP]", "#"]
PAD, UNK, S, SEG, SEP, HASH = range(len(SPECIALS))


class CharVocab(base.CharVocab):
    """Chinese: one token per character; whitespace dropped, Latin letters lower-cased."""

    SPECIALS, LOWER = SPECIALS, True

    def encode_words(self, words: list[str]) -> list[int]:
        """A target word sequence (hashtag words and '#' separators) -> ids."""
        return [HASH if w == "#" else self.stoi.get(c, UNK) for w in words for c in
                (["#"] if w == "#" else w)]

    def decode_words(self, ids: Iterable[int]) -> list[str]:
        """Generated ids (no [S]/[SEP]) -> words, with '#' items between hashtags."""
        return [self.itos[i] for i in ids if i >= HASH]


class SubwordVocab(base.SubwordVocab):
    """English: a lower-cased SentencePiece BPE model whose first ids are our SPECIALS.

    BPE, not unigram: the unigram model keeps a lone word-start piece "▁" as the most
    frequent target token (4% of hashtag tokens), which weak models then emit greedily."""

    SPECIALS, LOWER = SPECIALS, True

    @classmethod
    def build(cls, texts: Iterable[str], size: int = 8000) -> SubwordVocab:
        return cls.train(texts, size, user_defined_symbols=SPECIALS[2:], bos_id=-1,
                         eos_id=-1, num_threads=1)

    def encode_words(self, words: list[str]) -> list[int]:
        """Each hashtag's words are encoded on their own and joined by the single '#' id;
        encoding the joined string would spend a lone '▁' piece before every '#'."""
        ids: list[int] = []
        for tag in " ".join(words).split(" # "):
            ids += ([HASH] if ids else []) + self.sp.encode(tag.strip("# "))
        return ids

    def decode_words(self, ids: Iterable[int]) -> list[str]:
        words: list[str] = []
        piece: list[int] = []
        for i in [*ids, HASH]:
            if i == HASH:
                words += (["#"] if words else []) + self.sp.decode(piece).split()
                piece = []
            elif i > HASH:
                piece.append(i)
        return words


Vocab = CharVocab | SubwordVocab


def from_state(state: dict) -> Vocab:
    return SubwordVocab(state["model"]) if state["kind"] == "subword" else CharVocab(state["chars"])


def build_vocab(lang: str, texts: list[str], size: int = 8000) -> Vocab:
    """The language's vocabulary from training texts (sources and joined targets)."""
    if lang == "en":
        return SubwordVocab.build(texts, size)
    if lang == "zh":
        return CharVocab.build(texts)
    raise ValueError(f"unsupported language {lang!r}; expected 'en' or 'zh'")
