"""Headlines an editor would not keep: `degenerate` and `unsupported` (issue 20).

Both are shares of headlines (0..1, 4 places); deterministic; no model, only rules.

**degenerate** — the headline has at least one of:

* a word found neither in the article nor in the training vocabulary of whole words.
  English words are rouge-score's tokens (lower-cased runs of letters/digits), the
  vocabulary is every such token of the training articles and headlines ("AOLels" is
  nowhere, "aol" is). Chinese: a CJK character in neither the article nor the training text;
* English: a whitespace token that glues words ("suggests's", "research-beam", "SEC.S.")
  or runs capitals into lower case ("DIone") and is no token of the article, nor shaped
  like an abbreviation or a number compound ("U.S.", "10-year"): the glued-token rule of
  `nlp_models/headline/wholewords.py`;
* a word repeated: English, a token of 3+ characters twice (as `repeated_word_rate`), or
  any word twice in a row ("GM GM recall", "be be", "d d d": whitespace tokens whose
  edge-stripped forms are equal, case aside);
  Chinese, a character trigram (punctuation and spaces removed) twice — the units the
  decoding rule against repeats uses — or one character three times in a row ("辞辞辞");
* fewer than 3 words (English) / 4 characters (Chinese, the data's minimum headline).

`repeated_as_written` (English; reported beside, not part of, `degenerate`): the share of
headlines flagged `repeated` whose every repeat the article writes so, from the word to its
repeat, as written or trimmed ("Senate Democratic Leader Harry Reid and House Democratic
Leader Nancy Pelosi"): copied wording, not a generator's loop ("wage wage"). Editors repeat
a word in 4-17 % of the newsrooms' headlines.

**unsupported** — the headline states a number (with its unit), a name or (English) a legal
outcome the article lacks: the rules of `nlp_models/headline/faithful.py`, which serving
applies too. Reported as `unsupported` (any), `unsupported_number`, `unsupported_name` and
`unsupported_claim`.
"""

from __future__ import annotations

import json
import re
import sys
import unicodedata
from collections import Counter
from collections.abc import Iterable, Sequence
from pathlib import Path

import torch
from rouge_score.tokenizers import DefaultTokenizer

from nlp_models.headline.faithful import (
    fold,
    unsupported_claims,
    unsupported_names,
    unsupported_numbers,
)
from nlp_models.headline.lead import repeats_a_word, token_core
from nlp_models.headline.wholewords import MIN_HEADLINE_WORDS, glued, shaped

_TOK = DefaultTokenizer(use_stemmer=False)

def words(text: str, lang: str) -> list[str]:
    """English: rouge-score tokens; Chinese: CJK characters and ASCII alphanumeric runs."""
    if lang == "zh":
        return re.findall(r"[\u4e00-\u9fff]|[A-Za-z0-9]+", fold(text))
    return _TOK.tokenize(text)


def training_vocabulary(texts: Iterable[str], lang: str, min_count: int = 1) -> frozenset[str]:
    """The words of ``texts`` seen at least ``min_count`` times."""
    counts: Counter[str] = Counter()
    for t in texts:
        counts.update(words(t, lang))
    return frozenset(w for w, n in counts.items() if n >= min_count)


def vocabulary_from_files(paths: Iterable[str | Path], lang: str,
                          min_count: int = 1) -> frozenset[str]:
    """The whole-word vocabulary of the articles and headlines of JSONL training files: the
    words seen at least ``min_count`` times. Seen once or twice, a "word" is often a piece
    of a broken one ("mus", "uter", "canc" of web text): allowed in headlines, the beam
    ended run-ons on such prefixes."""

    def texts():
        for path in paths:
            with open(path, encoding="utf-8") as f:
                for line in f:
                    if line.strip():
                        r = json.loads(line)
                        yield r.get("article", "")
                        yield r.get("headline", "")

    return training_vocabulary(texts(), lang, min_count)


def degenerate_reasons(headline: str, article: str, vocab: frozenset[str],
                       lang: str) -> list[str]:
    """Which of `unknown_word`, `repeated`, `too_short` apply (empty list: fine)."""
    reasons = []
    tokens = words(headline, lang)
    known = set(words(article, lang)) | vocab
    if lang == "zh":
        # a CJK character, or a run of digits and Latin letters ("2018MAMusiards" glued
        # from 2018MAMA and Music Awards), that neither the article nor training text has
        unknown = any(t not in known for t in tokens)
        chars = "".join(c for c in fold(headline)
                        if not c.isspace() and not unicodedata.category(c).startswith("P"))
        trigrams = Counter(chars[i:i + 3] for i in range(len(chars) - 2))
        repeated = (any(n > 1 for n in trigrams.values())
                    or re.search(r"(.)\1\1", chars) is not None)
        short = len(chars) < 4
    else:
        article_tokens = {token_core(t).lower() for t in article.split()}
        unknown = any(t not in known for t in tokens) or any(
            glued(c) and not shaped(c) and c.lower() not in article_tokens
            for c in map(token_core, headline.split()))
        repeated = repeats_a_word(headline)
        short = len(tokens) < MIN_HEADLINE_WORDS
    for flag, name in ((unknown, "unknown_word"), (repeated, "repeated"), (short, "too_short")):
        if flag:
            reasons.append(name)
    return reasons


def repeated_as_written(headline: str, article: str) -> bool:
    """English: whether the headline repeats a word (of 3+ characters, or any twice in a
    row), and the article writes every such stretch, from the word to its repeat, in that
    order within twice its length: as written, or trimmed ("The Justice Department announced
    today that two former Tuskegee Police Department lieutenants"). rouge-score's tokens."""
    tokens = words(headline, "en")
    written = words(article, "en")
    stretches = []
    for i, token in enumerate(tokens):
        if (len(token) >= 3 and token in tokens[i + 1:]) or tokens[i + 1 : i + 2] == [token]:
            stretches.append(tokens[i : tokens.index(token, i + 1) + 1])
    return bool(stretches) and all(_written(s, written) for s in stretches)


def _written(stretch: list[str], article: list[str]) -> bool:
    """Whether `article` holds `stretch` in order within 2 * len(stretch) tokens; a word
    twice in a row ("bill bill") only as written."""
    reach = 2 if len(stretch) == 2 else 2 * len(stretch)
    for start in (i for i, t in enumerate(article) if t == stretch[0]):
        window = iter(article[start + 1 : start + reach])
        if all(t in window for t in stretch[1:]):  # `in` consumes: an in-order search
            return True
    return False


def degenerate_shares(headlines: Sequence[str], articles: Sequence[str], vocab: frozenset[str],
                      lang: str) -> dict:
    """The share of degenerate headlines and, by reason, the share each check flags (one
    headline can trip two): which check a writer trips. English: also `repeated_as_written`."""
    pairs = list(zip(headlines, articles, strict=True))
    flagged = [degenerate_reasons(h, a, vocab, lang) for h, a in pairs]
    n = max(len(headlines), 1)
    out = {"degenerate": round(sum(map(bool, flagged)) / n, 4),
           "degenerate_by_reason": {reason: round(sum(reason in f for f in flagged) / n, 4)
                                    for reason in ("unknown_word", "repeated", "too_short")}}
    if lang == "en":
        out["repeated_as_written"] = round(sum(
            "repeated" in f and repeated_as_written(h, a)
            for f, (h, a) in zip(flagged, pairs, strict=True)) / n, 4)
    return out


def unsupported_rates(headlines: Sequence[str], articles: Sequence[str],
                      lang: str) -> dict[str, float]:
    """Shares of headlines with an unsupported number, name or claim (any), and of each."""
    n = max(len(headlines), 1)
    pairs = list(zip(headlines, articles, strict=True))
    numbers = [bool(unsupported_numbers(h, a)) for h, a in pairs]
    names = [bool(unsupported_names(h, a, lang)) for h, a in pairs]
    claims = [bool(unsupported_claims(h, a, lang)) for h, a in pairs]
    return {"unsupported": round(sum(map(any, zip(numbers, names, claims, strict=True))) / n, 4),
            "unsupported_number": round(sum(numbers) / n, 4),
            "unsupported_name": round(sum(names) / n, 4),
            "unsupported_claim": round(sum(claims) / n, 4)}


def add_word_list(checkpoint: str | Path, out: str | Path,
                  train_data: Sequence[str | Path] | None, unsupported_penalty: float = 0.0,
                  length_penalty: float | None = None,
                  default_data: Sequence[str | Path] = (), min_count: int = 1) -> dict:
    """Copy an English full-generator checkpoint with its decoding settings: the whole-word
    list (the training vocabulary of ``train_data``, words seen at least ``min_count``
    times; without it, the list the checkpoint's run stored, else that of
    ``default_data``: checkpoints trained before the rule existed), the penalty for names
    the article lacks and, if given, the length-penalty alpha; weights unchanged. Writes
    ``run.json`` beside ``out`` for the model card."""
    from training.provenance import file_entry, git_commit, now

    state = torch.load(checkpoint, map_location="cpu", weights_only=False)
    if state["lang"] != "en":
        raise SystemExit(f"{checkpoint} is a {state['lang']} checkpoint; the whole-word rule "
                         "is for English")
    meta = state.get("meta", {})
    stored = meta.get("whole_words")
    if min_count > 1 and not train_data:
        raise SystemExit("--min-count counts words in the training data: pass --train-data")
    sources = list(train_data or ([] if stored else default_data))
    words = (sorted(vocabulary_from_files(sources, "en", min_count)) if sources
             else list(stored or []))
    if not words:
        raise SystemExit(f"{checkpoint} stores no word list; pass --train-data")
    out = Path(out)
    out.parent.mkdir(parents=True, exist_ok=True)
    settings = {"unsupported_penalty": unsupported_penalty,
                **({"length_penalty": length_penalty} if length_penalty is not None else {})}
    state["meta"] = {**meta, "whole_words": words, "run": out.parent.name, **settings}
    torch.save(state, out)
    record = {"command": "python -m training " + " ".join(sys.argv[1:]),
              "derived_from": file_entry(checkpoint),
              "data": [file_entry(p) for p in sources], "code": git_commit(),
              "started_at": now(), "whole_words": len(words), "min_count": min_count,
              **settings}
    (out.parent / "run.json").write_text(json.dumps(record, indent=1) + "\n")
    return {"checkpoint": str(out), "whole_words": len(words), **file_entry(out)}
