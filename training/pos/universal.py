"""Gold in the 12 universal tags (Petrov, Das & McDonald 2012), for scoring taggers on a
source whose annotators used neither PTB nor ARK tags: Lowlands.test (Plank, Hovy & Søgaard,
EACL 2014), a test set from a source neither tagger was trained on (issue 21).

The file is ``in-house-eval.tsv`` of github.com/coastalcph/supersense-data-twitter (commit
``b96e3a6``): ``TOKEN<TAB>UNIVERSAL_TAG<TAB>SUPERSENSE``, a blank line between tweets; it
stays out of the repository (``data/`` is git-ignored; docs/models/pos.md says how to get
it). Both taggers' outputs are mapped to universal tags with the TSV files in
``training/pos/tagmaps/`` (their comments give the judgement calls); the gold is used as is.

The release replaced user names, links and numbers with placeholders. A tagger has never
seen ``URL`` or ``@USER`` as tokens, so :func:`realistic` turns them back into tokens of
the kind it was trained on before tagging. Left out of the score, for every tagger alike
(:func:`universal_gold` gives the reason):

- ``url_placeholder``, ``mention_placeholder``: the annotators tagged every link and
  @mention NOUN; the taggers have tags of their own for them (ARK U and @, our PTB head URL
  and USR), which the maps send to X (other): no tagger's convention can agree, and a map
  choosing NOUN would only hand every tagger 280 free tokens.
- ``hashtag``: a token starting with ``#`` (including a bare ``#`` whose text the release
  lost): the annotators tagged all of them NOUN; ARK tags a hashtag ``#`` or, when it is a
  word of the sentence, as that word, our PTB head tags every hashtag HT.

``NUMBER`` (gold NUM) is tagged as ``10`` and scored: every tagger has a tag for numbers.
"""

from __future__ import annotations

import re
from pathlib import Path

from training.pos.data import Sentence

#: the tagset of Petrov et al. (2012), in their order
UNIVERSAL_TAGS = ("NOUN", "VERB", "ADJ", "ADV", "PRON", "DET", "ADP", "NUM", "CONJ", "PRT",
                  ".", "X")
TAGMAP_DIR = Path(__file__).resolve().parent / "tagmaps"
ARK_TO_UNIVERSAL = TAGMAP_DIR / "ark_to_universal.tsv"
PTB_TO_UNIVERSAL = TAGMAP_DIR / "ptb_to_universal.tsv"
#: placeholder -> a token of the kind the taggers saw in training (Twitter's t.co links)
PLACEHOLDERS = {"URL": "http://t.co/x", "@USER": "@user", "NUMBER": "10"}
_EXCLUDED_PLACEHOLDERS = {"URL": "url_placeholder", "@USER": "mention_placeholder"}
_HASHTAG = re.compile(r"#\S*")


def read_universal_tsv(path: str | Path) -> list[Sentence]:
    """``TOKEN<TAB>TAG[<TAB>...]`` lines, blank lines between tweets; columns after the tag
    (Lowlands' supersenses) are ignored. A tag outside the 12 raises: a misread file must
    not be scored."""
    sentences, tokens, tags = [], [], []
    lines = Path(path).read_text(encoding="utf-8").splitlines()
    for number, line in enumerate(lines, 1):
        if not line.strip():
            if tokens:
                sentences.append(Sentence(tokens, tags, "universal"))
                tokens, tags = [], []
            continue
        fields = line.split("\t")
        if len(fields) < 2 or fields[1] not in UNIVERSAL_TAGS:
            raise ValueError(f"{path}:{number}: expected TOKEN<TAB>UNIVERSAL_TAG, got {line!r}")
        tokens.append(fields[0])
        tags.append(fields[1])
    if tokens:
        sentences.append(Sentence(tokens, tags, "universal"))
    return sentences


def realistic(tokens: list[str]) -> list[str]:
    """The tokens a tagger gets: placeholders replaced (``URL`` -> ``http://t.co/x``,
    ``@USER`` -> ``@user``, ``NUMBER`` -> ``10``), everything else as is."""
    return [PLACEHOLDERS.get(t, t) for t in tokens]


def universal_gold(tokens: list[str], tags: list[str]) -> list[tuple[str | None, str]]:
    """Per token (gold tag or None, reason): None where no tagger's convention can match
    the annotators' (module docstring); otherwise the gold tag and reason "scored".
    `tokens` are the file's, placeholders included."""
    out: list[tuple[str | None, str]] = []
    for token, tag in zip(tokens, tags, strict=True):
        if token in _EXCLUDED_PLACEHOLDERS:
            out.append((None, _EXCLUDED_PLACEHOLDERS[token]))
        elif _HASHTAG.fullmatch(token):
            out.append((None, "hashtag"))
        else:
            out.append((tag, "scored"))
    return out


def to_universal(tags: list[list[str]], table: dict[str, str]) -> list[list[str]]:
    """A tagger's output mapped to universal tags; a tag the map lacks raises KeyError
    (tests/unit/test_pos_universal.py checks that both maps cover the heads' tags)."""
    return [[table[t] for t in sentence] for sentence in tags]
