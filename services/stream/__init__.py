"""Faust worker of the pipeline: ``python -m services.stream worker -l info``.

Agents, one concern each: ``tag_posts`` (posts.raw -> Triton -> posts.tagged),
``index_posts`` (posts.tagged -> Elasticsearch), ``headline_articles`` (articles.raw ->
Triton -> articles.headlines) and ``index_articles`` (articles.headlines ->
Elasticsearch). See ``app.py`` for the Faust settings that cover broker outages, slow
handlers and rebalances.
"""
