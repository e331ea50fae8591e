"""The posts index template on real Elasticsearch: upgrades reach indices that already exist."""

from __future__ import annotations

import copy
import uuid

import pytest

from deploy.testing import ElasticsearchInfo
from services.es.bulk import make_client
from services.es.template import install_template, template_body

pytestmark = pytest.mark.integration


def test_a_field_added_by_a_new_release_reaches_this_months_existing_index(
    elasticsearch: ElasticsearchInfo,
) -> None:
    """An index created under an older (strict) template would reject every new document
    that carries the new field; installing the template adds the field to it."""
    es = make_client(elasticsearch.url)
    prefix = f"it-tpl-{uuid.uuid4().hex[:8]}"
    old = copy.deepcopy(template_body(prefix)["template"])
    del old["mappings"]["properties"]["hashtag_status"]
    es.indices.create(index=f"{prefix}-2020.01", body=old)
    try:
        install_template(es, prefix)
        mapping = es.indices.get_mapping(index=f"{prefix}-2020.01")
        props = mapping[f"{prefix}-2020.01"]["mappings"]["properties"]
        assert props["hashtag_status"] == {"type": "keyword"}
        es.index(index=f"{prefix}-2020.01", id="p1",
                 body={"id": "p1", "text": "hi", "hashtag_status": "ok"}, refresh=True)
        assert es.count(index=f"{prefix}-2020.01")["count"] == 1
    finally:
        es.indices.delete(index=f"{prefix}-*", ignore=[404])
        es.indices.delete_index_template(name=prefix, ignore=[404])
        es.close()
