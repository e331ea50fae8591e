"""Which words of a post its author would make a hashtag: a small learned keyword model.

On feeds the generator never saw, its topical tags are rarely the users' (2009 feeds share few
hashtags with our training sources), while the post's own words often are: a perfect picker of
one word of the post would score three times the served generator (docs/models/hashtag.md,
"the post oracle"). SegTrm's probability of a post word says little about whether a person
would tag it, so the post's candidates (text.post_candidate_words: a content word, or two
adjacent ones joined) are scored by what keyword extractors look at, learned on the training
posts (training/hashtag/keywords.py): eight features per candidate (`FEATURES`) and a
two-layer perceptron giving log P(the candidate is one of the post's hashtags).

Words are English letter/digit runs, or jieba words in Chinese (where `cased` is always 0),
cut with the training topics of 2-6 characters added to jieba's dictionary, so that names
and events people tag stay whole (华晨宇, not 华晨 + 宇). The statistics (document and hashtag
counts of the training posts, the added topics) travel with the weights in the checkpoint's
meta, so serving computes exactly the features training saw.
"""

from __future__ import annotations

import math
from collections import Counter
from dataclasses import dataclass, field

import torch

from nlp_models.hashtag.text import (
    normalize_hashtag,
    split_hashtag,
    written_words,
    zh_segmenter,
    zh_tokens,
)

FEATURES = (
    "idf",  # mean log(posts / (1 + posts containing the word)) over the candidate's words
    "tag_count",  # log(1 + times the joined candidate was a training hashtag)
    "tag_word_count",  # mean log(1 + times each word was part of a training hashtag)
    "position",  # where its first word first occurs, 0 = start of the post, 1 = end
    "cased",  # some word of it is only ever written with a capital in the post (a name)
    "chars",  # length of the joined candidate
    "pair",  # two adjacent words joined (1) or one word (0)
    "repeats",  # mean number of times its words occur in the post
)


@dataclass
class KeywordStats:
    """Counts over the training posts. At training time each post's own contribution is
    subtracted (leave-one-out), so a feature never tells the model about the post's answer."""

    posts: int
    df: dict[str, int]  # word -> training posts containing it
    tag_words: dict[str, int]  # word -> occurrences in training hashtags
    tags: dict[str, int]  # normalized hashtag -> occurrences
    lang: str
    phrases: list[str] = field(default_factory=list)  # Chinese: added to jieba's dictionary


def hashtag_words(tag: str, lang: str, segmenter=None) -> list[str]:
    """A hashtag's words as the features count them: English as split for scoring, Chinese
    as jieba words (scoring splits Chinese into characters)."""
    return zh_tokens(tag, segmenter) if lang == "zh" else split_hashtag(tag, lang)


@dataclass
class PostText:
    """A post as the features read it: its lower-cased words in order, and which of them the
    author ever wrote in lower case."""

    tokens: list[str]
    lowercase: set[str]

    @classmethod
    def read(cls, text: str, lang: str, segmenter=None) -> PostText:
        if lang == "zh":
            tokens = zh_tokens(text, segmenter)
            return cls(tokens, set(tokens))
        raw = written_words(text)
        return cls([t.lower() for t in raw], {t for t in raw if t == t.lower()})


def features(words: list[str], post: PostText, stats: KeywordStats,
             own_words: Counter | None = None, own_tags: Counter | None = None,
             own_post: bool = False) -> list[float]:
    """The FEATURES of one candidate. `own_*`: the post's own hashtag words and hashtags, and
    whether the post is counted in `df` (training posts are; leave-one-out)."""
    own_words, own_tags = own_words or Counter(), own_tags or Counter()
    tag = normalize_hashtag("".join(words))
    first = [post.tokens.index(w) for w in words if w in post.tokens]
    return [
        sum(math.log(stats.posts / (1 + stats.df.get(w, 0) - own_post)) for w in words)
        / len(words),
        math.log1p(stats.tags.get(tag, 0) - own_tags[tag]),
        sum(math.log1p(stats.tag_words.get(w, 0) - own_words[w]) for w in words) / len(words),
        min(first) / max(len(post.tokens), 1) if first else 1.0,
        float(any(w not in post.lowercase for w in words)),
        float(len(tag)),
        float(len(words) == 2),
        sum(post.tokens.count(w) for w in words) / len(words),
    ]


class KeywordModel(torch.nn.Module):
    """Standardized FEATURES -> tanh layer -> one logit."""

    def __init__(self, stats: KeywordStats, hidden: int = 16):
        super().__init__()
        self.stats = stats
        self.segmenter = zh_segmenter(stats.phrases) if stats.lang == "zh" else None
        self.register_buffer("mean", torch.zeros(len(FEATURES)))
        self.register_buffer("std", torch.ones(len(FEATURES)))
        self.net = torch.nn.Sequential(torch.nn.Linear(len(FEATURES), hidden), torch.nn.Tanh(),
                                       torch.nn.Linear(hidden, 1))

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        """(N, len(FEATURES)) raw features -> (N,) logits."""
        return self.net((x - self.mean) / self.std).squeeze(-1)

    @torch.no_grad()
    def log_probs(self, candidates: list[list[str]], text: str) -> list[float]:
        """log P(hashtag) of each candidate (a list of words) of the post `text`."""
        if not candidates:
            return []
        post = PostText.read(text, self.stats.lang, self.segmenter)
        x = torch.tensor([features(words, post, self.stats) for words in candidates])
        return torch.nn.functional.logsigmoid(self(x)).tolist()

    def to_state(self) -> dict:
        return {"stats": vars(self.stats), "hidden": self.net[0].out_features,
                "weights": {k: v.tolist() for k, v in self.state_dict().items()}}

    @classmethod
    def from_state(cls, state: dict) -> KeywordModel:
        model = cls(KeywordStats(**state["stats"]), state["hidden"])
        model.load_state_dict({k: torch.tensor(v) for k, v in state["weights"].items()})
        return model.eval()
