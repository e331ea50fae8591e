"""The ARK Twitter POS tagger (Owoputi et al. 2013) as a command, resolved from Maven Central.

deploy/maven/ark-tagger/pom.xml names `edu.cmu.cs:ark-tweet-nlp:0.3.2` with its runtime
dependencies; Maven resolves them once and the classpath is cached in ``<state dir>/jars/``
(deploy/jvm.py, as for the Kafka and Elasticsearch jars). A small driver,
deploy/maven/ark-tagger/src/nlp/local/ArkTagConll.java, compiled once against that classpath,
tags pre-tokenized tweets with the model shipped in the jar (``model.20120919``, the one
``cmu.arktweetnlp.RunTagger`` uses by default), the same feature extraction and decoding
as RunTagger's CoNLL mode, and reports its own timings: model load, a cold first pass and
warm passes, so the JVM start-up is kept out of the tagging rate. Used by
``python -m bench pos-peer`` (bench/pos_peer.py).
"""

from __future__ import annotations

import contextlib
import json
import os
import statistics
import subprocess
import sys
import tempfile
import time
from dataclasses import dataclass
from pathlib import Path

from deploy.jvm import MAVEN_DIR, classpath, compile_sources, find_java
from deploy.process import DeployError
from services.settings import Settings

COMPONENT = "ark-tagger"
MAVEN_POM = MAVEN_DIR / COMPONENT / "pom.xml"
MAIN = "nlp.local.ArkTagConll"
MODEL = "/cmu/arktweetnlp/model.20120919"  # a resource in the jar
#: one core for the JVM too (serial GC, one JIT thread), as our tagger runs with 1 torch thread
JVM_OPTIONS = ["-XX:ActiveProcessorCount=1", "-Xmx1g"]


@dataclass
class ArkRun:
    tags: list[list[str]]
    wall_s: float  # the whole java process: JVM start-up + model load + all passes + I/O
    load_model_s: float
    passes_s: list[float]  # wall clock; pass 0: cold JIT; the rest: timed after warm-up
    passes_cpu_s: list[float]  # CPU time of the whole JVM (all threads) per pass
    warmup_s: float  # the untimed passes after pass 0

    @property
    def warm_s(self) -> float:
        """The median warm pass (the cold one if there is no other)."""
        return _median_warm(self.passes_s)

    @property
    def warm_cpu_s(self) -> float:
        return _median_warm(self.passes_cpu_s)


def _median_warm(passes: list[float]) -> float:
    return statistics.median(passes[1:] or passes[:1])


def command(settings: Settings) -> list[str]:
    """``java ... nlp.local.ArkTagConll``: resolves the jars and compiles the driver if needed."""
    java = find_java()
    cache = settings.state_dir / "jars"
    with contextlib.redirect_stdout(sys.stderr):  # Maven's progress line; stdout is JSON
        cp = classpath(COMPONENT, cache)
        classes = compile_sources(COMPONENT, java, cp, cache)
    return [java, *JVM_OPTIONS, "-cp", f"{classes}{os.pathsep}{cp}", MAIN]


def tag(settings: Settings, sentences: list[list[str]], decoder: str = "greedy",
        repeats: int = 3, warmup_tokens: int = 20_000) -> ArkRun:
    """ARK tags for pre-tokenized sentences (gold tokenization), with the tagger's timings:
    a cold pass, untimed passes until ``warmup_tokens`` tokens are tagged, ``repeats``
    timed passes."""
    if any(not s for s in sentences):
        raise ValueError("empty sentence")
    if any(not tok or any(c.isspace() for c in tok) for s in sentences for tok in s):
        raise ValueError("tokens must be non-empty and hold no whitespace (CoNLL input)")
    cmd = command(settings)
    with tempfile.TemporaryDirectory(prefix="ark-tagger-") as tmp:
        conll = Path(tmp) / "input.conll"
        conll.write_text("".join("".join(f"{t}\t_\n" for t in s) + "\n" for s in sentences),
                         encoding="utf-8")
        began = time.perf_counter()
        proc = subprocess.run([*cmd, "--model", MODEL, "--decoder", decoder,
                               "--repeats", str(repeats), "--warmup-tokens",
                               str(warmup_tokens), str(conll)],
                              capture_output=True, timeout=3600)
        wall = time.perf_counter() - began
    err = proc.stderr.decode("utf-8", "replace")
    if proc.returncode != 0:
        raise DeployError(f"the ARK tagger failed (exit {proc.returncode}):\n{err[-3000:]}")
    timings = json.loads(err.strip().splitlines()[-1])
    tags: list[list[str]] = [[]]
    for line in proc.stdout.decode("utf-8").split("\n"):
        if line:
            tags[-1].append(line)
        elif tags[-1]:
            tags.append([])
    tags = [t for t in tags if t]
    if [len(t) for t in tags] != [len(s) for s in sentences]:
        raise DeployError("the ARK tagger's output does not line up with its input "
                          f"({len(tags)} tagged sentences for {len(sentences)})")
    return ArkRun(tags, wall, timings["load_model_s"], timings["passes_s"],
                  timings["passes_cpu_s"], timings["warmup_s"])


def tag_texts(settings: Settings, texts: list[str], decoder: str = "greedy"
              ) -> list[list[tuple[str, str]]]:
    """(token, ARK tag) per tweet for raw one-line texts, tokenized by the ARK tagger's own
    Twokenize (as ``RunTagger`` does with text input); one untimed pass."""
    if any("\n" in t or "\r" in t for t in texts):
        raise ValueError("texts must be single lines")
    with tempfile.TemporaryDirectory(prefix="ark-tagger-") as tmp:
        raw = Path(tmp) / "input.txt"
        raw.write_text("".join(f"{t}\n" for t in texts), encoding="utf-8")
        proc = subprocess.run([*command(settings), "--model", MODEL, "--decoder", decoder,
                               "--repeats", "0", "--warmup-tokens", "0", "--raw", str(raw)],
                              capture_output=True, timeout=3600)
    if proc.returncode != 0:
        err = proc.stderr.decode("utf-8", "replace")
        raise DeployError(f"the ARK tagger failed (exit {proc.returncode}):\n{err[-3000:]}")
    tweets: list[list[tuple[str, str]]] = [[]]
    for line in proc.stdout.decode("utf-8").split("\n"):
        if line:
            token, tag = line.rsplit("\t", 1)
            tweets[-1].append((token, tag))
        else:
            tweets.append([])
    tweets = tweets[: len(texts)]
    if len(tweets) != len(texts):
        raise DeployError(f"the ARK tagger tagged {len(tweets)} texts of {len(texts)}")
    return tweets
