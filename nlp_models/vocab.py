"""The one vocabulary family of the generators: characters (Chinese) or a SentencePiece BPE
model (English), each with the task's special tokens first.

The hashtag and headline vocabularies (nlp_models/hashtag/vocab.py, headline/vocab.py)
subclass these two and add what their task encodes: hashtag word sequences, or articles
with copyable unknown tokens. A checkpoint stores `to_state()` (`{"kind": "char", "chars":
[...]}` or `{"kind": "subword", "model": bytes}`); the specials and the casing rule belong
to the task's class, not to the state.
"""

from __future__ import annotations

import io
from collections import Counter
from collections.abc import Iterable


class CharVocab:
    """One token per non-space character; `SPECIALS` take the first ids. `LOWER`: the
    task's text is lower-cased before lookup."""

    lang = "zh"
    SPECIALS: list[str] = []
    LOWER = False

    def __init__(self, chars: list[str]):
        self.itos = self.SPECIALS + list(chars)
        self.stoi = {c: i for i, c in enumerate(self.itos)}

    @classmethod
    def build(cls, texts: Iterable[str], min_count: int = 2) -> CharVocab:
        counts = Counter(c for t in texts for c in cls._norm(t) if not c.isspace())
        return cls(sorted(c for c, n in counts.items()
                          if n >= min_count and c not in cls.SPECIALS))

    @classmethod
    def _norm(cls, text: str) -> str:
        return text.lower() if cls.LOWER else text

    def __len__(self) -> int:
        return len(self.itos)

    def tokens(self, text: str) -> list[tuple[int, str]]:
        """(id, surface) per character."""
        return [(self.stoi.get(c, 1), c) for c in self._norm(text) if not c.isspace()]

    def encode(self, text: str) -> list[int]:
        return [i for i, _ in self.tokens(text)]

    def surface(self, token_id: int) -> str:
        return self.itos[token_id]

    def join(self, surfaces: list[str]) -> str:
        return "".join(surfaces)

    def to_state(self) -> dict:
        return {"kind": "char", "chars": self.itos[len(self.SPECIALS):]}


class SubwordVocab:
    """A SentencePiece BPE model whose first ids are `SPECIALS` (id 0 = padding, 1 =
    unknown, then the task's own). `LOWER` as for CharVocab."""

    lang = "en"
    SPECIALS: list[str] = []
    LOWER = False

    def __init__(self, model: bytes):
        import sentencepiece as spm

        self.model = model
        self.sp = spm.SentencePieceProcessor(model_proto=model)
        assert [self.sp.id_to_piece(i) for i in range(len(self.SPECIALS))] == self.SPECIALS

    @classmethod
    def train(cls, texts: Iterable[str], size: int, **options) -> SubwordVocab:
        """BPE over `texts` (lower-cased if LOWER), `size` pieces at most (small corpora get
        fewer); `options`: SentencePiece trainer options such as the ids of the specials."""
        import sentencepiece as spm

        buf = io.BytesIO()
        spm.SentencePieceTrainer.train(
            sentence_iterator=(cls._norm(t) for t in texts), model_writer=buf,
            vocab_size=size, model_type="bpe", character_coverage=0.9995, minloglevel=2,
            hard_vocab_limit=False, pad_id=0, unk_id=1, pad_piece=cls.SPECIALS[0],
            unk_piece=cls.SPECIALS[1], **options)
        return cls(buf.getvalue())

    @classmethod
    def _norm(cls, text: str) -> str:
        return text.lower() if cls.LOWER else text

    def __len__(self) -> int:
        return self.sp.get_piece_size()

    def tokens(self, text: str) -> list[tuple[int, str]]:
        """(id, surface) per piece; a surface carries its leading space."""
        return [(p.id, p.surface)
                for p in self.sp.encode(self._norm(text), return_type="proto").pieces]

    def encode(self, text: str) -> list[int]:
        return self.sp.encode(self._norm(text))

    def surface(self, token_id: int) -> str:
        return self.sp.id_to_piece(token_id).replace("\u2581", " ")

    def join(self, surfaces: list[str]) -> str:
        return " ".join("".join(surfaces).split())

    def to_state(self) -> dict:
        return {"kind": "subword", "model": self.model}
