"""Choose a checkpoint's served decoding on dev sets: the prior weight λ and the threshold.

    python -m training tune hashtag --checkpoint RUN/best.pt --dev FILE [--dev FILE ...]
        --out RUN/tuned.pt [--beam 4] [--n-best 3] [--max-len N] [--posts 1000]

Both are read from the checkpoint's meta by nlp_models/hashtag/predictor.py (see its module
doc for the score), with, for English, `known_words`: every word of the checkpoint's training
hashtags (the shared train split plus the `train_files` its meta records, without the
held-out dev_ood sources), which turns on whole-word decoding, and, in both languages,
`post_candidates` (the post's words offered as hashtags), and `max_len`, the beam's
longest hypothesis in tokens (given, not searched: each length is a full decode, so
compare lengths by running tune once per length; default the model's `max_target`).
The dev posts (first `posts`
of each file) are decoded once at the serving beam; every λ of the grid then only re-ranks
the same hypotheses.

- λ: the highest mean ROUGE-1 over the dev sets among the λ whose `top_share` is under 5 %
  on every dev set (the issue's diversity target) with a margin: its share plus one
  standard error (sqrt(p (1 - p) / posts)) must be under 5 %, so that a test set of the
  same source is likely under it too (a λ chosen at 4.6 % on 1,000 dev posts gave 5.25 %
  on the Chinese test set). If no λ of the grid gets there, the λ with the lowest worst
  `top_share`. A model that shows its favourite for one post in twenty is not collapsed;
  beyond that, the dev sets decide.
- keywords and calibration: a keyword model trained on the checkpoint's training
  pairs (training/hashtag/keywords.py) ranks the post's words, and for every λ of the grid the
  four numbers that put generated and post candidates on one scale (predictor module doc) are
  fitted by logistic regression on the held-out-source dev set (`held_out`, by default the
  checkpoint's `dev_ood_file`; soft labels: each candidate's ROUGE-1 F against the users'
  hashtags, as the keyword model's). That set stands for feeds the model never saw: there a
  favourite has to earn its place; the in-distribution dev set still votes in the choice
  of λ.
- threshold (`min_score`): the served hashtags are those of the `n_best` best sequences
  (the served model's `n_best`, 3), each with its sequence's score, shown only when the
  score reaches the threshold. Chosen to maximise the micro-F1 of the shown hashtags against
  the users' hashtags, pooled over the dev sets (a hidden wrong hashtag raises precision, a
  hidden right one costs recall); ties go to the lower threshold. Credit is ROUGE-1 F, the
  issue's measure, not exact match: a shown hashtag earns its best F against a user's
  hashtag (precision), a user's hashtag the best F of a shown one (recall). Exact matches of
  Chinese topics are rare (`#油价` for `#油价下调` earns 0.67, not 0), and an exact-match
  threshold hid the hashtags of 92 % of Chinese dev posts.

The last stdout line is JSON: the chosen values and every λ's and the threshold's figures.
"""

from __future__ import annotations

import json
import math
import sys
from collections import Counter
from pathlib import Path

import torch

from nlp_models.hashtag.predictor import Calibration, Candidate, Generated, HashtagPredictor
from nlp_models.hashtag.text import SEPARATOR, split_generated, split_hashtag, target_words
from training.hashtag.data import Pair, read_pairs
from training.hashtag.evaluate import load_predictor
from training.hashtag.keywords import train_keywords
from training.hashtag.metrics import hashtag_key, make_scorer, rouge, sequence_text
from training.hashtag.train import data_path, load_data
from training.provenance import RUN_RECORD, read_run

GRID = tuple(round(0.1 * i, 1) for i in range(16))  # λ = 0.0, 0.1, ..., 1.5
MAX_TOP_SHARE = 0.05


def tune(checkpoint: str, dev_files: list[str], out: str, beam: int = 4, n_best: int = 3,
         posts: int = 1000, threads: int = 2, max_len: int | None = None,
         held_out: str | None = None) -> dict:
    predictor = load_predictor(checkpoint, None, threads)
    held_out = held_out_set(held_out or predictor.meta.get("data", {}).get("dev_ood_file"),
                            dev_files)
    predictor.max_len = max_len or predictor.cfg.max_target
    train = training_pairs(predictor)
    known = known_words(train, predictor.lang) if predictor.lang == "en" else []
    predictor.known = frozenset(known) if known else None
    predictor.offer_post_words = True
    predictor.keywords = train_keywords(train, predictor.lang)
    sets = {name: read_pairs(name)[:posts] for name in dev_files}
    found = {name: _decode(predictor, pairs, beam) for name, pairs in sets.items()}
    labels = candidate_scores(predictor, found[held_out], sets[held_out])
    grid, calibrations = [], {}
    for w in GRID:
        calibrations[w] = predictor.calibration = fit_calibration(found[held_out], labels, w)
        grid.append(_at_weight(predictor, found, sets, w))
    weight = choose_weight(grid)
    predictor.calibration = calibrations[weight]
    outputs = {name: [predictor.result(c, weight, n_best, False) for c in cands]
               for name, cands in found.items()}
    threshold = choose_threshold([o for name in sets for o in outputs[name]],
                                 [p.hashtags for name in sets for p in sets[name]],
                                 predictor.lang)
    state = torch.load(checkpoint, map_location="cpu", weights_only=False)
    keywords = {"keywords": predictor.keywords.to_state(),
                "calibration": vars(predictor.calibration)}
    state["meta"] = {**state.get("meta", {}), "prior_weight": weight,
                     "min_score": threshold["min_score"], "known_words": known,
                     "post_candidates": True, "max_len": predictor.max_len, **keywords,
                     "tuning": {"dev": dev_files, "posts": posts, "beam": beam,
                                "n_best": n_best, "max_len": predictor.max_len,
                                "held_out": held_out,
                                "command": "python -m training " + " ".join(sys.argv[1:])}}
    Path(out).parent.mkdir(parents=True, exist_ok=True)
    torch.save(state, out)
    carry_provenance(Path(checkpoint), Path(out))
    return {"out": out, "prior_weight": weight, "min_score": threshold["min_score"],
            "max_len": predictor.max_len, "known_words": len(known),
            "calibration": vars(predictor.calibration),
            "threshold": threshold, "grid": grid}


def carry_provenance(checkpoint: Path, out: Path) -> None:
    """The training run record travels with the tuned checkpoint (publish puts it on the
    card): the run.json next to `checkpoint`, or, for a served weights file, its card's
    training entry, so re-tuning a shipped file keeps saying how its weights were trained."""
    target = out.parent / RUN_RECORD
    if out.parent == checkpoint.parent:
        return
    run = read_run(checkpoint)
    card = checkpoint.parent / "card.json"
    if run is None and card.exists():
        run = json.loads(card.read_text()).get("files", {}).get(checkpoint.name, {}).get(
            "training")
    if run and "command" in run:
        target.write_text(json.dumps(run, indent=1) + "\n")


def training_pairs(predictor: HashtagPredictor) -> list[Pair]:
    """The checkpoint's training pairs: the shared split, its extra files, without the
    held-out sources."""
    return load_data(predictor.lang, {}, predictor.meta.get("data", {}), quick=False)[0]


def known_words(train: list[Pair], lang: str) -> list[str]:
    """Sorted words of the training hashtags (module doc)."""
    return sorted({w for p in train for w in target_words(p.hashtags, lang) if w != SEPARATOR})


def held_out_set(held_out: str | None, dev_files: list[str]) -> str:
    """The --dev file that is the held-out-source set, found by path."""
    if held_out is None:
        raise SystemExit("name the held-out-source dev set (--held-out FILE): the checkpoint "
                         "records no dev_ood_file")
    for name in dev_files:
        if data_path(name).resolve() == data_path(held_out).resolve():
            return name
    raise SystemExit(f"the held-out-source set {held_out} must be one of the --dev files")


def candidate_scores(predictor: HashtagPredictor, found: list[list[Candidate]],
                     pairs: list[Pair]) -> list[list[float]]:
    """Per post, per candidate: its ROUGE-1 F against the users' hashtags."""
    scorer = make_scorer(predictor.lang)
    labels = []
    for candidates, pair in zip(found, pairs, strict=True):
        reference = sequence_text([split_hashtag(t, predictor.lang) for t in pair.hashtags])
        labels.append([scorer.score(reference, sequence_text(split_generated(
            predictor.vocab.decode_words(c.hyp.tokens))))["rouge1"].fmeasure
            for c in candidates])
    return labels


def fit_calibration(found: list[list[Candidate]], labels: list[list[float]],
                    weight: float) -> Calibration:
    """Logistic regression of the soft `labels` (ROUGE-1 F) on the candidates' scores at
    prior weight `weight`: one slope and intercept for generated hypotheses, one for post
    candidates."""
    rows, y = [], []
    for candidates, scores in zip(found, labels, strict=True):
        for c, label in zip(candidates, scores, strict=True):
            x = c.rank_key(weight)[1] if c.keyword is None else c.keyword
            rows.append([0.0, 0.0, x, 1.0] if c.keyword is not None else [x, 1.0, 0.0, 0.0])
            y.append(label)
    x_t, y_t = torch.tensor(rows), torch.tensor(y)
    w = torch.zeros(4, requires_grad=True)
    optimizer = torch.optim.LBFGS([w], max_iter=200)

    def loss() -> torch.Tensor:
        optimizer.zero_grad()
        value = torch.nn.functional.binary_cross_entropy_with_logits(x_t @ w, y_t)
        value.backward()
        return value

    optimizer.step(loss)
    a_g, b_g, a_p, b_p = (round(v, 4) for v in w.detach().tolist())
    return Calibration(generated=(a_g, b_g), post=(a_p, b_p))


def _decode(predictor: HashtagPredictor, pairs: list[Pair], beam: int) -> list[list[Candidate]]:
    found: list[list[Candidate]] = []
    for i in range(0, len(pairs), 64):
        chunk = [p.text for p in pairs[i : i + 64]]
        found += predictor.candidates(chunk, beam, beam, with_prior=True)[0]
        print(f"\r{len(found)}/{len(pairs)} posts", end="", file=sys.stderr, flush=True)
    print(file=sys.stderr)
    return found


def _at_weight(predictor: HashtagPredictor, found: dict[str, list[list[Candidate]]],
               sets: dict[str, list[Pair]], weight: float) -> dict:
    row: dict = {"prior_weight": weight}
    for name, cands in found.items():
        outputs = [predictor.result(c, weight, 1, False) for c in cands]
        counts = Counter(tuple(map(tuple, o.best)) for o in outputs)
        scores = rouge([o.best for o in outputs], [p.hashtags for p in sets[name]],
                       predictor.lang)
        row[name] = {"rouge1": round(scores["rouge1"], 4), "posts": len(outputs),
                     "distinct_best": len(counts),
                     "top_share": round(counts.most_common(1)[0][1] / len(outputs), 4),
                     "top": " # ".join(" ".join(t) for t in counts.most_common(1)[0][0])}
    return row


def choose_weight(grid: list[dict]) -> float:
    """See the module doc: best mean ROUGE-1 with top_share (plus a standard error) under
    5 % everywhere, else the least collapsed."""
    def sets(row: dict) -> list[dict]:
        return [v for k, v in row.items() if k != "prior_weight"]

    def under_target(s: dict) -> bool:
        share = s["top_share"]
        return share + math.sqrt(share * (1 - share) / s["posts"]) < MAX_TOP_SHARE

    diverse = [r for r in grid if all(under_target(s) for s in sets(r))]
    if diverse:
        best = max(diverse, key=lambda r: sum(s["rouge1"] for s in sets(r)) / len(sets(r)))
    else:
        best = min(grid, key=lambda r: max(s["top_share"] for s in sets(r)))
    return best["prior_weight"]


def choose_threshold(outputs: list[Generated], references: list[list[str]], lang: str) -> dict:
    """The min_score maximising the micro-F1 of the shown hashtags with ROUGE-1 credit
    (module doc), the lowest such on ties; None (show everything) when no threshold does
    better than showing all. Each ranked hashtag carries its sequence's score, so the
    candidates are those scores."""
    scorer = make_scorer(lang)
    golds = [list({hashtag_key(words, lang): words for words in
                   (split_hashtag(t, lang) for t in refs)}.values()) for refs in references]
    rows = sorted(((score, post, words) for post, o in enumerate(outputs)
                   for words, score in o.ranked), key=lambda r: r[0], reverse=True)
    total_gold = sum(len(g) for g in golds)
    curve = []  # one point per distinct score, from the highest threshold down
    credit, found = 0.0, 0.0  # sums of the shown hashtags' and the gold hashtags' credit
    best_for_gold: dict[tuple[int, int], float] = {}
    posts: set[int] = set()
    for i, (score, post, words) in enumerate(rows):
        f = [scorer.score(sequence_text([gold]), sequence_text([words]))["rouge1"].fmeasure
             for gold in golds[post]]
        credit += max(f, default=0.0)
        for j, value in enumerate(f):
            if value > (old := best_for_gold.get((post, j), 0.0)):
                found += value - old
                best_for_gold[post, j] = value
        posts.add(post)
        if i + 1 < len(rows) and rows[i + 1][0] == score:
            continue  # a threshold keeps all hashtags of one score or none
        precision, recall = credit / (i + 1), found / max(total_gold, 1)
        f1 = 2 * precision * recall / (precision + recall) if credit else 0.0
        curve.append({"min_score": round(score, 4), "f1": round(f1, 4),
                      "precision": round(precision, 4), "recall": round(recall, 4),
                      "posts_shown": round(len(posts) / len(outputs), 4)})
    if not curve:
        return {"min_score": None, "f1": 0.0, "posts_shown": 0.0}
    best = max(reversed(curve), key=lambda c: c["f1"])  # reversed: ties go to the lowest
    if best is curve[-1] or best["f1"] == 0.0:
        return {**best, "min_score": None}
    return best
