"""Elasticsearch side of the posts flow: document shape, index template, bulk indexing."""
