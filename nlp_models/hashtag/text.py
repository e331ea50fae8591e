"""The word protocol shared by training targets, decoding and scoring.

Users write hashtags as one token (`BostonStrong`, `yycflood`, `抗击疫情`); the paper's targets
are word sequences (`boston strong # ...`). Everything that turns a hashtag into words or
words back into a hashtag lives here, so the model is trained, decoded and scored in exactly
the same word space.

English hashtags are split where the user's capitals, digits or underscores say a word starts
and, where the user gave no such mark, with `wordsegment` (web unigram/bigram counts).
Chinese hashtags are split into characters: no word segmenter has to be trusted and ROUGE on
characters is the usual choice for Chinese.
"""

from __future__ import annotations

import re
from collections.abc import Callable, Sequence
from functools import lru_cache

SEPARATOR = "#"  # the word between two hashtags of a target sequence

_RUNS = re.compile(r"\d+|[^\W\d_]+")  # digit runs and letter runs; '_' and punctuation split
# One word inside an ASCII letter run: `iPhone`/`eBay`/`iOS` (a lowercase prefix letter),
# an acronym not followed by a lowercase letter (`NYC` in `NYCMarathon`), or a plain word.
_CAMEL = re.compile(r"[a-z][A-Z](?:[a-z]+|[A-Z]*(?![a-z]))|[A-Z]+(?![a-z])|[A-Z]?[a-z]+")
# wordsegment's counts predate `covid`, `selfie` or `brexit` and shatter them into fragments
# (co+vid, self+ie, br+exit). A segmentation is kept only if its one- or two-letter pieces
# are ordinary English words; otherwise the chunk stays whole.
_SHORT_WORDS = frozenset(
    "a i am an as at be by do go he hi if in is it me my no of oh on or so to up us we".split()
)
_segment: Callable[[str], list[str]] | None = None  # wordsegment.segment, once loaded

# Common English function words: the English test of the extra-data filter, and words that
# are never offered as hashtags on their own (post_candidates).
FUNCTION_WORDS = frozenset("""
a an the and or but if so as than then that this these those there here
i me my mine you your yours he him his she her hers it its we us our they them their
is are was were be been being am do does did have has had will would shall should can could
may might must not no to of in on at for with from by about into over after before up down
out off just what when where who why how which all some any""".split())
_POST_WORD = re.compile(r"[^\W_]+")  # letter/digit runs, as Ext.TFIDF reads a post


def _wordsegment(chunk: str) -> list[str]:
    """Split an ASCII lowercase chunk (`yycflood`) into words, loading the counts once."""
    global _segment
    if _segment is None:
        import wordsegment

        wordsegment.load()
        _segment = wordsegment.segment
    words = _segment(chunk)
    if any(len(w) <= 2 and w not in _SHORT_WORDS for w in words):
        return [chunk]
    return words


def _split_letters(run: str) -> list[str]:
    """Words of one letter run. Capitals the user typed mark word starts and are trusted;
    a piece whose case says nothing about its inside (all lower case, or the whole run in one
    case: `Bostonstrong`, `BOSTONSTRONG`) is handed to wordsegment."""
    if not run.isascii():
        return [run.lower()]
    pieces = _CAMEL.findall(run)
    words = []
    for piece in pieces:
        uninformative = piece.islower() or (
            len(pieces) == 1 and (piece.isupper() or piece.istitle())
        )
        words.extend(_wordsegment(piece.lower()) if uninformative else [piece.lower()])
    return words


@lru_cache(maxsize=1 << 18)
def _split_cached(tag: str, lang: str) -> tuple[str, ...]:
    if lang == "zh":
        return tuple(c.lower() for c in tag if not c.isspace() and c != SEPARATOR)
    words: list[str] = []
    for run in _RUNS.findall(tag):
        words.extend([run] if run.isdigit() else _split_letters(run))
    return tuple(words)


def split_hashtag(tag: str, lang: str) -> list[str]:
    """A hashtag as written (`NYCMarathon`, `covid19`, `抗击疫情`) -> its lower-case words
    (`nyc marathon`, `covid 19`, `抗 击 疫 情`). Cached: the same hashtags recur a lot."""
    return list(_split_cached(tag, lang))


def target_words(hashtags: list[str], lang: str) -> list[str]:
    """The paper's target `h1 # h2 # ...` as words; hashtags with no words are left out so
    that `split_generated` inverts it."""
    words: list[str] = []
    for tag in hashtags:
        tag_words = split_hashtag(tag, lang)
        if tag_words:
            words.extend(([SEPARATOR] if words else []) + tag_words)
    return words


def split_generated(words: list[str]) -> list[list[str]]:
    """A generated word sequence -> its hashtags (lists of words), split on '#' items.
    Empty hashtags (`# #`, a leading or trailing '#') are dropped."""
    hashtags: list[list[str]] = [[]]
    for word in words:
        if word == SEPARATOR:
            hashtags.append([])
        else:
            hashtags[-1].append(word)
    return [h for h in hashtags if h]


def join_words(words: list[str], lang: str) -> str:
    """A generated hashtag's words as one hashtag for output: ["boston", "strong"] ->
    "bostonstrong". Hashtags carry no spaces, and case is not modelled."""
    tag = "".join(words)
    return tag.lower() if lang == "en" else tag


def normalize_hashtag(tag: str) -> str:
    """The form in which two hashtags count as the same for F1@k: lower case, no spaces,
    no '#'."""
    return "".join(c for c in tag.lower() if not c.isspace() and c != SEPARATOR)


def written_words(text: str) -> list[str]:
    """The letter/digit runs of an English post in text order, as written, placeholders
    (<url>, @user) left out."""
    return _POST_WORD.findall(text.replace("<url>", " ").replace("@user", " "))


def _post_tokens(text: str) -> list[str]:
    """written_words, lower-cased."""
    return [w.lower() for w in written_words(text)]


def post_words(text: str) -> set[str]:
    """The words of a post (`_post_tokens`) as a set: a generated hashtag word found here is
    a copy of the post."""
    return set(_post_tokens(text))


def post_candidates(text: str, lang: str = "en", segmenter=None) -> list[list[str]]:
    """Hashtags to offer straight from a post, each as its list of words (Chinese: of
    characters), in text order: every content word on its own, then every two adjacent
    content words as one hashtag ("boston marathon" -> #bostonmarathon, 油价 + 下调 ->
    #油价下调), the way people join names and phrases into a tag. English content words have
    at least 3 characters, are not all digits and not a function word; Chinese ones are jieba
    words of at least 2 characters with a CJK character or a letter, not a function word."""
    return [as_hashtag(words, lang) for words in post_candidate_words(text, lang, segmenter)]


def as_hashtag(words: list[str], lang: str) -> list[str]:
    """The words of the post joined as one hashtag, as the model writes it: a Chinese
    hashtag's words are its characters."""
    return list("".join(words)) if lang == "zh" else words


def post_candidate_words(text: str, lang: str = "en", segmenter=None) -> list[list[str]]:
    """post_candidates as the one or two words of the post each joins (Chinese: jieba
    words, from `segmenter` if given (zh_segmenter), joined at most ZH_MAX_CANDIDATE
    characters long)."""
    seen, content = ((zh_tokens(text, segmenter), _zh_content) if lang == "zh"
                     else (_post_tokens(text), _en_content))
    singles = [[w] for w in dict.fromkeys(seen) if content(w)]
    adjacent = dict.fromkeys(zip(seen, seen[1:], strict=False))
    pairs = [[a, b] for a, b in adjacent if content(a) and content(b)]
    if lang == "zh":
        return [words for words in singles + pairs
                if len("".join(words)) <= ZH_MAX_CANDIDATE]
    return singles + pairs


def _en_content(word: str) -> bool:
    return len(word) >= 3 and not word.isdigit() and word not in FUNCTION_WORDS


def _zh_content(word: str) -> bool:
    return len(word) >= 2 and bool(_ZH_CONTENT.search(word)) and word not in ZH_FUNCTION_WORDS


ZH_MAX_CANDIDATE = 10  # characters of a joined pair (41 % of training topics are this short)
# Chinese words never offered as a hashtag on their own: pronouns, conjunctions, adverbs.
ZH_FUNCTION_WORDS = frozenset("""
我们 你们 他们 她们 它们 自己 大家 什么 怎么 怎么样 这个 那个 这些 那些 这样 那样 这里 那里
就是 因为 所以 但是 可是 而且 如果 虽然 然后 还是 或者 已经 可以 没有 不是 一个 一些 一下 一样
真的 还有 现在 今天 明天 昨天 时候 知道 觉得 希望 喜欢 不要 不会 不能 应该 需要 可能 其实 只是
非常 特别 一定 一直 终于 为了 通过 关于 对于 以及 还要 这么 那么 哈哈 哈哈哈 真是 看看 转发
微博 视频 网页 链接 全文 详情""".split())
_ZH_CONTENT = re.compile(r"[\u4e00-\u9fffA-Za-z]")
# Weibo placeholders and markup that are not words of the post: <url>, @user, [emoji name].
_ZH_MARKUP = re.compile(r"<url>|@user|\[[^\[\]]{1,8}\]")


def zh_tokens(text: str, segmenter=None) -> list[str]:
    """The jieba tokens of a Chinese post in text order, lower-cased, markup left out; cut by
    `segmenter` (zh_segmenter) or jieba's default dictionary."""
    import jieba  # only Chinese posts pay for loading its dictionary

    jieba.setLogLevel(60)
    cut = (segmenter or jieba).lcut
    return [w for w in cut(_ZH_MARKUP.sub(" ", text).lower()) if not w.isspace()]


ZH_PHRASE_FREQ = 1000  # jieba frequency of an added word: enough to keep a name whole


def zh_segmenter(phrases: Sequence[str]):
    """A jieba tokenizer of its own (jieba's default one stays untouched) that keeps
    `phrases` whole: 华晨宇 rather than 华晨 + 宇."""
    import jieba

    jieba.setLogLevel(60)
    segmenter = jieba.Tokenizer()
    for phrase in phrases:
        segmenter.add_word(phrase.lower(), freq=ZH_PHRASE_FREQ)
    return segmenter
