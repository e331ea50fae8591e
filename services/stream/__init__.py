"""Faust worker of the posts flow: ``python -m services.stream worker -l info``.

Agents, one concern each: ``tag_posts`` (posts.raw -> Triton -> posts.tagged) and
``index_posts`` (posts.tagged -> Elasticsearch). See ``app.py`` for the Faust settings
that cover broker outages, slow handlers and rebalances.
"""
