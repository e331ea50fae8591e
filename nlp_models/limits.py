"""Size limits the served models enforce themselves (standard library only): what a
request may hold and what a model reads. The stream's and the API's own limits (Kafka,
Elasticsearch, dead letters, fields) are in services/limits.py.
"""

from __future__ import annotations

#: Longer post texts are cut to this many code points (``TaggedPost.truncated``).
MAX_POST_CHARS = 10_000
#: Longer article bodies are cut to this many code points (``EnrichedArticle.truncated``);
#: the models read far less (their max_source tokens) anyway.
MAX_ARTICLE_CHARS = 100_000
#: An unknown article token longer than this is not copied into headlines (it stays [UNK]
#: for the decoder): no headline word is that long, and copying a 100,000-emoji "token" made
#: every beam step re-scan it, a request that ran past the API's 60 s limit.
MAX_COPIED_TOKEN_CHARS = 50
#: Headline candidates per article and generator (the models' CANDIDATES input; the beam is
#: widened to the largest count in a batch).
MAX_CANDIDATES = 5
