"""Load a SegTrm checkpoint and turn raw posts into hashtags with scores.

Used by `training evaluate hashtag`, the benchmark and the Triton model, so the three can
never disagree. Checkpoints hold the config, the vocabulary and fp16 weights (compute runs in
fp32: CPU fp16 matmuls are slow).

Scores. Beam search ranks by log p(y | post); the frequent one-token training tags (`tbt`,
`repost`) have a high probability whatever the post says, so a wide beam ends on them.
With `prior_weight` λ > 0 the beam's hypotheses are re-ranked by

    score(y) = log p(y | post) - λ log p(y | empty post)

(length-normalised as the beam ranks), the "anti-language-model" of Li et al. 2016 (A
Diversity-Promoting Objective Function for Neural Conversation Models): the same model given
an empty post says what it says regardless of the post, and a hashtag whose probability the
post does not raise loses its head start. A copied word of the post has a low probability
without the post, so copying gains.

Whole words (English, when the checkpoint's meta has `known_words`). Copying works on
subwords, so a copied first piece can be finished with a generated one: `sour` + `or` ->
`souror`, a word nobody wrote. A hypothesis is kept only if each of its words occurs in the
post or in a training hashtag (`known_words`).

Post candidates (meta `post_candidates`, or `known_words`). Every content word of the post,
and every two adjacent ones joined (text.post_candidates; Chinese words from jieba), is
offered as a one-hashtag candidate of its own, scored by the model like the beam's
hypotheses; so a whole word of the post competes even when the beam only found its first
piece, or, in Chinese, when the beam only knows the training crawl's topics.

Beam length (meta `max_len`). The beam's hypotheses end at [SEP] or at `max_len` tokens
(default the model's `max_target`). The Chinese beam spends most of its steps spelling
out the crawl's long favourites ("全国累计确诊新冠肺炎79898例", 17 characters) that the prior
then ranks last, while the served hashtags come from the post candidates; a shorter beam
gives better dev scores in half the steps (docs/models/hashtag.md, "Chinese, version 7").
A hypothesis cut at `max_len`, or ended before its first token, is no hashtag and is never
offered: a cut count
("全国累计确诊91例新") would otherwise fill a slot of a short post whose own words score below
the threshold, and be shown.

Keywords and calibration (meta `keywords` and `calibration`, both languages). On feeds the model
never saw, the post's words are more often the users' hashtags than its generated topics, and
its probability of a post word is a poor guide to which word a person would tag. With a
keyword model (keywords.py) the post candidates are ranked by it instead of by SegTrm, and
both kinds are put on one scale, the log-odds that the hashtag is one of the users':

    generated:  a_g * (log p(y | post) - λ log p(y | empty post)) / length penalty + b_g
    post word:  a_p * log P_keyword(y is a hashtag of the post) + b_p

with (a_g, b_g, a_p, b_p) fitted by logistic regression on the held-out-source dev set, so a
favourite only wins where the model's confidence has been right on posts of a source it never
trained on.

λ, `known_words`, `post_candidates`, `max_len`, the keyword model, the calibration and the
served threshold `min_score` (hashtags of a sequence scoring below it are not shown) are
chosen on dev sets and stored in the checkpoint's meta by `python -m training tune hashtag`.
"""

from __future__ import annotations

from dataclasses import asdict, dataclass
from pathlib import Path

import torch

from nlp_models.hashtag.blocklist import Blocklist
from nlp_models.hashtag.decode import (
    LENGTH_PENALTY,
    Hypothesis,
    beam_search,
    encode_posts,
    sequence_log_probs,
)
from nlp_models.hashtag.keywords import KeywordModel
from nlp_models.hashtag.model import PostStates, SegTrm, SegTrmConfig, encode_sources
from nlp_models.hashtag.text import (
    SEPARATOR,
    as_hashtag,
    join_words,
    normalize_hashtag,
    post_candidate_words,
    post_words,
    split_generated,
)
from nlp_models.hashtag.vocab import UNK, Vocab, from_state

MAX_BATCH = 64  # posts per forward pass; bigger batches only add padding on this CPU
# Sequences whose empty-post log-probability is remembered: it does not depend on the post,
# and a stream offers the same words and favourites again and again. 100k short token
# tuples with a float each are a few tens of MB; when full, the cache starts over.
PRIOR_CACHE = 100_000


@dataclass
class Generated:
    """One post's output: the best sequence's hashtags and a ranked, de-duplicated list."""

    best: list[list[str]]  # hashtags of the top sequence, each a list of words
    # Hashtags of all n-best sequences in sequence rank order, each with the score (see the
    # module doc; the log-probability when prior_weight is 0) of the first (highest-ranked)
    # sequence that contains it.
    ranked: list[tuple[list[str], float]]
    truncated: bool
    lang: str
    blocked: int = 0  # distinct blocklisted hashtags among the post's candidates

    def hashtags(self, min_score: float | None = None) -> list[tuple[str, float]]:
        """For output: (hashtag as one string, score), best first, those scoring below
        `min_score` left out."""
        return [(join_words(words, self.lang), score) for words, score in self.ranked
                if min_score is None or score >= min_score]


@dataclass
class Candidate:
    """A beam hypothesis with log p(y | empty post) (`prior`; 0 when not computed), or a post
    candidate with its keyword log-probability (`keyword`; then `hyp` only holds its tokens)."""

    hyp: Hypothesis
    prior: float
    keyword: float | None = None

    def score(self, weight: float) -> float:
        return self.hyp.logprob - weight * self.prior

    def rank_key(self, weight: float) -> tuple[bool, float]:
        """As the beam ranks: ended hypotheses first, then by length-normalised score."""
        return self.hyp.finished, self.score(weight) / self.hyp.length_penalty()


@dataclass
class Calibration:
    """Log-odds of being right from a generated hypothesis' rank score or a post candidate's
    keyword log-probability (module doc). The identity until `tune` fits it."""

    generated: tuple[float, float] = (1.0, 0.0)
    post: tuple[float, float] = (1.0, 0.0)

    def log_odds(self, candidate: Candidate, weight: float) -> float:
        if candidate.keyword is not None:
            (a, b), x = self.post, candidate.keyword
        else:
            (a, b), x = self.generated, candidate.rank_key(weight)[1]
        return a * x + b


def save_checkpoint(path: str | Path, model: SegTrm, vocab: Vocab, lang: str, meta: dict) -> None:
    state = {k: v.half() if v.is_floating_point() else v for k, v in model.state_dict().items()}
    torch.save({"config": asdict(model.cfg), "vocab": vocab.to_state(), "lang": lang,
                "model": state, "meta": meta}, path)


class HashtagPredictor:
    def __init__(self, checkpoint: str | Path, threads: int | None = None):
        if threads:
            torch.set_num_threads(threads)
        state = torch.load(checkpoint, map_location="cpu", weights_only=False)
        self.cfg = SegTrmConfig(**state["config"])
        self.vocab = from_state(state["vocab"])
        self.lang: str = state["lang"]
        self.meta: dict = state.get("meta", {})
        self.model = SegTrm(self.cfg)
        self.model.load_state_dict({k: v.float() for k, v in state["model"].items()})
        self.model.eval().requires_grad_(False)
        self.prior_weight: float = self.meta.get("prior_weight", 0.0)
        self.max_len: int = self.meta.get("max_len") or self.cfg.max_target
        self.min_score: float | None = self.meta.get("min_score")
        self.blocklist = Blocklist([])  # set by the service (the version's blocklist.txt)
        known = self.meta.get("known_words")
        self.known: frozenset[str] | None = (frozenset(known) if known and self.lang == "en"
                                             else None)
        # English checkpoints tuned with known words offer the post's words too.
        self.offer_post_words: bool = (self.meta.get("post_candidates", False)
                                       or self.known is not None)
        keywords = self.meta.get("keywords")
        self.keywords = KeywordModel.from_state(keywords) if keywords else None
        self.calibration = Calibration(**{k: tuple(v) for k, v in
                                          self.meta.get("calibration", {}).items()})
        self._prior: dict[tuple[int, ...], float] = {}  # PRIOR_CACHE

    def generate(self, texts: list[str], beam: int = 4, n_best: int = 1,
                 prior_weight: float | None = None) -> list[Generated]:
        """Per text, the n_best sequences' hashtags. `prior_weight` overrides the
        checkpoint's λ. All `beam` hypotheses are candidates: re-ranked (λ > 0) and passed
        over when blocklisted, before the n_best are taken."""
        weight = self.prior_weight if prior_weight is None else prior_weight
        found, truncated = self.candidates(texts, beam, max(beam, n_best),
                                           with_prior=bool(weight))
        return [self.result(c, weight, n_best, t) for c, t in zip(found, truncated, strict=True)]

    def candidates(self, texts: list[str], beam: int, n_best: int,
                   with_prior: bool) -> tuple[list[list[Candidate]], list[bool]]:
        """Per text its n_best beam hypotheses (with whole words: those made of real words,
        and the post's words) with their empty-post log-probabilities when `with_prior`, and
        whether the text was cut to max_source tokens."""
        found: list[list[Candidate]] = []
        cut: list[bool] = []
        for i in range(0, len(texts), MAX_BATCH):
            chunk = texts[i : i + MAX_BATCH]
            ids, segs, truncated = encode_sources(chunk, self.vocab, self.cfg)
            posts = encode_posts(self.model, ids, segs)
            hyps = beam_search(self.model, posts, beam=beam, n_best=n_best, max_len=self.max_len)
            hyps = [[h for h in post if h.finished and h.tokens] for post in hyps]
            if self.known is not None:
                hyps = self._whole_words(hyps, chunk)
            chunk_found = [[Candidate(h, 0.0) for h in post] for post in hyps]
            if self.offer_post_words:
                for post, offered in zip(chunk_found, self._post_candidates(chunk, posts),
                                         strict=True):
                    post += offered
            if with_prior:
                scored = [c for post in chunk_found for c in post if c.keyword is None]
                priors = self._empty_post_log_probs([c.hyp.tokens for c in scored])
                for c, prior in zip(scored, priors, strict=True):
                    c.prior = prior
            found += chunk_found
            cut += truncated.tolist()
        return found, cut

    def _whole_words(self, hyps: list[list[Hypothesis]],
                     texts: list[str]) -> list[list[Hypothesis]]:
        """Per post: the hypotheses made of known or post words (module doc)."""
        kept = []
        for post, text in zip(hyps, texts, strict=True):
            words = post_words(text)
            kept.append([h for h in post if all(
                w == SEPARATOR or w in self.known or w in words
                for w in self.vocab.decode_words(h.tokens))])
        return kept

    def _post_candidates(self, texts: list[str], posts: PostStates) -> list[list[Candidate]]:
        """Per post: one candidate per content word (and pair of adjacent content words) of
        the post, scored by the keyword model if there is one, else by SegTrm (module doc).
        A candidate with a token the vocabulary lacks is not offered: it could not be
        written back."""
        segmenter = self.keywords.segmenter if self.keywords is not None else None
        rows = [(i, words, tokens) for i, text in enumerate(texts)
                for words in post_candidate_words(text, self.lang, segmenter)
                if UNK not in (tokens := self.vocab.encode_words(
                    as_hashtag(words, self.lang))[: self.cfg.max_target - 1])]
        offered: list[list[Candidate]] = [[] for _ in texts]
        if self.keywords is not None:
            by_post: list[list[tuple[list[str], list[int]]]] = [[] for _ in texts]
            for i, words, tokens in rows:
                by_post[i].append((words, tokens))
            for i, (text, mine) in enumerate(zip(texts, by_post, strict=True)):
                logp = self.keywords.log_probs([words for words, _ in mine], text)
                offered[i] = [Candidate(Hypothesis(tokens, 0.0, True, LENGTH_PENALTY), 0.0, lp)
                              for (_, tokens), lp in zip(mine, logp, strict=True)]
        elif rows:
            source_of = torch.tensor([i for i, _, _ in rows])
            logp = sequence_log_probs(self.model, posts, [t for _, _, t in rows], source_of)
            for (i, _, tokens), lp in zip(rows, logp.tolist(), strict=True):
                offered[i].append(Candidate(Hypothesis(tokens, lp, True, LENGTH_PENALTY), 0.0))
        return offered

    def _empty_post_log_probs(self, sequences: list[list[int]]) -> list[float]:
        """log p(sequence | empty post) per sequence, from the cache where known."""
        keys = [tuple(s) for s in sequences]
        missing = list(dict.fromkeys(k for k in keys if k not in self._prior))
        if missing:
            if len(self._prior) + len(missing) > PRIOR_CACHE:
                self._prior.clear()
            ids, segs, _ = encode_sources([""], self.vocab, self.cfg)
            source_of = torch.zeros(len(missing), dtype=torch.long)  # the one empty post
            logp = sequence_log_probs(self.model, encode_posts(self.model, ids, segs),
                                      [list(k) for k in missing], source_of)
            self._prior.update(zip(missing, logp.tolist(), strict=True))
        return [self._prior[k] for k in keys]

    def result(self, candidates: list[Candidate], weight: float, n_best: int,
               truncated: bool) -> Generated:
        """One post's output: its candidates ranked with prior weight `weight`, those with a
        blocklisted hashtag left out before the n_best are taken (so a blocked favourite
        makes room for the next candidate rather than leaving the post empty)."""
        if self.keywords is not None:
            ranked = sorted(((self.calibration.log_odds(c, weight), c) for c in candidates),
                            key=lambda sc: sc[0], reverse=True)
        else:
            ranked = [(c.score(weight), c) for c in
                      sorted(candidates, key=lambda c: c.rank_key(weight), reverse=True)]
        sequences, blocked = [], set()
        for score, c in ranked:
            tags = split_generated(self.vocab.decode_words(c.hyp.tokens))
            hit = self.blocked_in(tags)
            blocked |= hit
            if not hit and len(sequences) < n_best:
                sequences.append((tags, score))
        seen: dict[str, tuple[list[str], float]] = {}
        for tags, score in sequences:
            for words in tags:
                key = normalize_hashtag("".join(words))
                if key and key not in seen:
                    seen[key] = (words, score)
        best = _unique(sequences[0][0]) if sequences else []
        return Generated(best, list(seen.values()), truncated, self.lang, len(blocked))

    def blocked_in(self, tags: list[list[str]]) -> set[str]:
        """The hashtags (joined) of a sequence that the blocklist blocks."""
        joined = (join_words(w, self.lang) for w in tags)
        return {t for t in joined if self.blocklist.blocks(t)}


def _unique(tags: list[list[str]]) -> list[list[str]]:
    """Drop repeated hashtags (same normalized form), keeping the first."""
    seen, out = set(), []
    for words in tags:
        key = normalize_hashtag("".join(words))
        if key and key not in seen:
            seen.add(key)
            out.append(words)
    return out
