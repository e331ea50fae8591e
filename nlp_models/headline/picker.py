"""The clause picker: the span of a Chinese article that reads best as its headline.

On news from a source no model trained on (Sina 2018) the Chinese generator writes
headlines below the article's first sentence, while the article's best sentence would
score far above it (docs/models/headline.md, "Chinese news from an unseen source"). The
picker learns which span carries the news; its headline is faithful by construction: every
character is the article's.

Candidates: in each of the first MAX_SENTENCES sentences (the first without the dateline or
byline that may open it), every run of 1-MAX_CLAUSES consecutive clauses (a clause ends
after ，；：,;:) of at least MIN_CHARS characters, its closing clause mark dropped; a
sentence with no such run is a candidate whole. Left out: runs longer than the picker's
`max_chars`, spans that are no headline by the `degenerate` measure
(training/headline/quality.py: under four characters, or a character trigram twice) and
spans that leave a bracket or quotation mark open or close one they did not open, photo
captions and credits, source or credit lines, links, and the clause after a credit's colon
(the last five rules, and the byline, for pickers with them: RULES).

Scorer: listwise and linear, softmax over one article's candidates: DENSE_FEATURES
(position, length, digits, quotes, similarity to the rest of the article and to its first
sentence, ...) plus a hashed bag of the candidate's character bigrams (BUCKETS weights,
averaged). Trained by training/headline/picker.py against the candidates' ROUGE-L F.

Judge: the picker's SHORTLIST best candidates are re-ranked by their log-probability plus
`judge_weight` times the generator's mean log-probability per token of the candidate as the
article's headline (predictor.py; the weight is chosen on the dev sets, 0 = no judge): the
generator has read 100k+ headlines and knows which spans read like one.
"""

from __future__ import annotations

import math
import re
import unicodedata
import zlib
from collections import Counter
from dataclasses import dataclass

import torch
from torch import nn

from nlp_models.headline.sentences import sentences

MAX_SENTENCES = 12  # sentences that give candidates
CONTEXT_SENTENCES = 20  # sentences read for the similarity features
MAX_CLAUSES = 3
MIN_CHARS = 6
POSITIONS = 12  # one-hot sentence positions (the last one = 12th and later)
BUCKETS = 1 << 16
CLAUSE_END = re.compile(r"(?<=[，；：,;:])")
CLAUSE_MARKS = "，；：,;:"
MARK_PAIRS = ("（）", "()", "“”", "《》", "【】", "[]", "「」")
# openings that mark boilerplate rather than news: bylines, sources, captions, time stamps
BOILERPLATE = re.compile(r"^(新浪|原标题|来源|记者|本报|据|编辑|责任编辑|【|\[|图|视频"
                         r"|北京时间|日前|近日)")
# a dateline or byline that opens an article ("新浪娱乐讯 ", "中新社约翰内斯堡3月30日电 ",
# "本报讯（记者 张三）"): no headline names who filed the story. 讯 ending a word (通讯, 腾讯,
# 审讯, 死讯, 资讯, 喜讯, 音讯, 传讯) is no byline.
BYLINE = re.compile(r"^\s*[^\s，。：:；;！？（()）]{1,24}?(?:(?<![通腾审死资喜音传])讯|日电|专电)"
                    r"(?=[\s（(]|$)\s*(?:[（(][^（()）]{0,40}[）)]\s*)?")
# a photo caption or credit: "图为卢丽手捧…", "通缉令 （资料图）", "新华社记者 张三 摄", "警方供图";
# it describes a picture, not the news
CAPTION = re.compile(r"^\s*(?:图为|图：|图:|图片|资料图|视频截图)|[（(](?:资料)?图片?[）)]"
                     r"|资料图片|图片来源|(?:供图|(?<!拍)摄)\s*[）)]?\s*$")
# a source or credit line: "本文原载新京报", "来源：科技日报…", "（文/yui、布布）…",
# "责任编辑：张三", "转载请注明出处"; it says where the story is from or who wrote it, not the news
SOURCE = re.compile(r"^\s*[（(]?\s*(?:本文(?:原载|来源|来自|系|为|转载|转自|作者)|来源|文\s*[/／]"
                    r"|(?:记者|作者|编辑|责任编辑|通讯员)\s*[：:]|转载|声明\s*[：:])|转载自|转载请")
# a link or an e-mail address ("http://t.cn/EwhKVKS", "//n.sinaimg.cn/sports/…jpg",
# "投稿邮箱：2479502403@qq.com", "详情见http" as the clause split at its colon leaves it); a
# domain named in the news ("域名weishi.com") is no link
LINK = re.compile(r"https?(?::|$)|//[\w.-]+\.[a-z]{2,}/|www\.|[\w.+-]+@[\w-]+\.[a-z]{2,}",
                  re.ASCII)
# a span that opens with a connective leans on the clause before it ("而且勇士还遭遇了…",
# "此外，…"): half a thought, not a headline. Two-character words only: a single 并 or 就
# also opens nouns (并购, 就业).
CONNECTIVE = re.compile(r"^\s*(?:而且|并且|但是|不过|然而|所以|因此|因而|于是|同时|此外|另外|"
                        r"其中|对此|随后|而是|甚至|否则|何况|以及|至于|尽管|虽然)")
DENSE_FEATURES = POSITIONS + 16
# The candidate rules a picker was trained with, stored with it so that a published picker
# keeps its candidates when the rules grow: 1 = no degenerate spans (headline_generator 15);
# 2 = also the opening byline cut and no unbalanced brackets or quotes; 3 = also no captions;
# 4 = also no source or credit lines; 5 = also no links, and not the clause that follows a
# credit's colon ("来源：猫眼电影蓝洁瑛11月3日去世之后": the source's name glued to the news);
# 6 = also no span opening with a connective (CONNECTIVE).
RULES = 6
SHORTLIST = 4  # candidates the generator judges (dev: 4 and 8 score the same; 4 is half the cost)


@dataclass(frozen=True)
class Candidate:
    text: str
    sentence: int  # index of its sentence in the article
    clause: int  # index of its first clause in that sentence
    whole: bool  # the whole sentence


def candidates(sents: list[str], max_chars: int | None = None,
               rules: int = RULES) -> list[Candidate]:
    """The article's candidate spans, in reading order (`rules` as in RULES)."""

    def fits(text: str) -> bool:
        return (headline_like(text) and (rules < 2 or balanced(text))
                and (rules < 3 or not CAPTION.search(text))
                and (rules < 4 or not SOURCE.search(text))
                and (rules < 5 or not LINK.search(text))
                and (rules < 6 or not CONNECTIVE.match(text))
                and (max_chars is None or len(text) <= max_chars))

    out: list[Candidate] = []
    for i, sentence in enumerate(sents[:MAX_SENTENCES]):
        clauses = [c for c in CLAUSE_END.split(sentence) if c]
        found = False
        for a in range(len(clauses)):
            if rules >= 5 and a == 1 and _credit_marker(clauses[0]):
                continue
            for b in range(a + 1, min(a + MAX_CLAUSES, len(clauses)) + 1):
                text = "".join(clauses[a:b]).rstrip(CLAUSE_MARKS)
                if len(text) >= MIN_CHARS and fits(text):
                    out.append(Candidate(text, i, a, a == 0 and b == len(clauses)))
                    found = True
        if not found and fits(sentence):
            out.append(Candidate(sentence, i, 0, True))
    return out


def _credit_marker(clause: str) -> bool:
    """A source or credit that ends in a colon ("来源：", "作者:"): the name follows it."""
    return bool(SOURCE.search(clause)) and clause.rstrip().endswith(("：", ":"))


def without_byline(sents: list[str]) -> list[str]:
    """The article's sentences, the first without its dateline or byline (if text follows)."""
    if sents and (m := BYLINE.match(sents[0])) and m.end() < len(sents[0]):
        return [sents[0][m.end() :], *sents[1:]]
    return sents


def balanced(text: str) -> bool:
    """Every bracket and quotation mark the span opens it closes, and none it closes was
    opened before it: a span cut from inside a quote or an aside (“是防民甚于防兵,
    34岁，达州市通川区人）过程中…) reads as a fragment."""
    for left, right in MARK_PAIRS:
        depth = 0
        for c in text:
            depth += (c == left) - (c == right)
            if depth < 0:
                return False
        if depth:
            return False
    return True


def headline_like(text: str) -> bool:
    """Four or more characters besides spaces and punctuation, no character trigram twice,
    no character three times in a row: what the `degenerate` measure asks of a Chinese
    headline (training/headline/quality.py) and the generator's beam enforces."""
    chars = "".join(c for c in unicodedata.normalize("NFKC", text)
                    if not c.isspace() and not unicodedata.category(c).startswith("P"))
    trigrams = [chars[k : k + 3] for k in range(len(chars) - 2)]
    return (len(chars) >= 4 and len(set(trigrams)) == len(trigrams)
            and re.search(r"(.)\1\1", chars) is None)


def _bigrams(text: str) -> list[str]:
    return [text[k : k + 2] for k in range(len(text) - 1)]


def _cosine(a: Counter[str], b: Counter[str]) -> float:
    dot = sum(n * b[k] for k, n in a.items())
    norm = math.sqrt(sum(n * n for n in a.values()) * sum(n * n for n in b.values()))
    return dot / norm if norm else 0.0


def _dense(c: Candidate, n_sentences: int, rest: Counter[str],
           first: Counter[str]) -> list[float]:
    text, length = c.text, len(c.text)
    own = Counter(_bigrams(text))
    position = [0.0] * POSITIONS
    position[min(c.sentence, POSITIONS - 1)] = 1.0
    return position + [
        c.sentence / n_sentences,
        math.log1p(length), float(length < 15), float(length > 80),
        float(bool(re.search(r"\d", text))),
        float("“" in text or "”" in text),
        float("《" in text),
        float(bool(re.search(r"[A-Za-z]{2,}", text))),
        _cosine(own, rest),  # how central to the article
        _cosine(own, first) if c.sentence else 1.0,  # how close to the lead
        float(c.clause == 0), float(c.whole), min(c.clause, 5) / 5,
        float(bool(BOILERPLATE.match(text))),
        float(text.endswith(("？", "?"))),
        float("：" in text[:12]),
    ]


def features(sents: list[str], cands: list[Candidate]) -> tuple[torch.Tensor, list[list[int]]]:
    """(C, DENSE_FEATURES) dense features and, per candidate, its bigram bucket ids."""
    grams = [Counter(_bigrams(s)) for s in sents[:CONTEXT_SENTENCES]]
    everything = sum(grams, Counter())
    rest = {i: everything - grams[i] for i in {c.sentence for c in cands}}  # once per sentence
    dense, buckets = [], []
    for c in cands:
        dense.append(_dense(c, len(grams), rest[c.sentence], grams[0]))
        buckets.append(sorted({zlib.crc32(g.encode()) % BUCKETS for g in _bigrams(c.text)})
                       or [0])
    return torch.tensor(dense), buckets


@dataclass
class Pick:
    text: str
    # the picker's log-probability of this candidate among the article's (once judged,
    # plus judge_weight times the generator's mean log-probability per token)
    log_prob: float


class ClausePicker(nn.Module):
    def __init__(self, max_chars: int | None = None, judge_weight: float = 0.0,
                 rules: int = RULES):
        super().__init__()
        self.max_chars, self.judge_weight, self.rules = max_chars, judge_weight, rules
        self.dense = nn.Linear(DENSE_FEATURES, 1)
        self.bigrams = nn.EmbeddingBag(BUCKETS, 1, mode="mean")
        nn.init.zeros_(self.bigrams.weight)

    def forward(self, dense: torch.Tensor, buckets: list[list[int]]) -> torch.Tensor:
        """(C, DENSE_FEATURES), C bucket lists -> (C,) scores."""
        flat = torch.tensor([b for row in buckets for b in row])
        offsets = torch.tensor([0] + [len(row) for row in buckets[:-1]]).cumsum(0)
        return (self.dense(dense) + self.bigrams(flat, offsets)).squeeze(-1)

    def candidates(self, article: str) -> tuple[list[str], list[Candidate]]:
        sents = sentences(article, "zh")
        if self.rules >= 2:
            sents = without_byline(sents)
        return sents, candidates(sents, self.max_chars, self.rules)

    @torch.no_grad()
    def shortlist(self, article: str, size: int = SHORTLIST) -> list[Pick]:
        """The `size` best candidates, best first; [] when the article has none."""
        sents, cands = self.candidates(article)
        if not cands:
            return []
        log_probs = self(*features(sents, cands)).log_softmax(0)
        top = log_probs.topk(min(size, len(cands)))
        return [Pick(cands[k].text, float(lp))
                for lp, k in zip(top.values.tolist(), top.indices.tolist(), strict=True)]

    def pick(self, article: str) -> Pick | None:
        """The best candidate by the picker alone, or None when there is none."""
        best = self.shortlist(article, 1)
        return best[0] if best else None

    def to_state(self) -> dict:
        return {"max_chars": self.max_chars, "judge_weight": self.judge_weight,
                "rules": self.rules,
                "weights": {k: v.half() for k, v in self.state_dict().items()}}

    @classmethod
    def from_state(cls, state: dict) -> ClausePicker:
        picker = cls(state["max_chars"], state.get("judge_weight", 0.0), state.get("rules", 1))
        picker.load_state_dict({k: v.float() for k, v in state["weights"].items()})
        return picker.eval().requires_grad_(False)
