"""Our POS tagger beside the ARK tagger (Owoputi et al. 2013) on the same tweets, in one run.

    python -m bench pos-peer [--data FILE --tagset ptb|ark|universal ...] [--repeats 3]
                             [--ark-decoder greedy|viterbi]

Both taggers get the gold tokenization of each file; ``raw_text`` repeats the scoring with
each tweet as text (gold tokens joined by spaces) through each tagger's own tokenizer, as a
user runs them, where a token tokenized differently from the gold counts as wrong. The ARK tagger is
``edu.cmu.cs:ark-tweet-nlp:0.3.2`` from Maven Central with the model shipped in its jar
(``model.20120919``; deploy/ark.py); ours is the shipped checkpoint (PosPredictor, torch
threads = 1). Reported per file: token accuracy on ARK tags for both (our ARK head), and
tokens/s for both. Without --data: RIT-Test, RIT-Dev, NPSChat test (PTB tags mapped to
ARK, see below), DAILY547 and OCT27 test (ARK tags).

Fairness: the ARK model was trained on all of OCT27 and DAILY547, so its accuracy there
says little about unseen tweets: every file is checked, tweet by tweet, against those two
sets and gets ``fair: false`` when any of its tweets is in them. PTB-tagged files are
mapped to ARK tags with ``pos/tagmaps/ptb_to_ark.tsv``; tokens whose ARK tag the PTB tag
does not determine are left out of the score for both taggers (training/pos/tagmap.py
lists the rules; ``excluded`` counts them), and ``accuracy_all_tokens_as_mapped`` gives the
score on every token with the map as is.

Universal gold (``--tagset universal``: Lowlands.test, a source neither tagger trained on;
training/pos/universal.py): placeholders become realistic tokens before tagging (``URL`` ->
``http://t.co/x``, ``@USER`` -> ``@user``, ``NUMBER`` -> ``10``); our ARK head and the ARK
tagger are both mapped with ``training/pos/tagmaps/ark_to_universal.tsv`` (the same map:
``accuracy`` ours / ark), our PTB head with ``ptb_to_universal.tsv`` (``ours_ptb_head``);
links, mentions and hashtags are left out of the score for all three (``excluded``).

Speed: each tagger tags the file untimed until 20,000 tokens are done (TorchScript
specialization, the JVM's JIT), then ``--repeats`` timed passes; the median is reported,
by wall clock (``tokens_per_s``) and by CPU time of the whole process
(``tokens_per_cpu_s``, steadier on a busy machine).
Our per-token feature cache is emptied before every timed pass, so both start each pass
with no memory of the tokens.
The JVM runs with one active processor; its start-up and model load are reported apart
(``ark_jvm``), never in the rate.
"""

from __future__ import annotations

import hashlib
import re
import statistics
import time
from collections import Counter
from pathlib import Path

DEFAULT_DATASETS = [  # (path under pos/, gold tagset)
    ("ritter/test.conll", "ptb"),
    ("ritter/dev.conll", "ptb"),
    ("npschat/test.conll", "ptb"),
    ("ark_daily547/test.conll", "ark"),
    ("ark_oct27/test.conll", "ark"),
]
ARK_MODEL_TRAINING = ["ark_oct27/train.conll", "ark_oct27/dev.conll", "ark_oct27/test.conll",
                      "ark_daily547/test.conll"]
#: both taggers tag each file untimed until this many tokens are done (JIT, TorchScript)
WARMUP_TOKENS = 20_000
#: what our shipped model saw of the default sets (docs/models/pos.md)
OURS_SAW = {
    "ritter/test.conll": "never; trained on ritter/train (same corpus, PTB tags)",
    "ritter/dev.conll": "checkpoint selection (mean dev accuracy), not trained on; "
                        "trained on ritter/train",
    "npschat/test.conll": "never; trained on npschat/train (same corpus, PTB tags)",
    "ark_daily547/test.conll": "never",
    "ark_oct27/test.conll": "checkpoint selection (mean dev accuracy), not trained on; "
                            "trained on ark_oct27/train+dev",
    "data/pos/lowlands/test.tsv": "never; no tweet of its source (Lowlands, 2013) in any "
                                  "training or selection set",
}


def score(gold: list[list[str | None]], predicted: list[list[str]]) -> tuple[int, int]:
    """(correct, scored) over the tokens whose gold tag is not None."""
    correct = total = 0
    for g_sent, p_sent in zip(gold, predicted, strict=True):
        for g, p in zip(g_sent, p_sent, strict=True):
            if g is not None:
                total += 1
                correct += g == p
    return correct, total


def ark_gold_tags(sentences, tagset: str, table: dict[str, str]
                  ) -> tuple[list[list[str | None]], list[list[str]], Counter]:
    """(gold ARK tags with None for unscored tokens, gold as mapped for every token,
    counts of the excluded tokens by reason)."""
    from training.pos.tagmap import ark_gold

    if tagset == "ark":
        return [list(s.tags) for s in sentences], [list(s.tags) for s in sentences], Counter()
    scored, as_mapped, excluded = [], [], Counter()
    for s in sentences:
        pairs = ark_gold(s.tokens, s.tags, table)
        scored.append([tag for tag, _ in pairs])
        as_mapped.append([table.get(t, "G") for t in s.tags])
        excluded.update(reason for tag, reason in pairs if tag is None)
    return scored, as_mapped, excluded


def universal_gold_tags(sentences) -> tuple[list[list[str | None]], Counter]:
    """(universal gold with None for unscored tokens, counts of the excluded tokens by
    reason): links, mentions and hashtags (training/pos/universal.py)."""
    from training.pos.universal import universal_gold

    scored, excluded = [], Counter()
    for s in sentences:
        pairs = universal_gold(s.tokens, s.tags)
        scored.append([tag for tag, _ in pairs])
        excluded.update(reason for tag, reason in pairs if tag is None)
    return scored, excluded


#: NPSChat's IRC system posts (JOIN, PART, NICK + a user name) and its anonymised user names
CHAT_SYSTEM = frozenset({"JOIN", "PART", "NICK"})
_CHAT_USER = re.compile(r"\d\d-\d\d-\w+User\d+")


def without_chat_artifacts(tokens: list[list[str]], gold: list[list[str | None]]
                           ) -> tuple[list[list[str | None]], int]:
    """Gold with the tokens of IRC system posts and anonymised user names
    (``11-09-teensUser34``) set to None, and how many scored tokens that removed. Neither
    occurs in tweets; the ARK model never saw them, our model learned them from NPSChat's
    train split."""
    out, removed = [], 0
    for toks, gs in zip(tokens, gold, strict=True):
        system = toks[0] in CHAT_SYSTEM
        row = [None if (system or _CHAT_USER.fullmatch(t)) else g for t, g in zip(toks, gs,
                                                                                 strict=True)]
        removed += sum(g is not None and r is None for g, r in zip(gs, row, strict=True))
        out.append(row)
    return out, removed


def paired(gold: list[list[str | None]], ours: list[list[str]], ark: list[list[str]]
           ) -> dict[str, int]:
    """Scored tokens only one tagger gets right: the paired view (McNemar's counts) of a
    difference that the test sets' size makes hard to read from two accuracies."""
    only_ours = only_ark = 0
    for gs, os_, as_ in zip(gold, ours, ark, strict=True):
        for g, o, a in zip(gs, os_, as_, strict=True):
            if g is not None and (o == g) != (a == g):
                only_ours += o == g
                only_ark += a == g
    return {"only_ours_right": only_ours, "only_ark_right": only_ark}


def top_errors(gold: list[list[str | None]], predicted: list[list[str]], n: int = 5
               ) -> list[list]:
    """The n most frequent [gold, predicted, count] confusions on the scored tokens."""
    errors = Counter((g, p) for gs, ps in zip(gold, predicted, strict=True)
                     for g, p in zip(gs, ps, strict=True) if g is not None and g != p)
    return [[g, p, c] for (g, p), c in errors.most_common(n)]


def locate(text: str, tokens: list[str]) -> list[tuple[int, int] | None]:
    """Spans of a tokenizer's output tokens found left to right in `text`; None for a token
    the tokenizer rewrote (the ARK tokenizer unescapes HTML entities)."""
    spans: list[tuple[int, int] | None] = []
    at = 0
    for tok in tokens:
        i = text.find(tok, at)
        spans.append(None if i < 0 else (i, i + len(tok)))
        at = at if i < 0 else i + len(tok)
    return spans


def raw_text_scores(predictor, settings, tokens: list[list[str]], gold: list[list[str | None]],
                    decoder: str, convert: dict[str, str] | None = None) -> dict:
    """Both taggers on raw text, as a user runs them: each tweet's gold tokens joined by
    spaces, tokenized by each tagger's own tokenizer; a gold token counts as right only if
    the tokenizer produced exactly it and the tag is right. `convert` maps both taggers' ARK
    tags to the gold's tagset (universal gold)."""
    from deploy import ark
    from training.pos.evaluate import on_gold_tokens

    texts = [" ".join(t) for t in tokens]
    ours = [on_gold_tokens(t, [((x.start, x.end), x.ark) for x in r.tokens])
            for t, r in zip(tokens, predictor.tag_texts(texts), strict=True)]
    ark_tweets = ark.tag_texts(settings, texts, decoder)
    theirs = [on_gold_tokens(t, list(zip(locate(text, [w for w, _ in tw]),
                                         [tag for _, tag in tw], strict=True)))
              for t, text, tw in zip(tokens, texts, ark_tweets, strict=True)]
    if convert is not None:
        ours, theirs = ([[None if t is None else convert[t] for t in row] for row in tags]
                        for tags in (ours, theirs))
    n = sum(map(len, tokens))
    return {
        "accuracy": {"ours": _acc(*score(gold, ours)), "ark": _acc(*score(gold, theirs))},
        "tokens_tokenized_as_gold": {
            name: round(100 * sum(t is not None for row in tags for t in row) / n, 2)
            for name, tags in (("ours", ours), ("ark", theirs))},
        "paired": paired(gold, ours, theirs),
    }


def _acc(correct: int, total: int) -> float | None:
    return round(100 * correct / total, 2) if total else None


def _rate(tokens: int, seconds: float) -> float:
    return round(tokens / seconds, 1) if seconds > 0 else float("inf")


def time_ours(predictor, sentences: list[list[str]], repeats: int,
              warmup_tokens: int = WARMUP_TOKENS
              ) -> tuple[list[dict[str, list[str]]], float, float]:
    """Our tags and the median wall and process-CPU seconds of ``repeats`` timed passes
    after untimed ones over at least ``warmup_tokens`` tokens (one pass at least)."""
    n_tokens, tagged = sum(map(len, sentences)), 0
    while True:
        predictor.tag_tokens(sentences)
        tagged += n_tokens
        if tagged >= warmup_tokens:
            break
    wall, cpu, tags = [], [], []
    for _ in range(max(1, repeats)):
        predictor._token_cache.clear()
        began, cpu_began = time.perf_counter(), time.process_time()
        tags = predictor.tag_tokens(sentences)
        wall.append(time.perf_counter() - began)
        cpu.append(time.process_time() - cpu_began)
    return tags, statistics.median(wall), statistics.median(cpu)


def run(datasets: list[tuple[str, str]] | None = None, repeats: int = 3,
        decoder: str = "greedy", model: str | None = None) -> dict:
    """``model``: our tagger's checkpoint (default: the shipped one)."""
    import torch

    from deploy import ark
    from deploy.clusters import resolve as resolve_clusters
    from nlp_models.pos.predictor import PosPredictor
    from services.settings import Settings
    from training.paths import data_dir
    from training.pos.data import read_conll
    from training.pos.evaluate import shipped_checkpoint
    from training.pos.tagmap import read_tagmap
    from training.pos.universal import (
        ARK_TO_UNIVERSAL,
        PLACEHOLDERS,
        PTB_TO_UNIVERSAL,
        read_universal_tsv,
        realistic,
        to_universal,
    )

    settings = Settings.from_env()
    pos_dir = data_dir() / "pos"
    if datasets is None:
        datasets = [(str(pos_dir / rel), tagset) for rel, tagset in DEFAULT_DATASETS]
    table = read_tagmap(pos_dir / "tagmaps" / "ptb_to_ark.tsv")
    ark_universal, ptb_universal = read_tagmap(ARK_TO_UNIVERSAL), read_tagmap(PTB_TO_UNIVERSAL)
    seen_by_ark = {tuple(s.tokens) for rel in ARK_MODEL_TRAINING
                   for s in read_conll(pos_dir / rel, "ark")}

    resolve_clusters(settings)  # our shipped model reads the ARK clusters too
    torch.set_num_threads(1)
    checkpoint = model or shipped_checkpoint()
    predictor = PosPredictor(checkpoint)

    rows, jvm = [], {"runs": 0, "wall_s": 0.0, "load_model_s": 0.0, "cold_pass_s": 0.0,
                     "passes_s": 0.0, "warmup_s": 0.0}
    total = {"ours": [0, 0.0, 0.0, 0], "ark": [0, 0.0, 0.0, 0]}  # tokens, s, CPU s, tweets
    for path, tagset in datasets:
        universal = tagset == "universal"
        if universal and not Path(path).is_file():
            raise SystemExit(f"{path} not found; docs/models/pos.md (Lowlands.test) says how "
                             "to put the file in place")
        sentences = read_universal_tsv(path) if universal else read_conll(path, tagset)
        tokens = [s.tokens for s in sentences]
        tagged = [realistic(t) for t in tokens] if universal else tokens  # what taggers get
        n_tokens = sum(map(len, tokens))
        if universal:
            gold, excluded = universal_gold_tags(sentences)
        else:
            gold, as_mapped, excluded = ark_gold_tags(sentences, tagset, table)
        ours, ours_s, ours_cpu = time_ours(predictor, tagged, repeats)
        ark_run = ark.tag(settings, tagged, decoder=decoder, repeats=repeats,
                          warmup_tokens=WARMUP_TOKENS)
        jvm["runs"] += 1
        jvm["wall_s"] += ark_run.wall_s
        jvm["load_model_s"] += ark_run.load_model_s
        jvm["cold_pass_s"] += ark_run.passes_s[0]
        jvm["passes_s"] += sum(ark_run.passes_s) + ark_run.warmup_s
        jvm["warmup_s"] += ark_run.warmup_s
        ours_ark, ark_tags = [t["ark"] for t in ours], ark_run.tags
        if universal:  # both through the same map: apples to apples
            ours_ark, ark_tags = to_universal(ours_ark, ark_universal), to_universal(
                ark_tags, ark_universal)
        in_ark_training = sum(tuple(t) in seen_by_ark or tuple(r) in seen_by_ark
                              for t, r in zip(tokens, tagged, strict=True))
        rel = _relative(path, pos_dir)
        row = {
            "data": rel,
            "gold_tagset": tagset,
            "fair": in_ark_training == 0,
            "tweets_in_ark_training_data": in_ark_training,
            "ours_saw_it": OURS_SAW.get(rel, "unknown"),
            "tweets": len(tokens),
            "tokens": n_tokens,
            "scored_tokens": score(gold, ours_ark)[1],
            "accuracy": {"ours": _acc(*score(gold, ours_ark)),
                         "ark": _acc(*score(gold, ark_tags))},
        }
        row["paired"] = paired(gold, ours_ark, ark_tags)
        row["raw_text"] = raw_text_scores(predictor, settings, tagged, gold, decoder,
                                          ark_universal if universal else None)
        row["top_errors_gold_predicted"] = {"ours": top_errors(gold, ours_ark),
                                            "ark": top_errors(gold, ark_tags)}
        if universal:
            ours_ptb = to_universal([t["ptb"] for t in ours], ptb_universal)
            row["accuracy"]["ours_ptb_head"] = _acc(*score(gold, ours_ptb))
            row["top_errors_gold_predicted"]["ours_ptb_head"] = top_errors(gold, ours_ptb)
            row["excluded"] = dict(excluded.most_common())
            row["placeholders_tagged_as"] = PLACEHOLDERS
            row["sha256"] = hashlib.sha256(Path(path).read_bytes()).hexdigest()
        if tagset == "ptb":
            row["excluded"] = dict(excluded.most_common())
            row["accuracy_all_tokens_as_mapped"] = {
                "ours": _acc(*score(as_mapped, ours_ark)),
                "ark": _acc(*score(as_mapped, ark_run.tags))}
            chat_gold, removed = without_chat_artifacts(tokens, gold)
            if removed:
                row["chat_artifact_tokens"] = removed
                row["accuracy_without_chat_artifacts"] = {
                    "ours": _acc(*score(chat_gold, ours_ark)),
                    "ark": _acc(*score(chat_gold, ark_run.tags))}
            row["ours_ptb_head_accuracy_all_tokens"] = _acc(
                *score([s.tags for s in sentences], [t["ptb"] for t in ours]))
        for key, ours_t, ark_t in (("tokens_per_s", ours_s, ark_run.warm_s),
                                   ("tokens_per_cpu_s", ours_cpu, ark_run.warm_cpu_s)):
            rates = {"ours": _rate(n_tokens, ours_t), "ark": _rate(n_tokens, ark_t)}
            rates["ark_vs_ours"] = round(rates["ark"] / rates["ours"], 3)
            row[key] = rates
        rows.append(row)
        for name, seconds, cpu in (("ours", ours_s, ours_cpu),
                                   ("ark", ark_run.warm_s, ark_run.warm_cpu_s)):
            total[name][0] += n_tokens
            total[name][1] += seconds
            total[name][2] += cpu
            total[name][3] += len(tokens)

    throughput: dict = {
        name: {"tokens": t, "tweets": n, "seconds": round(s, 3), "cpu_seconds": round(c, 3),
               "tokens_per_s": _rate(t, s), "tweets_per_s": _rate(n, s),
               "tokens_per_cpu_s": _rate(t, c), "tweets_per_cpu_s": _rate(n, c)}
        for name, (t, s, c, n) in total.items()
    }
    for key in ("tokens_per_s", "tokens_per_cpu_s"):
        throughput[f"ark_vs_ours_{key}"] = round(
            throughput["ark"][key] / throughput["ours"][key], 3)
    return {
        "benchmark": "pos-peer",
        "machine_cores": _cores(),
        "ours": {"checkpoint": str(checkpoint), "torch_threads": 1, "head": "ark"},
        "ark": {"artifact": "edu.cmu.cs:ark-tweet-nlp:0.3.2", "model": ark.MODEL,
                "decoder": decoder, "jvm_options": ark.JVM_OPTIONS},
        "datasets": rows,
        "throughput": throughput,
        "ark_jvm": {"runs": jvm["runs"],
                    "wall_s": round(jvm["wall_s"], 2),
                    "start_and_io_s": round(jvm["wall_s"] - jvm["load_model_s"]
                                            - jvm["passes_s"], 2),
                    "load_model_s": round(jvm["load_model_s"], 2),
                    "cold_first_pass_s": round(jvm["cold_pass_s"], 2),
                    "untimed_warmup_passes_s": round(jvm["warmup_s"], 2)},
        "tag_mapping": (
            "PTB gold -> ARK with pos/tagmaps/ptb_to_ark.tsv; 'accuracy' scores only tokens "
            "whose ARK tag the PTB tag and word determine (excluded: demonstrative DT, "
            "relative that/WDT, emoticon or 'please' UH, HT hashtags, ':' after an "
            "@mention, PRP compounds like im/its, tags mapped to G); "
            "'accuracy_all_tokens_as_mapped' scores every token with the map as is; the "
            "same tokens and gold for both taggers; both output ARK tags directly"),
        "notes": [
            "The ARK model (model.20120919) was trained on all of OCT27 and DAILY547: "
            "fair=false marks files with tweets from those sets; their ARK accuracy is "
            "training-set accuracy, not a comparison.",
            "fair=true means neither tagger saw these tweets; ours was trained on the "
            "train split of the same corpus (ours_saw_it), the ARK model on tweets only, "
            "so on NPSChat (IRC chat) ours is in domain and the ARK model is not; "
            "accuracy_without_chat_artifacts also leaves out IRC system posts (JOIN, PART, "
            "NICK) and anonymised user names, which no tweet has.",
            "Universal gold (gold_tagset universal): both taggers' ARK tags mapped with "
            "training/pos/tagmaps/ark_to_universal.tsv (ours / ark), our PTB head with "
            "ptb_to_universal.tsv (ours_ptb_head); placeholders tagged as "
            "placeholders_tagged_as; links, mentions and hashtags not scored (excluded).",
            "tokens_per_s: median wall time of the timed passes after untimed ones over "
            f"{WARMUP_TOKENS:,} tokens, one "
            "core each (torch threads 1; JVM with -XX:ActiveProcessorCount=1); "
            "tokens_per_cpu_s: the same passes by CPU time of the whole process (all its "
            "threads; steadier than wall time when other work shares the cores); ark_jvm "
            "holds the JVM's start-up, model load and cold-JIT first pass, never in a rate.",
        ],
    }


def _relative(path: str, pos_dir: Path) -> str:
    """The path under the shared pos/ folder, else under the repository (data/...)."""
    from training.paths import REPO_ROOT

    for root in (pos_dir, REPO_ROOT):
        try:
            return str(Path(path).resolve().relative_to(root.resolve()))
        except ValueError:
            continue
    return str(path)


def _cores() -> int:
    import os

    return len(os.sched_getaffinity(0))
