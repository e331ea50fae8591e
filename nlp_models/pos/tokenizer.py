"""Twitter-aware tokenizer with character offsets.

Splits raw post text the way the ARK-Twitter annotations do (Gimpel et al. 2011,
"twokenizer" conventions), because the tagger is trained on those token boundaries:
URLs, e-mail addresses, @mentions, #hashtags, emoticons and runs of punctuation stay
whole; each emoji is its own token; contractions (I'm, don't) stay one token.

Offsets are Python string indices (Unicode code points), so `text[start:end]`
is always the token.
"""

from __future__ import annotations

import re
from typing import NamedTuple


class Span(NamedTuple):
    text: str
    start: int
    end: int


# A link ends before an HTML-escaped character or an ellipsis glued to it ("http://t.co/x&#8230;")
_URL_CHAR = r"""(?:(?!&#)[^\s<>"…])"""
_URL = (
    rf"""(?:https?://|www\.){_URL_CHAR}+(?<![.,;:!?)\]'"])|(?:https?://|www\.){_URL_CHAR}+"""
)
_BARE_DOMAIN = r"\b[a-z0-9.-]+\.(?:com|org|net|edu|gov|co|io|ly|me|tv|uk|de)(?:/[^\s]*)?"
_EMAIL = r"\b[\w.+-]+@[\w-]+\.[\w.-]+\b"
# A clitic stays on a mention or hashtag ("#Syria's", "@bob's"), as on any word (_WORD)
_CLITIC = r"(?:['’](?:s|re|ve|ll|d|m)(?!\w))?"
_MENTION = r"@\w+" + _CLITIC
_HASHTAG = r"#\w+" + _CLITIC
_EMOTICON = (
    r"(?:[<>]?[:;=8xX][\-o\*']?[\)\]\(\[dDpP/\\:\}\{@\|3]+(?!\w))"  # :) ;-( =D :P :/, not 8pm
    r"|(?:[\)\]\(\[dDpP/\\\}\{@\|][\-o\*']?[:;=8][<>]?)"  # (: D:
    r"|<3+|</3+"  # hearts
    r"|(?:\^_*\^)|(?:o_O|O_o|o\.O|O\.o|>\.<)"  # ^_^ o_O >.<
    r"|(?:(?P<eye>[-=>^oO])[._]+(?P=eye))"  # -_- -.- =_= >.> o.o
)
_EMOJI = (
    "[\U0001F000-\U0001FAFF\u2600-\u27BF\u2B00-\u2BFF\uFE0F\u200D"
    "\U0001F1E6-\U0001F1FF\uE000-\uF8FF]"
)
# A number is one token with its separators ("6-8", "8:30", "1,000"), not the start of a
# word ("2pac", "2day" are words) nor of a hyphenated name ("11-09-teensUser34").
# A sign at the start ("+1", "-5") and a plus at the end ("10+") stay on it, as in twokenize.
_NUMBER = r"(?:(?<!\S)[-+])?[$€£]?\d+(?:[.,:/-]\d+)*(?:%|st|nd|rd|th|s|k|am|pm|\++)?(?![\w-])"
# Contractions, hyphenated, slash- and plus-joined words stay whole ("don't",
# "anti-establishment", "he/she", "GPS/DVD/USB", "CD+DVD"), as in ARK-Twitter and Ritter's
# tweets; twokenize splits only quotes and brackets off a word's edges, so a hyphen at the
# start or end of a word ("-Drake", "TX-"), a trailing plus ("Google+") and a dollar sign
# inside it ("CA$H") stay on it too.
_WORD = r"(?:(?<!\S)-(?=\w))?\w[\w$]*(?:['’/+-]\w[\w$]*)*(?:\++(?!\w)|-(?!\S))?"
# Dotted initials with or without the last dot (U.S., L.A, not the "U.S.A" of "U.S.Army"),
# titles (Mr.) and w/
_ABBREV = (
    r"(?<!\w)[A-Za-z](?:\.[A-Za-z])+(?:\.|(?!\w))"
    r"|\b(?:mr|mrs|ms|dr|sr|jr|rep|sen|st)\.|\bw/o?(?=\s|$)"
)
_ENTITY = r"&(?:[a-z]{2,8}|#\d{2,7}|#x[0-9a-f]{2,6});"  # HTML entities: &amp; &quot; &#8220;
_ARROW = r"<*[-=]+>+|<+[-=]+"  # -> --> <-- =>
# Runs of sentence punctuation and quotes stay together ('..."', '!:', '",'), as in twokenize
_PUNCT_RUN = r"[.?!,…'\"“”‘’:;]{2,}|-{2,}|\*+|[^\w\s]"

_TOKEN = re.compile(
    "|".join(
        f"(?:{p})"
        for p in (
            _URL,
            _EMAIL,
            _BARE_DOMAIN,
            _MENTION,
            _HASHTAG,
            _EMOTICON,
            _EMOJI,
            _ENTITY,
            _ARROW,
            _ABBREV,
            _NUMBER,
            _WORD,
            _PUNCT_RUN,
        )
    ),
    re.UNICODE | re.IGNORECASE,
)


_EMOTICON_ONLY = re.compile(_EMOTICON, re.UNICODE | re.IGNORECASE)


def is_emoticon(text: str) -> bool:
    """True for a whole emoticon such as ':)', ':-(' or '<3'."""
    return _EMOTICON_ONLY.fullmatch(text) is not None


def tokenize(text: str) -> list[Span]:
    """Split `text` into tokens; whitespace is never part of a token."""
    return [Span(m.group(), m.start(), m.end()) for m in _TOKEN.finditer(text)]
