"""The settings tables the docs show, generated from the fields that declare them.

    python -m services.settings_docs

prints, per document, the table between its ``<!-- settings:begin -->`` and
``<!-- settings:end -->`` markers; ``--write`` replaces them in place.
tests/unit/test_settings_docs.py fails when a document's table is out of date.
"""

from __future__ import annotations

import argparse
import re

from services.config import MemoryConfig, PipelineConfig, RetryPolicy
from services.env import REPO_ROOT, table
from services.headline_api.config import ApiConfig
from services.settings import Settings

BEGIN, END = "<!-- settings:begin -->", "<!-- settings:end -->"
BLOCK = re.compile(re.escape(BEGIN) + r".*?" + re.escape(END), re.S)


def tables() -> dict[str, str]:
    """Every process's settings table, by the document that shows it."""
    return {"deploy/README.md": table(Settings),
            "docs/design.md": table(PipelineConfig, RetryPolicy, MemoryConfig),
            "docs/headline-api.md": table(ApiConfig)}


def current(doc: str) -> str | None:
    """The table between the markers of ``doc`` now, None without markers."""
    found = BLOCK.search((REPO_ROOT / doc).read_text())
    return found.group(0)[len(BEGIN):-len(END)].strip() if found else None


def main() -> None:
    parser = argparse.ArgumentParser(prog="python -m services.settings_docs",
                                     description=__doc__,
                                     formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--write", action="store_true", help="update the documents in place")
    args = parser.parse_args()
    for doc, rows in tables().items():
        if args.write:
            path = REPO_ROOT / doc
            text = path.read_text()
            if not BLOCK.search(text):
                raise SystemExit(f"{doc}: no {BEGIN} ... {END} markers")
            block = f"{BEGIN}\n{rows}\n{END}"
            path.write_text(BLOCK.sub(lambda _, block=block: block, text))
            print(f"{doc}: updated")
        else:
            print(f"{doc}:\n\n{rows}\n")


if __name__ == "__main__":
    main()
