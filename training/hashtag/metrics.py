"""ROUGE and F1@k for generated hashtags, as in the SegTrm paper (section 4.4).

ROUGE compares the best generated *sequence* `h1 # h2 # ...` with the reference sequence,
both as words (nlp_models.hashtag.text), so partly right hashtags (`#farmers` for
`#organic farmers market`) earn credit. F1@k compares whole hashtags, so it measures whether
the model reproduces the exact hashtag users wrote.

The paper used the Perl ROUGE script through pyrouge; `rouge_score` is Google's Python
re-implementation (same n-gram and LCS F-measures, Porter stemmer for English).
"""

from __future__ import annotations

from collections.abc import Sequence

from rouge_score.rouge_scorer import RougeScorer

from nlp_models.hashtag.text import SEPARATOR, join_words, normalize_hashtag, split_hashtag

ROUGE_TYPES = ("rouge1", "rouge2", "rougeL")

Hashtag = list[str]  # one hashtag as words, e.g. ["boston", "strong"]


class CharTokenizer:
    """Chinese ROUGE units are characters. rouge_score's default tokenizer keeps only
    [a-z0-9] and would delete every Chinese character, scoring all posts 0."""

    def tokenize(self, text: str) -> list[str]:
        return [c for c in text.lower() if not c.isspace() and c != SEPARATOR]


def sequence_text(hashtags: Sequence[Hashtag]) -> str:
    """Hashtags as the paper's target string `w w # w # w w`. English: the default tokenizer
    drops the '#' separators (it keeps only letters and digits), so a separator can never
    count as a match; the Chinese tokenizer drops them too. That is intended: ROUGE should
    reward words, not the number of hashtags. (ROUGE-2 still counts the bigram across a
    separator; the Perl script, which also deletes non-alphanumerics, does the same.)"""
    return f" {SEPARATOR} ".join(" ".join(words) for words in hashtags)


def make_scorer(lang: str) -> RougeScorer:
    if lang == "zh":
        return RougeScorer(list(ROUGE_TYPES), tokenizer=CharTokenizer())
    return RougeScorer(list(ROUGE_TYPES), use_stemmer=True)


def rouge(
    top_sequences: Sequence[Sequence[Hashtag]], references: Sequence[list[str]], lang: str
) -> dict[str, float]:
    """Mean ROUGE F over posts; an empty prediction scores 0 (rouge_score returns 0 when
    either side has no tokens)."""
    scorer = make_scorer(lang)
    totals = dict.fromkeys(ROUGE_TYPES, 0.0)
    for predicted, gold in zip(top_sequences, references, strict=True):
        reference = sequence_text([split_hashtag(tag, lang) for tag in gold])
        scores = scorer.score(reference, sequence_text(predicted))
        for name in ROUGE_TYPES:
            totals[name] += scores[name].fmeasure
    return {name: total / max(len(references), 1) for name, total in totals.items()}


def hashtag_key(words: Hashtag, lang: str) -> str:
    """The form in which a predicted hashtag is matched against the gold ones."""
    return normalize_hashtag(join_words(words, lang))


def gold_keys(tags: list[str], lang: str) -> set[str]:
    """Gold hashtags in the form the generator can emit (split into words, joined again), so
    `Boston_Strong` is matched by `bostonstrong`; for all other hashtags this is just
    normalize_hashtag of the tag."""
    return {key for tag in tags if (key := hashtag_key(split_hashtag(tag, lang), lang))}


def shown_hits(shown: Sequence[Sequence[Hashtag]], references: Sequence[list[str]],
               lang: str) -> tuple[int, int, int]:
    """(shown hashtags that are the author's, hashtags shown, posts shown any), each hashtag
    counted once per post and matched as F1@k matches: what a reader sees, which F1@k hides
    by dividing by k."""
    right = total = posts = 0
    for predicted, gold in zip(shown, references, strict=True):
        keys = {hashtag_key(words, lang) for words in predicted}
        right += len(keys & gold_keys(gold, lang))
        total, posts = total + len(keys), posts + bool(keys)
    return right, total, posts


def f1_at_k(
    ranked: Sequence[Sequence[Hashtag]], references: Sequence[list[str]], lang: str, k: int
) -> float:
    """Macro-averaged F1 of the top k predicted hashtags against the gold set.

    Precision divides by k even when fewer than k hashtags were generated (the fixed-k
    definition of Meng et al., 2017, "Deep Keyphrase Generation"), so a model is not
    rewarded for saying less; recall divides by the number of gold hashtags.
    """
    total = 0.0
    for predicted, gold in zip(ranked, references, strict=True):
        keys = gold_keys(gold, lang)
        top = list(dict.fromkeys(hashtag_key(words, lang) for words in predicted))[:k]
        hits = len(keys.intersection(top))
        if hits:
            precision, recall = hits / k, hits / len(keys)
            total += 2 * precision * recall / (precision + recall)
    return total / max(len(references), 1)


def score(
    top_sequences: Sequence[Sequence[Hashtag]],
    ranked: Sequence[Sequence[Hashtag]],
    references: Sequence[list[str]],
    lang: str,
    ks: Sequence[int] = (1, 5),
) -> dict:
    """All metrics of a test set, in 0..1.

    top_sequences[i]: the hashtags of the single best generated sequence for post i (ROUGE).
    ranked[i]: every generated hashtag for post i, best first, duplicates removed (F1@k).
    references[i]: the hashtags users wrote, as raw strings.
    """
    if not len(top_sequences) == len(ranked) == len(references):
        raise ValueError(
            f"{len(top_sequences)} top sequences, {len(ranked)} ranked lists, "
            f"{len(references)} references: one of each per post"
        )
    metrics = rouge(top_sequences, references, lang)
    metrics.update({f"f1@{k}": f1_at_k(ranked, references, lang, k) for k in ks})
    return {**{name: round(value, 4) for name, value in metrics.items()}, "posts": len(references)}
