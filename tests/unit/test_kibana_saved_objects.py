"""The shipped Kibana saved objects only use fields the posts index template maps,
with types Kibana can aggregate on, and every reference resolves inside the file."""

import json
import re

import pytest

from deploy.settings import REPO_ROOT

SAVED = REPO_ROOT / "deploy" / "kibana" / "saved_objects.ndjson"
TEMPLATE = REPO_ROOT / "services" / "es" / "posts_template.json"
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


FIELDS = mapped_fields(json.loads(TEMPLATE.read_text())["template"]["mappings"]["properties"])
OBJECTS = [json.loads(line) for line in SAVED.read_text().splitlines() if line.strip()]


def test_index_pattern_matches_the_template_and_uses_a_date_time_field():
    (pattern,) = [o for o in OBJECTS if o["type"] == "index-pattern"]
    template = json.loads(TEMPLATE.read_text())
    assert pattern["attributes"]["title"] in template["index_patterns"]
    assert FIELDS[pattern["attributes"]["timeFieldName"]] == "date"


@pytest.mark.parametrize("obj", [o for o in OBJECTS if o["type"] == "visualization"],
                         ids=lambda o: o["id"])
def test_visualizations_aggregate_on_mapped_aggregatable_fields(obj):
    vis = json.loads(obj["attributes"]["visState"])
    for agg in vis["aggs"]:
        field = agg["params"].get("field")
        if field:
            assert FIELDS.get(field) in AGGREGATABLE, f"{field} is not aggregatable"


@pytest.mark.parametrize("obj", [o for o in OBJECTS if o["type"] == "search"],
                         ids=lambda o: o["id"])
def test_saved_searches_query_and_show_mapped_fields(obj):
    source = json.loads(obj["attributes"]["kibanaSavedObjectMeta"]["searchSourceJSON"])
    queried = re.findall(r"([\w.]+)\s*:", source["query"]["query"])
    for field in queried + obj["attributes"]["columns"]:
        assert field in FIELDS, f"{field} is not in the posts template"


def test_every_reference_points_at_an_object_in_the_file():
    ids = {(o["type"], o["id"]) for o in OBJECTS}
    for obj in OBJECTS:
        for ref in obj["references"]:
            assert (ref["type"], ref["id"]) in ids, f"{obj['id']} -> {ref}"
