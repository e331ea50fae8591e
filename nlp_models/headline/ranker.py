"""One learned ranker over a headline request's candidates (issue 83, stage 2).

A request proposes candidates from several sources (the generator's beam, the compressor's
deletions of the first sentence, the lead trimmed by rule), filters those that state what the
article does not, and ranks the rest by one linear model over each candidate's features.
The weights are data (``to_state``), fitted on dev pairs by ``training/headline/ranker.py``
with a pairwise logistic regression: for two candidates of one article, the one closer to
the editors' headline should score higher.

The features say what the rules could not: how sure the compressor is of a deletion (a
deletion forced past the model's own length keeps words it would drop: "Colorado, Denver to
tax evasion in RHHS. Medina"), how many pieces of the sentence it glues, how many of the
candidate's word pairs the article itself writes side by side, beside the generator's
judge and the distance to the house's length.
"""

from __future__ import annotations

import math
from dataclasses import dataclass, field

from nlp_models.headline.compressor import is_word, tokens
from nlp_models.headline.lead import MAX_WORDS, MIN_WORDS, repeats_a_word

#: Where a candidate comes from.
SOURCES = ("beam", "compressed", "trimmed")
#: The features, in the order of the weights.
FEATURES = ("judge", "from_beam", "from_trimmed", "is_deletion", "decision_logprob",
            "min_kept_logit", "runs", "pair_support", "novel_words", "length_gap",
            "abs_length_gap", "opens_with_function_word", "ends_with_function_word")
#: Words a headline does not end on ("... libel award against") and rarely opens with.
FUNCTION_WORDS = frozenset(
    "a an the and or but of to in on at for by with from as that which who whose than "
    "into over after before about its his her their our is are was were be been has have "
    "had will would said says".split())
LOGIT_CLIP = 8.0  # a keep logit counts at most this far from 0


@dataclass(frozen=True)
class Candidate:
    text: str
    source: str  # one of SOURCES
    features: dict[str, float] = field(default_factory=dict)


def withheld_because(text: str, article: str, lang: str = "en") -> str | None:
    """Why a candidate is not shown, or None: it states a number or name the article lacks
    ("unsupported", faithful.py), says a word twice ("repeats"), or has fewer than MIN_WORDS
    or more than MAX_WORDS words ("length")."""
    from nlp_models.headline.faithful import unsupported  # faithful.py imports lead.py

    if unsupported(text, article, lang):
        return "unsupported"
    if repeats_a_word(text):
        return "repeats"
    if not MIN_WORDS <= len(text.split()) <= MAX_WORDS:
        return "length"
    return None


def _words(text: str) -> list[str]:
    return [t.lower() for t in tokens(text) if is_word(t)]


def aligned(sentence: list[str], candidate: list[str]) -> list[int] | None:
    """Indices of `sentence` (lower-cased words) that spell `candidate` in order, taking each
    word at its first place after the last; None when the candidate is no deletion of it."""
    out, j = [], 0
    for word in candidate:
        while j < len(sentence) and sentence[j] != word:
            j += 1
        if j == len(sentence):
            return None
        out.append(j)
        j += 1
    return out


def features(text: str, source: str, judge: float, sentence: list[str],
             keep_logits: list[float], article_pairs: set[tuple[str, str]],
             article_words: set[str], target: int) -> dict[str, float]:
    """One candidate's features. `sentence`: the first sentence's words (lower-cased) and
    `keep_logits` the compressor's logit per word; `article_pairs`: every two words the
    article writes side by side; `target`: the house's length in words."""
    words = _words(text)
    kept = aligned(sentence, words) if words else None
    feats = {name: 0.0 for name in FEATURES}
    feats["judge"] = judge
    feats["from_beam"] = float(source == "beam")
    feats["from_trimmed"] = float(source == "trimmed")
    if kept is not None and keep_logits:
        clipped = [max(-LOGIT_CLIP, min(LOGIT_CLIP, x)) for x in keep_logits]
        chosen = set(kept)
        # log-probability of each keep/drop decision over the sentence, per word
        logp = [-math.log1p(math.exp(-x if i in chosen else x)) for i, x in enumerate(clipped)]
        feats["is_deletion"] = 1.0
        feats["decision_logprob"] = sum(logp) / len(logp)
        feats["min_kept_logit"] = min(clipped[i] for i in kept)
        feats["runs"] = float(1 + sum(b != a + 1 for a, b in zip(kept, kept[1:], strict=False)))
    pairs = list(zip(words, words[1:], strict=False))
    feats["pair_support"] = (sum(p in article_pairs for p in pairs) / len(pairs)) if pairs else 1.0
    feats["novel_words"] = (sum(w not in article_words for w in words) / len(words)
                            if words else 1.0)
    feats["opens_with_function_word"] = float(bool(words) and words[0] in FUNCTION_WORDS)
    feats["ends_with_function_word"] = float(bool(words) and words[-1] in FUNCTION_WORDS)
    feats["length_gap"] = float(len(words) - target)
    feats["abs_length_gap"] = abs(feats["length_gap"])
    return feats


def article_vocabulary(article: str) -> tuple[set[tuple[str, str]], set[str]]:
    """The article's adjacent word pairs and its words, lower-cased."""
    words = _words(article)
    return set(zip(words, words[1:], strict=False)), set(words)


@dataclass
class Ranker:
    """score = weights · features (the features' raw values; scaling is folded in)."""

    weights: dict[str, float]
    bias: float = 0.0

    def score(self, candidate: Candidate) -> float:
        return self.bias + sum(w * candidate.features.get(name, 0.0)
                               for name, w in self.weights.items())

    def order(self, candidates: list[Candidate]) -> list[Candidate]:
        """Best first; ties keep the proposal order."""
        return sorted(candidates, key=lambda c: -self.score(c))

    def to_state(self) -> dict:
        return {"weights": dict(self.weights), "bias": self.bias}

    @classmethod
    def from_state(cls, state: dict) -> Ranker:
        unknown = set(state["weights"]) - set(FEATURES)
        if unknown:
            raise ValueError(f"ranker weights for unknown features: {sorted(unknown)}")
        return cls(dict(state["weights"]), float(state.get("bias", 0.0)))
