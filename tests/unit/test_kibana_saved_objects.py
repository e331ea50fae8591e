"""The shipped Kibana saved objects only use fields their index template maps (posts-* or
articles-*), with types Kibana can aggregate on, and every reference resolves inside the
file."""

import json
import re

import pytest

from services.settings import REPO_ROOT

SAVED = REPO_ROOT / "deploy" / "kibana" / "saved_objects.ndjson"
TEMPLATES = {kind: REPO_ROOT / "services" / "es" / f"{kind}_template.json"
             for kind in ("posts", "articles")}
AGGREGATABLE = {"keyword", "date", "integer", "long", "float", "boolean"}


def mapped_fields(props: dict, prefix: str = "") -> dict[str, str]:
    """Flatten a mapping into {"a.b": type}, including multi-fields."""
    out = {}
    for name, spec in props.items():
        path = prefix + name
        if "properties" in spec:
            out.update(mapped_fields(spec["properties"], path + "."))
        else:
            out[path] = spec.get("type", "object")
        for sub, subspec in spec.get("fields", {}).items():
            out[f"{path}.{sub}"] = subspec["type"]
    return out


def template_fields(kind: str) -> dict[str, str]:
    return mapped_fields(json.loads(TEMPLATES[kind].read_text())["template"]["mappings"]
                         ["properties"])


OBJECTS = [json.loads(line) for line in SAVED.read_text().splitlines() if line.strip()]


def fields_of(obj: dict) -> dict[str, str]:
    """The mapped fields of the index pattern (id "posts" or "articles") `obj` uses."""
    (ref,) = [r for r in obj["references"] if r["type"] == "index-pattern"]
    return template_fields(ref["id"])


@pytest.mark.parametrize("kind", list(TEMPLATES))
def test_index_patterns_match_their_template_and_use_a_date_time_field(kind):
    (pattern,) = [o for o in OBJECTS if o["type"] == "index-pattern" and o["id"] == kind]
    template = json.loads(TEMPLATES[kind].read_text())
    assert pattern["attributes"]["title"] in template["index_patterns"]
    assert template_fields(kind)[pattern["attributes"]["timeFieldName"]] == "date"


@pytest.mark.parametrize("obj", [o for o in OBJECTS if o["type"] == "visualization"],
                         ids=lambda o: o["id"])
def test_visualizations_aggregate_on_mapped_aggregatable_fields(obj):
    vis = json.loads(obj["attributes"]["visState"])
    for agg in vis["aggs"]:
        field = agg["params"].get("field")
        if field:
            assert fields_of(obj).get(field) in AGGREGATABLE, f"{field} is not aggregatable"


@pytest.mark.parametrize("obj", [o for o in OBJECTS if o["type"] == "search"],
                         ids=lambda o: o["id"])
def test_saved_searches_query_and_show_mapped_fields(obj):
    source = json.loads(obj["attributes"]["kibanaSavedObjectMeta"]["searchSourceJSON"])
    queried = re.findall(r"([\w.]+)\s*:", source["query"]["query"])
    for field in queried + obj["attributes"]["columns"]:
        assert field in fields_of(obj), f"{field} is not in the index template"


def test_every_reference_points_at_an_object_in_the_file():
    ids = {(o["type"], o["id"]) for o in OBJECTS}
    for obj in OBJECTS:
        for ref in obj["references"]:
            assert (ref["type"], ref["id"]) in ids, f"{obj['id']} -> {ref}"
