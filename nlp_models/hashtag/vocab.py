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

import io
from collections import Counter
from collections.abc import Iterable

SPECIALS = ["[PAD]", "[UNK]", "[S]", "[SEG]", "[SEP]", "#"]
PAD, UNK, S, SEG, SEP, HASH = range(len(SPECIALS))


class Vocab:
    """encode(text) -> ids and decode(ids) -> words, identical for training and serving."""

    lang: str

    def __len__(self) -> int:
        raise NotImplementedError

    def encode(self, text: str) -> list[int]:
        raise NotImplementedError

    def encode_words(self, words: list[str]) -> list[int]:
        """A target word sequence (hashtag words and '#' separators) -> ids."""
        raise NotImplementedError

    def decode_words(self, ids: Iterable[int]) -> list[str]:
        """Generated ids (no [S]/[SEP]) -> words, with '#' items between hashtags."""
        raise NotImplementedError

    def to_state(self) -> dict:
        raise NotImplementedError

    @staticmethod
    def from_state(state: dict) -> Vocab:
        if state["kind"] == "subword":
            return SubwordVocab(state["model"])
        return CharVocab(state["chars"])


class CharVocab(Vocab):
    """Chinese: one token per character; whitespace dropped, Latin letters lower-cased."""

    lang = "zh"

    def __init__(self, chars: list[str]):
        self.itos = SPECIALS + list(chars)
        self.stoi = {c: i for i, c in enumerate(self.itos)}

    @staticmethod
    def build(texts: Iterable[str], min_count: int = 2) -> CharVocab:
        counts = Counter(c for t in texts for c in t.lower() if not c.isspace())
        chars = sorted(c for c, n in counts.items() if n >= min_count and c not in SPECIALS)
        return CharVocab(chars)

    def __len__(self) -> int:
        return len(self.itos)

    def encode(self, text: str) -> list[int]:
        return [self.stoi.get(c, UNK) for c in text.lower() if not c.isspace()]

    def encode_words(self, words: list[str]) -> list[int]:
        return [HASH if w == "#" else self.stoi.get(c, UNK) for w in words for c in
                (["#"] if w == "#" else w)]

    def decode_words(self, ids: Iterable[int]) -> list[str]:
        return [self.itos[i] for i in ids if i >= HASH]

    def to_state(self) -> dict:
        return {"kind": "char", "chars": self.itos[len(SPECIALS):]}


class SubwordVocab(Vocab):
    """English: a SentencePiece BPE model whose first ids are our SPECIALS.

    BPE, not unigram: the unigram model keeps a lone word-start piece "▁" as the most
    frequent target token (4% of hashtag tokens), which weak models then emit greedily."""

    lang = "en"

    def __init__(self, model: bytes):
        import sentencepiece as spm

        self.model = model
        self.sp = spm.SentencePieceProcessor(model_proto=model)
        assert [self.sp.id_to_piece(i) for i in range(len(SPECIALS))] == SPECIALS

    @staticmethod
    def build(texts: Iterable[str], size: int = 8000) -> SubwordVocab:
        import sentencepiece as spm

        buf = io.BytesIO()
        spm.SentencePieceTrainer.train(
            sentence_iterator=(t.lower() for t in texts), model_writer=buf,
            vocab_size=size, model_type="bpe", character_coverage=0.9995,
            pad_id=PAD, unk_id=UNK, bos_id=-1, eos_id=-1, pad_piece="[PAD]", unk_piece="[UNK]",
            user_defined_symbols=SPECIALS[2:], minloglevel=2, num_threads=1,
            hard_vocab_limit=False,  # small (quick) corpora get a smaller vocabulary
        )
        return SubwordVocab(buf.getvalue())

    def __len__(self) -> int:
        return self.sp.get_piece_size()

    def encode(self, text: str) -> list[int]:
        return self.sp.encode(text.lower())

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

    def to_state(self) -> dict:
        return {"kind": "subword", "model": self.model}


def build_vocab(lang: str, texts: list[str], size: int = 8000) -> Vocab:
    """The language's vocabulary from training texts (sources and joined targets)."""
    if lang == "en":
        return SubwordVocab.build(texts, size)
    if lang == "zh":
        return CharVocab.build(texts)
    raise ValueError(f"unsupported language {lang!r}; expected 'en' or 'zh'")
