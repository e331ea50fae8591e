"""The simple baseline next to the neural taggers: each word's most frequent tag.

    python -m training baseline pos --data FILE.conll --tagset ptb|ark

Counts tags per normalized word (the tagger's own `normalize_word`) over the training
splits of training/configs/pos_dcnn.toml for that tagset (newswire included for ptb);
unseen words get the most frequent tag among words seen once, the usual proxy for the
tag distribution of unknown words.
"""

from __future__ import annotations

from collections import Counter, defaultdict

from nlp_models.pos.features import normalize_word
from training.paths import REPO_ROOT, data_dir
from training.pos.data import Sentence, read_conll
from training.pos.train import load_config, load_split

CONFIG = REPO_ROOT / "training" / "configs" / "pos_dcnn.toml"


class MostFrequentTag:
    def __init__(self, sentences: list[Sentence]):
        counts: dict[str, Counter] = defaultdict(Counter)
        for s in sentences:
            for tok, tag in zip(s.tokens, s.tags, strict=True):
                counts[normalize_word(tok)][tag] += 1
        self.best = {w: c.most_common(1)[0][0] for w, c in counts.items()}
        rare = Counter(t for c in counts.values() if sum(c.values()) == 1 for t in c)
        self.unknown = rare.most_common(1)[0][0]

    def tag(self, tokens: list[str]) -> list[str]:
        return [self.best.get(normalize_word(t), self.unknown) for t in tokens]


def evaluate_baseline(data: str, tagset: str) -> dict:
    cfg = load_config(CONFIG)["data"]
    root = data_dir() / "pos"
    splits = {**cfg["train"], **cfg.get("newswire", {})}
    train = [s for s in load_split(splits, root) if s.head == tagset]
    model = MostFrequentTag(train)
    gold = read_conll(data, tagset)
    correct = sum(p == g for s in gold for p, g in zip(model.tag(s.tokens), s.tags, strict=True))
    total = sum(len(s.tags) for s in gold)
    return {"accuracy": correct / max(total, 1), "tokens": total, "tagset": tagset,
            "data": str(data), "model": "most-frequent-tag", "unknown_tag": model.unknown}
