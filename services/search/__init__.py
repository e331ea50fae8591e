"""Search CLI over the posts indices: ``python -m services.search [QUERY] [filters]``."""
