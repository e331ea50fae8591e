"""Load a headline checkpoint and turn raw articles (and phrases) into scored headlines.

Used by `training evaluate`, the benchmark and the Triton models, so they cannot disagree.
Three kinds of checkpoint:

    generator  full headlines (HeadlineGenerator: transformer / pointer-generator / xl-cc)
    he         constrained headlines by He et al.'s method: a generator reading
               `phrase [SEP] article`; inclusion of the phrase is likely, not guaranteed
    seq2bf     constrained headlines grown around the phrase (Seq2BF); any of the four
               generation orders can be asked for, the one it was trained with is default

Weights are stored in fp16 and computed in fp32 (CPU fp16 matmuls are slow). A headline's
score is its length-normalised log-probability (the beam's ranking score).

A Chinese generator checkpoint may carry a clause picker (picker.py, `python -m training
picker`): its best headline is then the article's span the picker chooses (scored by the
picker's log-probability plus its judge weight times the generator's mean log-probability
per token of the span), followed by the generated ones; an article with no candidate span
gets generated headlines only. An English generator checkpoint may carry a lead rule
(lead.py, `python -m training lead`): a clause of the article's first sentence (or the lead
trimmed to a headline, trim.py) then takes first place when the generator judges it nearly
as likely a headline as its own; an English Seq2BF checkpoint adapted to a newsroom likewise
the first sentence holding the phrase, judged by the Seq2BF model around the phrase.

Every kind, last: a candidate that states a number (with its unit) or a name the article
lacks is not returned (faithful.py); the first shown is the lead's span or the beam's best,
and when both are withheld, the article's own lead made a headline (trim.py). So the first
does not depend on how many candidates are asked for (nor does the beam's best: beam.py's
`stable_first`): what the pipeline shows first is what `training evaluate` measures.
"""

from __future__ import annotations

import re
from collections.abc import Iterator
from dataclasses import asdict, dataclass
from pathlib import Path

import torch

from nlp_models.headline.compressor import Compressor
from nlp_models.headline.decode import (
    MIN_TOKENS,
    assemble,
    generate,
    generate_constrained,
    length_penalty,
    repeat_rule,
)
from nlp_models.headline.faithful import unsupported
from nlp_models.headline.lead import LeadRule, without_furniture
from nlp_models.headline.model import HeadlineConfig, HeadlineGenerator
from nlp_models.headline.picker import SHORTLIST, ClausePicker, Pick
from nlp_models.headline.runs import WholeRuns
from nlp_models.headline.seq2bf import NOT_YET, STRATEGIES, Seq2BF, Seq2BFConfig, layout
from nlp_models.headline.titles import headline_titles, titled_holding
from nlp_models.headline.trim import fallback_headline, fallback_with_phrase
from nlp_models.headline.vocab import (
    BOS,
    EOS,
    PAD,
    Source,
    Vocab,
    from_state,
    prefixed_source,
)
from nlp_models.headline.wholewords import WholeWords

KINDS = ("generator", "he", "seq2bf")
JUDGED_TOKENS = 20  # a span's first tokens the judge reads (a longer span gets no [EOS])
BATCH_TOKENS = 16_384  # padded source tokens per forward pass
_CLINGS = re.compile(r"[,.:;!?)]|['’]s\b")  # written without a space before it


@dataclass
class Encoded:
    """A group of articles as the encoder read them."""
    group: list[int]  # their indices in the request
    sources: list[Source]
    src_ext: torch.Tensor  # (B, S) extended ids, padded
    memory: torch.Tensor  # (B, S', D) encoder states
    valid: torch.Tensor  # (B, S') which states are article tokens


@dataclass
class Headlines:
    candidates: list[tuple[str, float]]  # best first
    truncated: bool  # the article was longer than the model reads (cfg.max_source tokens)

    @classmethod
    def of(cls, candidates: list[tuple[str, float]], truncated: bool) -> Headlines:
        """Scores rounded; a blank candidate (an article with nothing to copy, e.g. one long
        run of emoji, can end the beam without a word) is no headline and is left out."""
        return cls([(text, round(score, 4)) for text, score in candidates if text.strip()],
                   truncated)

    @property
    def best(self) -> str:
        """The best candidate's text; "" when there is none (scored as an empty headline)."""
        return self.candidates[0][0] if self.candidates else ""


def save_checkpoint(path: str | Path, model: torch.nn.Module, vocab: Vocab, lang: str,
                    kind: str, meta: dict) -> None:
    state = {k: v.half() if v.is_floating_point() else v for k, v in model.state_dict().items()}
    torch.save({"kind": kind, "config": asdict(model.cfg), "vocab": vocab.to_state(),
                "lang": lang, "model": state, "meta": meta}, path)


def build_model(kind: str, config: dict) -> torch.nn.Module:
    if kind not in KINDS:
        raise ValueError(f"checkpoint kind {kind!r} not in {KINDS}")
    if kind == "seq2bf":
        return Seq2BF(Seq2BFConfig(**config))
    return HeadlineGenerator(HeadlineConfig(**config))


def _batches(lengths: list[int]) -> list[list[int]]:
    """Indices grouped by similar length, each group within BATCH_TOKENS padded tokens."""
    order = sorted(range(len(lengths)), key=lengths.__getitem__)
    groups: list[list[int]] = []
    for i in order:
        if groups and max(lengths[i], 1) * (len(groups[-1]) + 1) <= BATCH_TOKENS:
            groups[-1].append(i)
        else:
            groups.append([i])
    return groups


def _before(first: tuple[str, float],
            rest: list[tuple[str, float]]) -> list[tuple[str, float]]:
    """`first`, then the candidates of `rest` with another text."""
    return [first] + [c for c in rest if c[0] != first[0]]


def _pad(rows: list[list[int]], value: int = PAD) -> torch.Tensor:
    width = max(len(r) for r in rows)
    return torch.tensor([r + [value] * (width - len(r)) for r in rows], dtype=torch.long)


class HeadlinePredictor:
    def __init__(self, model: torch.nn.Module, vocab: Vocab, lang: str, kind: str,
                 meta: dict | None = None):
        self.model, self.vocab, self.lang, self.kind = model, vocab, lang, kind
        self.meta = meta or {}
        self.cfg = model.cfg
        # beam search's length preference: the checkpoint's if its run chose one
        self.alpha = self.meta.get("length_penalty", length_penalty(kind, lang))
        self.min_tokens = MIN_TOKENS[lang]  # and its shortest headline
        self.rule = repeat_rule(vocab, lang)  # and what it may not repeat
        # and the rule the article sets: for English, which words it may write and (full
        # headlines) what a name the article lacks costs (wholewords.py; both come with
        # the checkpoint); for Chinese full headlines, which numbers and Latin words (runs.py)
        known = self.meta.get("whole_words")
        penalty = self.meta.get("unsupported_penalty", 0.0) if kind == "generator" else 0.0
        self.words: WholeWords | WholeRuns | None = None
        if known and lang == "en":
            self.words = WholeWords(vocab, known, penalty, whole_headline=True)
        elif lang == "zh" and kind == "generator":
            self.words = WholeRuns(vocab)
        picker = self.meta.get("picker")
        self.picker = ClausePicker.from_state(picker) if picker and kind == "generator" else None
        lead = self.meta.get("lead")  # a generator's lead spans, a Seq2BF's "phrase" spans
        self.lead = LeadRule.from_state(lead) if lead and kind != "he" else None
        compressor = self.meta.get("compressor")  # the learned deletions of the lead
        self.compressor = Compressor.from_state(compressor) if compressor else None
        if self.lead is not None and (self.lead.spans == "phrase") != (kind == "seq2bf"):
            raise ValueError(f"a {kind} checkpoint cannot take {self.lead.spans} lead spans")

    def decoding_rules(self) -> list[str]:
        """What this checkpoint's decoder does to an article, in order, with the settings it
        stores: the one list ``python -m training inspect headline`` prints and ``publish``
        writes into the model card. Built from the attributes set above, so it cannot
        drift from what the predictor does."""
        full = self.kind == "generator"
        rules = (["titles (titles.py): a title before a name as headlines write it "
                  "(\"U.S. Senator X\" reads \"Sen. X\")"] if full and self.lang == "en" else [])
        rules.append(f"read the article's first {self.cfg.max_source} tokens (more: truncated)")
        if self.picker is not None:
            rules.append(f"clause picker (picker.py): the best span of the article first, "
                         f"rules {self.picker.rules}, judge weight {self.picker.judge_weight}")
        repeats = (f"no character {self.rule.ngram}-gram twice" if self.rule.ngram
                   else "no word of 3+ letters or digits twice")
        order = "" if full else f", growing both sides of the phrase ({self.default_strategy})"
        rules.append(f"beam search (decode.py){order}: length penalty {self.alpha}, no end "
                     f"before {self.min_tokens} tokens, {repeats}; the first as a search for "
                     "one finds it")
        if isinstance(self.words, WholeWords):
            rules.append(f"whole words (wholewords.py): {len(self.words.known):,} known words "
                         "or the article's, glued tokens only as the article writes them")
            if self.words.unsupported_penalty:
                rules.append(f"name penalty: {self.words.unsupported_penalty} nats for a "
                             "name-like word the article lacks, and for two names side by "
                             "side that it never writes so (\"U.S. Snowe\")")
        elif isinstance(self.words, WholeRuns):
            rules.append("whole runs (runs.py): digits and Latin words only as the article's")
        if self.lead is not None:
            span = ("the first sentence holding the phrase, trimmed," if self.lead.spans ==
                    "phrase" else f"a {self.lead.spans} span of the first sentence")
            rules.append(f"lead rule (lead.py): {span} first when its judge score is within "
                         f"{self.lead.margin} of the generated headline's (length bonus "
                         f"{self.lead.length_bonus})")
        rules.append("faithfulness (faithful.py): a candidate stating a number or name the "
                     "article" + ("" if full else " or phrase") + " lacks is withheld")
        if self.compressor is not None:
            rules.append(f"compressor (compressor.py): a learned deletion of the first "
                         f"sentence, {len(self.compressor.words):,} known words")
        fallback = ("the first sentence compressed by the compressor" if full
                    and self.compressor is not None else "the lead trimmed to a headline"
                    if full else "the first sentence holding the phrase, trimmed")
        rules.append(f"fallback: first when the best candidates are withheld, {fallback}")
        return rules

    def _article_words(self, texts: list[str], sources: list[Source]) -> list | None:
        """The article rule's per-article data (None when there is no rule)."""
        if self.words is None:
            return None
        return [self.words.article(t, s.oovs) for t, s in zip(texts, sources, strict=True)]

    @classmethod
    def load(cls, checkpoint: str | Path, threads: int | None = None) -> HeadlinePredictor:
        if threads:
            torch.set_num_threads(threads)
        state = torch.load(checkpoint, map_location="cpu", weights_only=False)
        model = build_model(state["kind"], state["config"])
        model.load_state_dict({k: v.float() for k, v in state["model"].items()})
        model.eval().requires_grad_(False)
        return cls(model, from_state(state["vocab"]), state["lang"], state["kind"],
                   state.get("meta", {}))

    @property
    def name(self) -> str:
        return self.meta.get("run", self.kind)

    def _read(self, article: str) -> str:
        """The article as every path reads it: English without the page furniture that
        opens a scraped page (lead.py), so no photo credit or byline is copied or judged."""
        return without_furniture(article) if self.lang == "en" else article

    def _sources(self, articles: list[str]) -> tuple[list[Source], list[bool]]:
        sources, truncated = [], []
        for text in articles:
            s = self.vocab.encode_source(text)
            truncated.append(len(s.ids) > self.cfg.max_source)
            s.ids, s.ext_ids = s.ids[: self.cfg.max_source], s.ext_ids[: self.cfg.max_source]
            sources.append(s)
        return sources, truncated

    def headlines(self, articles: list[str], beam: int = 4, n_best: int = 1) -> list[Headlines]:
        """Full headlines (generator checkpoints): the picked span first if there is a
        picker, or a lead clause if the lead rule chooses one, generated headlines for the
        rest of the n_best."""
        if self.kind != "generator":
            raise ValueError(f"a {self.kind} checkpoint generates constrained headlines only")
        if self.lang == "en":  # "U.S. Senator X" reads "Sen. X" (titles.py)
            articles = [headline_titles(self._read(a)) for a in articles]
        sources, truncated = self._sources(articles)
        out: list[Headlines | None] = [None] * len(articles)
        for batch in self._encoded(sources):
            picks = [self._pick(articles[i], batch, k) if self.picker is not None else None
                     for k, i in enumerate(batch.group)]
            # a pick takes the first place: beam search fills the others (it stops sooner
            # the fewer it must find), or all of them for an article with no span to pick
            wanted = n_best if None in picks else n_best - 1
            generated = (self._search(batch, [articles[i] for i in batch.group], beam, wanted)
                         if wanted else [[] for _ in picks])
            for k, (i, pick, rest) in enumerate(zip(batch.group, picks, generated,
                                                    strict=True)):
                first = ((pick.text, pick.log_prob) if pick is not None
                         else self._lead(articles[i], batch, k, rest))
                # what a request for one headline holds: the pick alone, or the lead's span
                # and the beam's best
                tier = (1 if first is None or pick is not None
                        else len(_before(first, rest[:1])))
                if first is not None:
                    rest = _before(first, rest)
                out[i] = Headlines.of(
                    self._faithful(rest, tier, articles[i], batch, k)[:n_best], truncated[i])
        return out

    def _faithful(self, candidates: list[tuple[str, float]], tier: int, article: str,
                  batch: Encoded, k: int) -> list[tuple[str, float]]:
        """The candidates that state no number or name the article lacks (faithful.py). The
        first is one of the first `tier` (what a request for one headline holds); when all
        of them are withheld, the article's own lead made a headline (trim.py), judged by
        the generator: the beam's later hypotheses read worse than the lead, and never come
        first, so the first of three is the headline `training evaluate` measures."""
        kept = [c for c in candidates if not unsupported(c[0], article, self.lang)]
        if not candidates or (kept and kept[0] in candidates[:tier]):
            return kept
        fallback = self._fallback(article)
        return _before((fallback, self._judge(batch, k, [fallback])[0]), kept) if fallback else kept

    def _fallback(self, article: str) -> str:
        """The article's lead made a headline: where the checkpoint has a compressor and a
        lead rule of compressed spans, the first of its spans (each faithful, none saying a
        word twice), else trim.py's trim."""
        if self.compressor is not None and self.lead is not None:
            spans = self.lead.candidates(article, compressor=self.compressor)
            if spans:
                return spans[0]
        return fallback_headline(article, self.lang)

    @torch.no_grad()
    def _encoded(self, sources: list[Source]) -> Iterator[Encoded]:
        """The articles in groups of similar length, each group read by the encoder once
        (beam search and the picker's judge share it). In eval mode: a model handed over by
        a training loop is still in train mode, and dropout would blur the states."""
        self.model.eval()
        for group in _batches([len(s.ids) for s in sources]):
            chunk = [sources[i] for i in group]
            memory, valid = self.model.encode(_pad([s.ids for s in chunk]))
            yield Encoded(group, chunk, _pad([s.ext_ids for s in chunk]), memory, valid)

    def _search(self, batch: Encoded, texts: list[str], beam: int,
                n_best: int) -> list[list[tuple[str, float]]]:
        """Beam search on one encoded group: per article, its n_best (headline, score)."""
        hyps = generate(self.model, _pad([s.ids for s in batch.sources]), batch.src_ext,
                        max(len(s.oovs) for s in batch.sources), beam, n_best, self.alpha,
                        self.min_tokens, self.rule, self.words,
                        self._article_words(texts, batch.sources), (batch.memory, batch.valid))
        return [[(self.vocab.decode(x.tokens, s.oovs), x.score) for x in h]
                for s, h in zip(batch.sources, hyps, strict=True)]

    def _pick(self, article: str, batch: Encoded, k: int) -> Pick | None:
        """The picker's choice among its shortlist for the group's k-th article, judged by
        the generator."""
        shortlist = self.picker.shortlist(article, SHORTLIST if self.picker.judge_weight else 1)
        if len(shortlist) < 2:
            return shortlist[0] if shortlist else None
        judged = self._judge(batch, k, [p.text for p in shortlist])
        scores = [p.log_prob + self.picker.judge_weight * j for p, j in zip(shortlist, judged,
                                                                             strict=True)]
        best = max(range(len(scores)), key=scores.__getitem__)
        return Pick(shortlist[best].text, scores[best])

    def _lead(self, article: str, batch: Encoded, k: int,
              generated: list[tuple[str, float]]) -> tuple[str, float] | None:
        """A clause of the article's lead, with its judge score, when the lead rule puts
        one before the generated headline (lead.py); None otherwise."""
        clauses = (self.lead.candidates(article, compressor=self.compressor)
                   if self.lead is not None and generated else [])
        if not clauses:
            return None
        judged = self._judge(batch, k, [generated[0][0], *clauses])
        best = self.lead.choose(judged[0], clauses, judged[1:])
        return None if best is None else (clauses[best], judged[1 + best])

    def judge(self, article: str, spans: list[str]) -> list[float]:
        """Each span's mean log-probability per token (its [EOS] included) as the article's
        headline under the generator: teacher forcing, copying allowed; of a span longer
        than JUDGED_TOKENS, its beginning (the judge's cost grows with the longest span).
        English articles are read as `headlines` reads them, without page furniture."""
        sources, _ = self._sources([self._read(article)])
        return self._judge(next(self._encoded(sources)), 0, spans)

    @torch.no_grad()
    def _judge(self, batch: Encoded, k: int, spans: list[str]) -> list[float]:
        source = batch.sources[k]
        targets = [ids + [EOS] if len(ids) < JUDGED_TOKENS else ids[:JUDGED_TOKENS]
                   for ids in (self.vocab.encode_target(s, source.oovs) for s in spans)]
        y_out = _pad(targets)
        log_p, _ = self.model.target_log_probs(batch.memory[k : k + 1], batch.valid[k : k + 1],
                                               batch.src_ext[k : k + 1], len(source.oovs),
                                               _pad([[BOS, *t[:-1]] for t in targets]), y_out)
        real = y_out != PAD
        return ((log_p * real).sum(1) / real.sum(1)).tolist()

    def constrained(self, articles: list[str], phrases: list[str], strategy: str | None = None,
                    beam: int = 3, n_best: int = 1) -> list[Headlines]:
        """Headlines containing each article's phrase (he and seq2bf checkpoints)."""
        if self.kind == "generator":
            raise ValueError("a generator checkpoint has no phrase input; use headlines()")
        for p in phrases:
            if not p.strip():
                raise ValueError("a required phrase is empty")
        articles = [self._read(a) for a in articles]
        sources, truncated = self._sources(articles)
        phrase_ids = [self.vocab.encode(p) for p in phrases]
        out: list[Headlines | None] = [None] * len(articles)
        for group in _batches([len(s.ids) + len(p) + 1 for s, p in zip(sources, phrase_ids,
                                                                          strict=True)]):
            if self.kind == "he":
                inputs = [prefixed_source(self.vocab, phrases[i], sources[i],
                                          self.cfg.max_source) for i in group]
                arts = self._article_words([f"{phrases[i]} {articles[i]}" for i in group],
                                           inputs)
                hyps = generate(self.model, _pad([s.ids for s in inputs]),
                                _pad([s.ext_ids for s in inputs]),
                                max(len(s.oovs) for s in inputs), beam, n_best, self.alpha,
                                self.min_tokens, self.rule, self.words, arts)
                for i, s, h in zip(group, inputs, hyps, strict=True):
                    out[i] = Headlines.of(self._faithful_with(
                        [(self.vocab.decode(x.tokens, s.oovs), x.score) for x in h],
                        articles[i], phrases[i])[:n_best], truncated[i])
                continue
            order = strategy or self.default_strategy
            if order not in STRATEGIES:
                raise ValueError(f"strategy {order!r} not in {STRATEGIES}")
            chunk = [sources[i] for i in group]
            arts = self._article_words([f"{phrases[i]} {articles[i]}" for i in group], chunk)
            src = _pad([s.ids for s in chunk])
            with torch.no_grad():  # read once: the lead rule's judge reads the same articles
                encoded = self.model.encode(src) if self.lead is not None else None
            hyps = generate_constrained(self.model, src, [phrase_ids[i] for i in group], beam,
                                        n_best, order, self.alpha, self.min_tokens,
                                        _pad([s.ext_ids for s in chunk]),
                                        max(len(s.oovs) for s in chunk), self.rule,
                                        self.words, arts, encoded)
            for k, (i, s, h) in enumerate(zip(group, chunk, hyps, strict=True)):
                candidates = [(self._around(phrases[i], x.tokens, order, s.oovs), x.score)
                              for x in h]
                first = (self._phrase_lead(articles[i], phrases[i], s, order, candidates,
                                           (encoded[0][k : k + 1], encoded[1][k : k + 1]))
                         if encoded is not None else None)
                tier = 1 if first is None else len(_before(first, candidates[:1]))
                if first is not None:
                    candidates = _before(first, candidates)
                out[i] = Headlines.of(self._faithful_with(
                    candidates, articles[i], phrases[i], tier)[:n_best], truncated[i])
        return out

    def _phrase_lead(self, article: str, phrase: str, source: Source, order: str,
                     generated: list[tuple[str, float]],
                     encoded: tuple[torch.Tensor, torch.Tensor]) -> tuple[str, float] | None:
        """A sentence holding the phrase, trimmed (trim.py's `sentence_with_phrase`, in the
        article with short titles), with its judge score, when the lead rule puts it before
        the generated headline (lead.py); None otherwise."""
        spans = (self.lead.candidates(titled_holding(article, phrase), phrase)
                 if self.lead is not None and generated else [])
        if not spans:
            return None
        judged = self._judge_phrase(source, phrase, [generated[0][0], *spans], order, encoded)
        best = self.lead.choose(judged[0], spans, judged[1:])
        return None if best is None else (spans[best], judged[1 + best])

    def judge_constrained(self, article: str, phrase: str, texts: list[str]) -> list[float]:
        """Each text's mean log-probability per token as the article's headline around
        `phrase` under the Seq2BF model (`Seq2BF.mean_log_probs`, grown in the default
        order); of each side, the tokens nearest the phrase, up to JUDGED_TOKENS; English
        articles without page furniture, as `constrained` reads them."""
        sources, _ = self._sources([self._read(article)])
        return self._judge_phrase(sources[0], phrase, texts, self.default_strategy)

    @torch.no_grad()
    def _judge_phrase(self, source: Source, phrase: str, texts: list[str], order: str,
                      encoded: tuple[torch.Tensor, torch.Tensor] | None = None) -> list[float]:
        """``encoded``: the article's `model.encode` (memory, valid), when read already."""
        self.model.eval()
        phrase = phrase.strip()  # as _around writes it
        phrase_ids = self.vocab.encode(phrase)
        laid = []
        for text in texts:
            at = text.find(phrase)
            before, after = (text[:at], text[at + len(phrase):]) if at >= 0 else ("", text)
            left = self.vocab.encode_target(before, source.oovs)[-JUDGED_TOKENS:]
            right = self.vocab.encode_target(after, source.oovs)[:JUDGED_TOKENS]
            laid.append(layout(left, phrase_ids, right, order))
        n = len(laid)
        memory, valid = encoded if encoded is not None else self.model.encode(_pad([source.ids]))
        width = max(valid.shape[1], len(source.ext_ids))  # a group's memory may be wider
        ext = _pad([source.ext_ids + [PAD] * (width - len(source.ext_ids))])
        return self.model.mean_log_probs(
            memory.expand(n, -1, -1), valid.expand(n, -1), ext.expand(n, -1),
            len(source.oovs), _pad([x.tokens for x in laid]), _pad([x.positions for x in laid]),
            _pad([x.steps for x in laid], NOT_YET), _pad([x.back_targets for x in laid]),
            _pad([x.fwd_targets for x in laid])).tolist()

    def _faithful_with(self, candidates: list[tuple[str, float]], article: str,
                       phrase: str, tier: int = 1) -> list[tuple[str, float]]:
        """Constrained candidates that state nothing neither the article nor the asked-for
        phrase has (English: nor the article with its titles shortened, titles.py, as the
        lead spans read it). The first is one of the first `tier`, else (as in _faithful) the
        article's sentence with the phrase (trim.py), scored below every generated one."""
        titled = titled_holding(article, phrase) if self.lang == "en" else article
        said = f"{article}\n{titled}\n{phrase}"
        kept = [c for c in candidates if not unsupported(c[0], said, self.lang)]
        if not candidates or (kept and kept[0] in candidates[:tier]):
            return kept
        return _before((fallback_with_phrase(titled, phrase, self.lang),
                        min(score for _, score in candidates)), kept)

    @property
    def default_strategy(self) -> str:
        trained = getattr(self.cfg, "strategy", "tok-b")
        return trained if trained in STRATEGIES else "tok-b"

    def _around(self, phrase: str, generated: list[int], strategy: str, oovs: list[str]) -> str:
        """The phrase as given, with the generated text before and after it, so the phrase
        appears verbatim even if some of its characters are unknown to the vocabulary; a
        mark or "'s" that opens the text after it clings to the phrase."""
        left, right = assemble(strategy, generated)
        return around(self.vocab.decode(left, oovs), phrase, self.vocab.decode(right, oovs),
                      self.lang)


def around(before: str, phrase: str, after: str, lang: str) -> str:
    """``before`` + the phrase + ``after`` as a headline writes them: Chinese without spaces,
    English with one, except before a mark or "'s" ("Sen. Reid: Sudan", not "Sen. Reid :
    Sudan", which the Seq2BF's separate tokens spelled in 104 of 500 Reid headlines)."""
    if lang == "zh":
        return before + phrase.strip() + after
    text = " ".join(part for part in (before, phrase.strip()) if part)
    if after and text and _CLINGS.match(after):
        return text + after
    return " ".join(part for part in (text, after) if part)
