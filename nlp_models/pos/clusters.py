"""ARK Twitter word clusters (Owoputi et al. 2013) as features of the POS tagger.

The cluster file `50mpaths2` (Brown clusters of 217k word types from ~56M tweets; lines
`BITSTRING<TAB>WORD<TAB>COUNT`, GPL-2.0) ships inside Maven Central's
`edu.cmu.cs:ark-tweet-nlp:0.3.2` jar. It is never committed: `python -m deploy.local prepare`
(part of `deploy/setup.sh`; see deploy/clusters.py) resolves the jar and extracts the file
into the state dir, and training and serving read it from there (or from $NLP_POS_CLUSTERS).

Lookup follows the ARK tagger's: the key is the lower-cased token, a URL becomes
`<URL-domain>`, an @mention `<@MENTION>`; a token not in the file is retried in fuzzier
forms (typographic quotes made plain, letter runs shortened, punctuation stripped, then each
punctuation-separated part). A word's features are the prefixes of its bit string (padded
to 16 bits with zeros) at 2, 4, ..., 16 bits, as ARK's `BigCluster|` features.
"""

from __future__ import annotations

import hashlib
import os
import re
from functools import lru_cache
from pathlib import Path

CLUSTER_FILE = "50mpaths2"
BITS = (2, 4, 6, 8, 10, 12, 14, 16)  # prefix lengths; ARK uses the same levels
PAD_BITS = 16
NONE = "<none>"  # the feature of a word the file does not hold, one per level

_URL = re.compile(
    r"^(?:(?:https?://|www\.)\S+|[a-z0-9.-]+\.(?:com|org|net|edu|gov|co|io|ly|me|tv|uk|de)"
    r"(?:/\S*)?)$",
    re.I,
)
_EMAIL = re.compile(r"^[\w.+-]+@[\w-]+\.[\w.-]+$")
_BASE = re.compile(r"(?!www\.|ww\.|w\.|@)[a-zA-Z0-9]+\.[A-Za-z0-9.]+")  # the host, as ARK
_MENTION = re.compile(r"^[@＠]\w+(?:/\w+)?$")
_REPEAT = re.compile(r"(\w)\1+")
_REPEAT_VOWEL = re.compile(r"([aeiou])\1+")
_ASCII_PUNCT = re.compile(r"[!\"#$%&'()*+,\-./:;<=>?@\[\\\]^_`{|}~]")


def default_path() -> Path:
    """$NLP_POS_CLUSTERS, else <$NLP_STATE_DIR or ./var>/ark-clusters/50mpaths2: the file
    `python -m deploy.local prepare` extracts (deploy/clusters.py; the same state dir as
    services/settings.py, relative to the working directory: run from the repository root).
    The served model always gets $NLP_POS_CLUSTERS from deploy/triton.py or the image."""
    explicit = os.environ.get("NLP_POS_CLUSTERS", "").strip()
    if explicit:
        return Path(explicit)
    state = os.environ.get("NLP_STATE_DIR", "").strip() or "var"
    return Path(state) / "ark-clusters" / CLUSTER_FILE


class ClusterFileMissing(RuntimeError):
    pass


def require(path: Path | None = None) -> Path:
    path = Path(path) if path else default_path()
    if not path.is_file():
        raise ClusterFileMissing(
            f"ARK word-cluster file {path} not found. The POS tagger needs it (training and "
            "serving). Resolve it from Maven Central with `python -m deploy.local prepare "
            "triton` (or `bash deploy/setup.sh`), or set NLP_POS_CLUSTERS to the extracted "
            "cmu/arktweetnlp/50mpaths2 of edu.cmu.cs:ark-tweet-nlp:0.3.2."
        )
    return path


@lru_cache(maxsize=4)
def _read(path: str) -> tuple[dict[str, str], str]:
    data = Path(path).read_bytes()
    table: dict[str, str] = {}
    for line in data.decode("utf-8").splitlines():
        parts = line.split("\t")
        if len(parts) >= 2:
            table[parts[1]] = parts[0]
    return table, hashlib.sha256(data).hexdigest()


def ark_normalize(token: str) -> str:
    """The key ARK looks a token up by: lower case, `<URL-host>`, `<@MENTION>`."""
    low = token.lower()
    if _URL.match(low) or _EMAIL.match(low):
        base = _BASE.search(low)
        return f"<URL-{base.group() if base else ''}>"
    if _MENTION.match(low):
        return "<@MENTION>"
    return low


def fuzzy_forms(key: str) -> list[str]:
    """Keys to try, in order, when `key` itself is not in the file."""
    plain = key.translate(str.maketrans({"‘": "'", "’": "'", "´": "'", "`": "'", "“": '"',
                                         "”": '"'}))
    forms = [plain, _REPEAT.sub(r"\1", plain), _REPEAT.sub(r"\1\1", plain),
             _REPEAT_VOWEL.sub(r"\1", plain)]
    if not key.startswith("<URL"):
        forms.append(_ASCII_PUNCT.sub("", plain))
        forms += [p for p in _ASCII_PUNCT.split(plain) if p]
    return forms


def lookup(table: dict[str, str], token: str) -> str | None:
    """The bit string of `token`'s cluster, or None when no form of it is in the file."""
    key = ark_normalize(token)
    path = table.get(key)
    if path is not None:
        return path
    for form in fuzzy_forms(key):
        path = table.get(form)
        if path is not None:
            return path
    return None


def prefixes(path: str | None) -> list[str]:
    """Feature strings of one word, one per level: `4:0110`, or `4:<none>` if unknown."""
    if path is None:
        return [f"{b}:{NONE}" for b in BITS]
    padded = path.ljust(PAD_BITS, "0")
    return [f"{b}:{padded[:b]}" for b in BITS]


class Clusters:
    """Word -> cluster prefix ids. `features` (the prefix vocabulary) is saved with a model;
    the word table is read from the cluster file, checked against the saved digest."""

    def __init__(self, path: Path | None = None, features: list[str] | None = None,
                 sha256: str | None = None, memo_size: int = 200_000):
        self.path = require(path)
        self.table, digest = _read(str(self.path))
        if sha256 and sha256 != digest:
            raise ClusterFileMissing(
                f"{self.path} (sha256 {digest[:12]}) is not the cluster file this model was "
                f"trained with (sha256 {sha256[:12]}); resolve edu.cmu.cs:ark-tweet-nlp:0.3.2"
            )
        self.sha256 = digest
        if features is None:  # every prefix of every path in the file, plus the unknowns
            found = {f for p in set(self.table.values()) for f in prefixes(p)}
            features = sorted(found | set(prefixes(None)))
        self.features = list(features)
        self.index = {f: i + 1 for i, f in enumerate(self.features)}  # 0 = padding
        self.memo: dict[str, list[int]] = {}
        self.memo_size = memo_size

    def __len__(self) -> int:
        return len(self.features) + 1

    def ids(self, token: str) -> list[int]:
        hit = self.memo.get(token)
        if hit is not None:
            return hit
        index = self.index
        ids = [index.get(f, 0) for f in prefixes(lookup(self.table, token))]
        if len(self.memo) >= self.memo_size:
            self.memo.clear()
        self.memo[token] = ids
        return ids

    def to_json(self) -> dict:
        return {"file": CLUSTER_FILE, "sha256": self.sha256, "features": self.features}

    @classmethod
    def from_json(cls, d: dict, path: Path | None = None) -> Clusters:
        return cls(path, d["features"], d["sha256"])
