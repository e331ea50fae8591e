"""Deletion-compression pairs from headline pairs, and the compressor's training.

    python -m training data compression --out data/compression
    python -m training train compressor --data data/compression [--resume] [--max-minutes M]

**Pairs** (Filippova & Altun, 2013, without a parser): an editor's headline that is one of
the article's first three sentences with words deleted teaches which words a headline keeps.
Each sentence and headline are tokenised alike (`compressor.tokens`) and compared on
lower-cased Porter stems; their longest common subsequence marks the sentence's kept tokens.
A pair is kept when that subsequence holds at least `MIN_COVERAGE` of the headline's content
words (inflections match through the stems; the headline's own function words and marks
need not); of the first three sentences the one covering most is taken (the earliest on a
tie).

**Sources, held out whole.** Training: the shared English training split (Reuters-21578,
AG News), AllSides, and Senate press releases of every senator but Snowe and Reid; dev (the
checkpoint's choice): the shared English dev split. Test, never trained or selected on: DOJ,
FakeHealth, and the Snowe and Reid press offices, each the newest `TEST_PAIRS` of its
harvested pairs in time order, at most half of them (`test_<source>.jsonl`), with every pair
of that period (harvested or not) in `lead_<source>.jsonl` for measuring the compressor on
leads it was given no choice of, and the house's mean headline length from that source's
older pairs.
"""

from __future__ import annotations

import json
import random
import sys
from collections import Counter
from pathlib import Path

import torch
from nltk.stem.porter import PorterStemmer

from nlp_models.headline.compressor import (
    Compressor,
    CompressorConfig,
    Scored,
    detokenize,
    is_word,
    is_word_shape,
    labelling_score,
    log_partition,
    tokens,
    word_chain,
    word_count,
)
from nlp_models.headline.lead import whole_sentences, without_dateline
from training.headline.extra import EN_FILES, Counts, clean_en, dedup_key, read_gz, write_jsonl
from training.headline.metrics import rouge_per_article
from training.headline.newsrooms import EN_NEWSROOMS, newsroom_rows
from training.loop import Loop, LoopConfig

MIN_COVERAGE = 0.75  # share of the headline's content words the sentence holds in order
SENTENCES = 3  # the first sentences a headline may compress
TEST_PAIRS = 1000  # per held-out source, its newest harvested pairs (at most half of them)
HELD_OUT_SENATORS = ("US Senate press release (Snowe)", "US Senate press release (Reid)")
FUNCTION_WORDS = frozenset(
    "a an the of in on at to for and or but by with from as is are was were be been being "
    "has have had it its this that these those he she they we you i his her their our "
    "will would can could may might shall should do does did not no".split())
_STEM = PorterStemmer()


def stem(token: str) -> str:
    return _STEM.stem(token.lower().replace("\u2019", "'"))


def is_content(token: str) -> bool:
    return is_word(token) and token.lower() not in FUNCTION_WORDS


def align(sentence: list[str], headline: list[str]) -> tuple[list[int], float]:
    """(keep mask over `sentence`, share of the headline's content words kept): the longest
    common subsequence of their stems, content matches weighing more than function words so
    that a stray "the" never displaces a name."""
    a, b = [stem(t) for t in sentence], [stem(t) for t in headline]
    weight = [2 if is_content(t) else 1 for t in sentence]
    n, m = len(a), len(b)
    best = [[0] * (m + 1) for _ in range(n + 1)]
    for i in range(n - 1, -1, -1):
        for j in range(m - 1, -1, -1):
            best[i][j] = max(best[i + 1][j], best[i][j + 1],
                             best[i + 1][j + 1] + weight[i] if a[i] == b[j] else 0)
    keep, i, j = [0] * n, 0, 0
    while i < n and j < m:
        if a[i] == b[j] and best[i][j] == best[i + 1][j + 1] + weight[i]:
            keep[i], i, j = 1, i + 1, j + 1
        elif best[i + 1][j] >= best[i][j + 1]:
            i += 1
        else:
            j += 1
    content = [t for t in headline if is_content(t)]
    kept = {stem(t) for t, k in zip(sentence, keep, strict=True) if k and is_content(t)}
    covered = sum(stem(t) in kept for t in content)
    return keep, covered / len(content) if content else 0.0


def harvest(row: dict) -> dict | None:
    """`row` (a headline pair) as a compression pair, or None when none of its first
    sentences holds the headline."""
    headline = tokens(row["headline"])
    best = None
    for position, sentence in enumerate(whole_sentences(without_dateline(row["article"]))
                                        [:SENTENCES]):
        toks = tokens(sentence)
        keep, coverage = align(toks, headline)
        if coverage >= MIN_COVERAGE and (best is None or coverage > best["coverage"]):
            best = {"id": row["id"], "source": row["source"], "date": row.get("date", ""),
                    "sentence": sentence, "tokens": toks, "keep": keep,
                    "coverage": round(coverage, 3), "position": position,
                    "headline": row["headline"], "article": row["article"],
                    "phrase": row.get("phrase", "")}
    return best


def _training_rows(data: Path, counts: Counts) -> list[dict]:
    rows = [json.loads(line) for line in open(data / "headline" / "en" / "train.jsonl")]
    rows = [r for r in rows if not r.get("table_like")]
    seen: set = set()
    for name in ("allsides", "senate"):
        for r in read_gz(data / "extra" / "headline_en" / EN_FILES[name]):
            if r.get("source") in HELD_OUT_SENATORS:
                continue
            cleaned = clean_en(name, r, counts)
            if cleaned is None or (key := dedup_key(*cleaned[:2])) in seen:
                continue
            seen.add(key)
            rows.append({"id": r["id"], "source": name, "date": r.get("date", ""),
                         "headline": cleaned[0], "article": cleaned[1]})
    return rows


def build(data: Path, out: Path) -> dict:
    """Write OUT/{train,dev}.jsonl, OUT/test_<source>.jsonl and OUT/lead_<source>.jsonl;
    return the counts per source."""
    counts, result = Counts(), {}

    def harvested(rows: list[dict], split: str) -> list[dict]:
        pairs = []
        for n, r in enumerate(rows, 1):
            if (p := harvest(r)) is not None:
                pairs.append(p)
            if n % 5000 == 0:
                print(f"{split}: {n}/{len(rows)} read, {len(pairs)} pairs", file=sys.stderr,
                      flush=True)
        by_source = Counter(r["source"] for r in rows)
        for source, total in sorted(by_source.items()):
            got = sum(p["source"] == source for p in pairs)
            result.setdefault(split, {})[source] = {"pairs": total, "harvested": got,
                                                    "share": round(got / total, 3)}
        return pairs

    train = harvested(_training_rows(data, counts), "train")
    random.Random(13).shuffle(train)
    write_jsonl(out / "train.jsonl", train)
    dev_rows = [json.loads(line) for line in open(data / "headline" / "en" / "dev.jsonl")]
    dev = harvested([r for r in dev_rows if not r.get("table_like")], "dev")
    write_jsonl(out / "dev.jsonl", dev)
    for source in EN_NEWSROOMS:
        rows = newsroom_rows(data / "extra", source, counts)
        pairs = harvested(rows, "test")
        test = pairs[-min(TEST_PAIRS, len(pairs) // 2):]  # the older half at least: the house
        first = test[0]["date"], test[0]["id"]
        older = [r for r in rows if (r["date"], r["id"]) < first]
        house = round(sum(word_count(r["headline"]) for r in older) / max(len(older), 1), 1)
        for p in test:
            p["house_words"] = house
        leads = [{**r, "house_words": house} for r in rows if (r["date"], r["id"]) >= first]
        write_jsonl(out / f"test_{source}.jsonl", test)
        write_jsonl(out / f"lead_{source}.jsonl", leads)
        result["test"][source].update(test=len(test), lead=len(leads), house_words=house,
                              test_dates=[test[0]["date"], test[-1]["date"]])
    result["files"] = {"train": len(train), "dev": len(dev)}
    (out / "compression.json").write_text(json.dumps(result, indent=1) + "\n")
    return result


# ---- training -------------------------------------------------------------------------

MIN_WORD_COUNT = 2
MAX_WORDS = 30000
PHRASE_SHARE = 0.5  # training sentences shown a phrase to keep (a run of kept words)


def vocabularies(pairs: list[dict]) -> tuple[list[str], list[str]]:
    words = Counter(t.lower() for p in pairs for t in p["tokens"])
    suffixes = Counter(t.lower()[-3:] for p in pairs for t in p["tokens"])
    keep = [w for w, c in words.most_common(MAX_WORDS) if c >= MIN_WORD_COUNT]
    return ["<pad>", "<unk>", *keep], ["<pad>", "<unk>", *(s for s, c in suffixes.items()
                                                           if c >= MIN_WORD_COUNT)]


def phrase_for(keep: list[int], toks: list[str], rng: random.Random) -> list[bool]:
    """A run of 1-3 kept words the example pretends it was told to keep (or none)."""
    marks = [False] * len(toks)
    starts = [i for i, k in enumerate(keep) if k and is_content(toks[i])]
    if not starts or rng.random() >= PHRASE_SHARE:
        return marks
    i = rng.choice(starts)
    for j in range(i, min(i + rng.randint(1, 3), len(toks))):
        if not keep[j]:
            break
        marks[j] = True
    return marks


def keep_f1(gold: list[int], pred: list[bool]) -> tuple[int, int, int]:
    """(true positives, predicted, gold) of a keep mask."""
    return (sum(p and g for p, g in zip(pred, gold, strict=True)), sum(pred), sum(gold))


def own_mask(toks: list[str], scored: Scored) -> list[bool]:
    """The model's own keep mask: the best labelling of the words, and each mark whose own
    logit keeps it (as trained, whatever its neighbours)."""
    kept = set(scored.kept_positions(toks, [False] * len(toks), None))
    return [i in kept if is_word(t) else x > 0
            for i, (t, x) in enumerate(zip(toks, scored.logits, strict=True))]


class CompressionTask:
    def __init__(self, model: Compressor, train: list[dict], dev: list[dict],
                 batch_size: int = 32):
        self.model, self.train, self.dev, self.batch_size = model, train, dev, batch_size

    def batches(self, rng: random.Random) -> list[list[dict]]:
        order = sorted(self.train, key=lambda p: len(p["tokens"]) + rng.random() * 4)
        groups = [order[i: i + self.batch_size] for i in range(0, len(order),
                                                               self.batch_size)]
        rng.shuffle(groups)
        return groups

    def loss(self, batch: list[dict], rng: random.Random) -> dict[str, torch.Tensor]:
        """The words' labelling: the chain's negative log-likelihood per word; the marks':
        binary cross-entropy per mark."""
        rows = [self.model.encode(p["tokens"], phrase_for(p["keep"], p["tokens"], rng))
                for p in batch]
        x = Compressor.batch(rows)
        logits, switch = self.model(x)
        gold = torch.zeros_like(logits)
        for b, p in enumerate(batch):
            gold[b, : len(p["keep"])] = torch.tensor(p["keep"], dtype=torch.float)
        words = is_word_shape(x[2])
        unary, sw, mask, at = word_chain(logits, switch, words)
        labels = gold.gather(1, at).long() * mask
        chain = (log_partition(unary, sw, mask) - labelling_score(unary, sw, mask, labels))
        marks = ((x[2] != 0) & ~words).float()
        bce = torch.nn.functional.binary_cross_entropy_with_logits(logits, gold,
                                                                   reduction="none")
        chain_loss = chain.sum() / mask.sum().clamp(min=1)
        mark_loss = (bce * marks).sum() / marks.sum().clamp(min=1)
        return {"loss": chain_loss + mark_loss, "chain": chain_loss.detach(),
                "marks": mark_loss.detach()}

    def evaluate(self) -> tuple[dict, float]:
        tp = pred = gold = 0
        toks = [p["tokens"] for p in self.dev]
        for p, t, scored in zip(self.dev, toks, self.model.scores(toks), strict=True):
            a, b, c = keep_f1(p["keep"], own_mask(t, scored))
            tp, pred, gold = tp + a, pred + b, gold + c
        precision, recall = tp / max(pred, 1), tp / max(gold, 1)
        f1 = 2 * precision * recall / max(precision + recall, 1e-9)
        return {"dev_keep_p": round(precision, 4), "dev_keep_r": round(recall, 4),
                "dev_keep_f1": round(f1, 4)}, f1

    def save_best(self, path: Path, meta: dict) -> None:
        torch.save({**self.model.to_state(), "meta": meta}, path)

    def state(self) -> dict:
        return {"config": self.model.cfg.__dict__, "words": self.model.words,
                "suffixes": self.model.suffixes}


def read_jsonl(path: Path) -> list[dict]:
    with open(path) as f:
        return [json.loads(line) for line in f if line.strip()]


def train(data: Path, out: Path, epochs: int = 8, max_minutes: float = 60,
          resume: bool = False, quick: bool = False, seed: int = 13) -> float:
    """Train the compressor on DATA/train.jsonl, choosing on DATA/dev.jsonl's keep F1;
    OUT/best.pt is the fp16 serving file, OUT/last.pt what --resume continues."""
    torch.manual_seed(seed)
    torch.set_num_threads(1)
    train_pairs, dev = read_jsonl(data / "train.jsonl"), read_jsonl(data / "dev.jsonl")
    out.mkdir(parents=True, exist_ok=True)
    state = torch.load(out / "last.pt", weights_only=False) if resume else None
    if state is not None:
        cfg, words, suffixes = CompressorConfig(**state["config"]), state["words"], \
            state["suffixes"]
    else:
        words, suffixes = vocabularies(train_pairs)
        cfg = CompressorConfig(words=len(words), suffixes=len(suffixes))
    model = Compressor(cfg, words, suffixes)
    print(f"compressor: {len(train_pairs)} training pairs, {len(dev)} dev, {len(words)} "
          f"words, {sum(p.numel() for p in model.parameters())} parameters", flush=True)
    opt = torch.optim.Adam(model.parameters(), lr=2e-3)
    loop_cfg = LoopConfig.of({}, epochs, quick, lr=2e-3, warmup=0.05, max_minutes=max_minutes,
                             patience=2, save_minutes=5)
    loop = Loop(model, opt, CompressionTask(model, train_pairs, dev), loop_cfg, out,
                random.Random(seed), {"data": str(data), "seed": seed})
    if state is not None:
        loop.resume(state)
    best = loop.run()
    print(json.dumps(tune_gap(out / "best.pt", data / "dev.jsonl")), flush=True)
    return best


GAPS = (0.0, 0.5, 1.0, 2.0, 3.0, 5.0, 8.0)


def tune_gap(checkpoint: Path, dev_file: Path) -> dict:
    """Choose what a run of kept words after the first costs (`compressor.select`): the gap
    of best mean ROUGE-L F against the dev headlines, each compressed to its headline's
    length in words; stored in `checkpoint` (the serving file)."""
    state = torch.load(checkpoint, weights_only=False)
    model = Compressor.from_state(state)
    dev = read_jsonl(dev_file)
    scored = model.scores([p["tokens"] for p in dev])
    headlines = [p["headline"] for p in dev]
    scores = {}
    for gap in GAPS:
        texts = [detokenize(s.select(p["tokens"], [False] * len(p["tokens"]),
                                     word_count(p["headline"]), gap))
                 for p, s in zip(dev, scored, strict=True)]
        rl = [s["rougeL"].fmeasure for s in rouge_per_article(texts, headlines, "en")]
        scores[gap] = round(100 * sum(rl) / len(rl), 2)
    state["gap"] = max(GAPS, key=scores.__getitem__)
    torch.save(state, checkpoint)
    return {"checkpoint": str(checkpoint), "gap": state["gap"], "dev_rougeL_by_gap": scores}
