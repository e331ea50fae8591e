"""PTB-style gold tags as ARK-Twitter tags, for comparing ARK-tag outputs on PTB-tagged data.

``../shared/data/pos/tagmaps/ptb_to_ark.tsv`` maps each PTB tag (with Ritter's RT/USR/HT/URL
and NPSChat's BES/HVS/GW/X) to one ARK tag; its comment lines list where that is a
judgement call. For scoring, a token counts only where its PTB tag and word determine
the ARK tag; the rest are left out of the score, for every tagger alike
(:func:`ark_gold` gives the reason):

- ``demonstrative``: this/that/these/those tagged DT: ARK tags them D as determiners but O
  as pronouns, and PTB's DT does not say which.
- ``wdt_that``: relative "that" (WDT): the map gives D, ARK uses P.
- ``uh_emoticon``, ``uh_please``: UH maps to "!", but ARK tags emoticons E and "please" V.
- ``hashtag``: HT maps to "#", but ARK gives a hashtag used as a word in the sentence that
  word's own tag.
- ``colon_after_mention``: ":" right after an @mention (the "RT @user :" pattern) is "~"
  in ARK, "," by the map.
- ``compound_pronoun``: PRP on a word that is not a plain personal pronoun: Ritter tags
  merged forms (im, ima, youre) PRP and NPSChat's your/their/there for you're/they're
  became PRP; ARK tags such compounds L.
- ``to_G``: the tags the map sends to ARK's catch-all G (POS, FW, SYM, $, #, GW, X): what
  ARK does with them (split-off 's, foreign words, symbols) varies.
- ``unmapped``: a tag the file does not list.

Everything else is mapped as the file says (e.g. NN -> N, NNP -> ^, UH -> "!", CD -> "$",
RT -> "~", USR -> "@", URL -> "U", MD -> V, TO -> P).
"""

from __future__ import annotations

import re
from pathlib import Path

#: PRP words that are plain personal pronouns (ARK O); other PRP tokens are compounds
PLAIN_PRONOUNS = frozenset(
    "i me you u ya ye he him she her it we us they them one myself yourself yaself himself "
    "herself itself ourselves yourselves themselves thee thou y'all yall ya'll "
    "mine yours his hers ours theirs".split()
)
DEMONSTRATIVES = frozenset({"this", "that", "these", "those", "dis", "dat", "dem", "tha"})
PLEASE = frozenset({"please", "pls", "plz", "pleas", "pleeease", "pleease", "pleeeease"})
# emoticons: the project tokenizer's pattern (nlp_models/pos/tokenizer.py) plus any
# token without a letter or digit (e.g. "-_-", ":')", "o.o"); UH words are letters
_EMOTICON = re.compile(
    r"(?:[<>]?[:;=8xX][\-o\*']?[\)\]\(\[dDpP/\\:\}\{@\|3]+)"
    r"|(?:[\)\]\(\[dDpP/\\\}\{@\|][\-o\*']?[:;=8][<>]?)"
    r"|<3+|</3+|(?:\^_*\^)|(?:-_+-)|(?:o_O|O_o|o\.O|O\.o)"
)
TO_G = frozenset({"POS", "FW", "SYM", "$", "#", "GW", "X"})


def read_tagmap(path: str | Path) -> dict[str, str]:
    """SOURCE<TAB>ARK pairs; lines starting with "# " are comments (the PTB tag "#" starts
    its data line with "#<TAB>")."""
    table: dict[str, str] = {}
    for line in Path(path).read_text(encoding="utf-8").splitlines():
        if not line.strip() or line.startswith("# "):
            continue
        source, target = line.split("\t")
        table[source] = target
    return table


def is_emoticon(word: str) -> bool:
    return bool(_EMOTICON.fullmatch(word)) or not any(c.isalnum() for c in word)


def ark_gold(tokens: list[str], ptb_tags: list[str], table: dict[str, str]
             ) -> list[tuple[str | None, str]]:
    """Per token (ARK tag or None, reason): None where the PTB tag and word do not determine
    the ARK tag (reason says why); otherwise the mapped tag and reason "mapped"."""
    out: list[tuple[str | None, str]] = []
    for i, (word, tag) in enumerate(zip(tokens, ptb_tags, strict=True)):
        low = word.lower().replace("’", "'")
        if tag not in table:
            out.append((None, "unmapped"))
        elif tag == "DT" and low in DEMONSTRATIVES:
            out.append((None, "demonstrative"))
        elif tag == "WDT" and low == "that":
            out.append((None, "wdt_that"))
        elif tag == "UH" and is_emoticon(word):
            out.append((None, "uh_emoticon"))
        elif tag == "UH" and low in PLEASE:
            out.append((None, "uh_please"))
        elif tag == "HT":
            out.append((None, "hashtag"))
        elif tag == ":" and word == ":" and i > 0 and ptb_tags[i - 1] == "USR":
            out.append((None, "colon_after_mention"))
        elif tag == "PRP" and low not in PLAIN_PRONOUNS:
            out.append((None, "compound_pronoun"))
        elif tag in TO_G:
            out.append((None, "to_G"))
        else:
            out.append((table[tag], "mapped"))
    return out
