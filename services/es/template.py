"""Install the ``posts-*`` and ``articles-*`` index templates idempotently (worker start,
search CLI).

Each template is a composable ``_index_template`` (ES >= 7.8) read from
``<kind>_template.json``; for another index prefix (tests) the name and pattern are
rewritten. ``PUT`` replaces an existing template with the same body, so installing on
every start is harmless. Indices created under an older template get the new mapping too
(fields can be added to a live index), so a field added in a new release, such as
``hashtag_status``, does not make the strict mapping reject documents of this month.
"""

from __future__ import annotations

import copy
import json
from pathlib import Path
from typing import Any

from elasticsearch import Elasticsearch

KINDS = ("posts", "articles")


def template_body(index_prefix: str = "posts", kind: str = "posts") -> dict[str, Any]:
    """The `kind` template for indices ``<index_prefix>-*``."""
    if kind not in KINDS:
        raise ValueError(f"template kind {kind!r} not in {KINDS}")
    body = json.loads(Path(__file__).with_name(f"{kind}_template.json").read_text())
    body.pop("_comment", None)
    body = copy.deepcopy(body)
    body["index_patterns"] = [f"{index_prefix}-*"]
    return body


def template_name(index_prefix: str = "posts") -> str:
    return index_prefix


def install_template(es: Elasticsearch, index_prefix: str = "posts",
                     kind: str = "posts") -> None:
    """Create or update the template; safe to call any number of times."""
    body = template_body(index_prefix, kind)
    es.indices.put_index_template(name=template_name(index_prefix), body=body)
    es.indices.put_mapping(index=f"{index_prefix}-*", body=body["template"]["mappings"],
                           allow_no_indices=True)


def mapping_properties(kind: str = "posts") -> dict[str, Any]:
    """Top-level fields of the mapping (documents may use only these)."""
    return template_body(kind, kind)["template"]["mappings"]["properties"]
