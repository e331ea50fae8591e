"""Settings declared once: each field names its environment variable, default and meaning.

A dataclass field made with :func:`setting` carries all three. :func:`read` returns what the
environment sets (parsed; a bad value raises ``ValueError`` naming the variable) and
:func:`table` the reference table the docs show, so code, defaults and docs cannot drift
(``python -m services.settings_docs`` prints every table; a unit test checks the docs).
Standard library only: ``services.settings`` uses it, and ``deploy`` uses that.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from dataclasses import MISSING, Field, field, fields
from pathlib import Path
from typing import Any

Parse = Callable[[str], Any]
REPO_ROOT = Path(__file__).resolve().parent.parent
TRUE, FALSE = ("1", "true", "yes", "on"), ("0", "false", "no", "off", "")


def flag(raw: str) -> bool:
    if raw.lower() in TRUE:
        return True
    if raw.lower() in FALSE:
        return False
    raise ValueError("expected 1/0, true/false, yes/no or on/off")


def repo_path(raw: str) -> Path:
    """Relative paths are relative to the repository root, wherever the process runs."""
    path = Path(raw)
    return path if path.is_absolute() else REPO_ROOT / path


def at_least(low: float, kind: Callable[[str], Any] = int) -> Parse:
    """A number clamped to ``low`` (e.g. a concurrency of 0 means 1)."""
    return lambda raw: max(kind(raw), low)


PARSERS: dict[type, Parse] = {bool: flag, int: int, float: float, str: str, Path: repo_path}


def setting(default: Any = MISSING, *, env: str, doc: str, parse: Parse | None = None,
            shown: str | None = None, blank: bool = False,
            default_factory: Callable[[], Any] | Any = MISSING) -> Any:
    """A dataclass field read from ``env``.

    ``parse`` turns the variable's text into the value (default: by the default's type);
    ``shown`` is the default as the docs print it; ``blank`` keeps an empty variable as a
    value (``NLP_HASHTAG_MODEL=`` turns hashtags off) instead of meaning "unset".
    """
    example = default if default_factory is MISSING else default_factory()
    if parse is None:
        kinds = [kind for kind in PARSERS if isinstance(example, kind)]
        if not kinds:
            raise TypeError(f"{env}: give parse= for a default of type {type(example).__name__}")
        parse = PARSERS[kinds[0]]  # bool before int
    if shown is None:
        shown = "unset" if example in (None, "") else str(example)
        shown = {"True": "1", "False": "0"}.get(shown, shown)
    meta = {"env": env, "doc": doc, "parse": parse, "shown": shown, "blank": blank}
    if default_factory is not MISSING:
        return field(default_factory=default_factory, metadata=meta)
    return field(default=default, metadata=meta)


def _settings(cls: type) -> list[Field[Any]]:
    return [f for f in fields(cls) if "env" in f.metadata]


def read(cls: type, env: Mapping[str, str]) -> dict[str, Any]:
    """The values of ``cls``'s settings that ``env`` sets, by field name."""
    values = {}
    for f in _settings(cls):
        var = f.metadata["env"]
        if var not in env:
            continue
        raw = env[var].strip()
        if not raw and not f.metadata["blank"]:
            continue
        try:
            values[f.name] = f.metadata["parse"](raw)
        except ValueError as exc:
            raise ValueError(f"{var}={raw!r}: {exc}") from None
    return values


def table(*classes: type) -> str:
    """Markdown reference rows: variable, default, meaning."""
    rows = ["| variable | default | meaning |", "|---|---|---|"]
    for cls in classes:
        rows += [f"| `{f.metadata['env']}` | {f.metadata['shown']} | {f.metadata['doc']} |"
                 for f in _settings(cls)]
    return "\n".join(rows)
