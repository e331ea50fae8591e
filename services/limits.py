"""Every size limit of the services, in one place: the stream, the headline API, the
checks where records enter, Kafka, Elasticsearch and dead letters (standard library only).
The limits the served models enforce themselves are in nlp_models/limits.py.
"""

from __future__ import annotations

#: Hard limit on a raw Kafka message; the broker allows 2 MiB (message.max.bytes).
MAX_RAW_BYTES = 2 * 1024 * 1024
#: Elasticsearch refuses ``_id`` values longer than 512 bytes.
MAX_ID_BYTES = 512
#: Required phrases served per article in the stream, and characters per phrase. The gRPC
#: API allows fewer per request: each phrase is one more generation within the caller's
#: deadline, while the stream has no caller waiting.
MAX_PHRASES = 8
MAX_PHRASES_PER_REQUEST = 5
MAX_PHRASE_CHARS = 100
#: An article with more required phrases than this is rejected, not served in part.
MAX_REQUIRED_PHRASES = 64
MAX_TITLE_CHARS = 1000
#: A dead letter keeps at most this much of the original value and key, so that the
#: envelope of a message near the broker's 2 MiB limit still fits on the DLQ topic.
MAX_DLQ_VALUE_BYTES = 1024 * 1024
MAX_DLQ_KEY_BYTES = MAX_ID_BYTES
#: Reasons in dead letters and logs are cut to this many characters.
MAX_REASON_CHARS = 2000
#: Kafka keys are post/article ids: the same byte limit.
MAX_KEY_BYTES = MAX_ID_BYTES
#: Free-form fields of a post, checked where the post enters (``services.fields``).
MAX_ATTRIBUTES = 64
MAX_ATTRIBUTE_KEY_CHARS = 64
MAX_ATTRIBUTE_VALUE_CHARS = 1024  # the keyword mapping's ignore_above
MAX_USER_HASHTAGS = 64
MAX_HASHTAG_CHARS = 280
MAX_NAME_CHARS = 256  # author, source
MAX_LANG_CHARS = 35  # the longest BCP-47 tags in practice
#: Timestamps (created_at, published_at) must lie between the Unix epoch and this long
#: after the worker's clock: later ones are a producer's bug, and each would open a
#: monthly index of its own.
MAX_CLOCK_SKEW_DAYS = 1
#: Dead-letter topics keep their records this long (an operator's time to look and replay).
DLQ_RETENTION_DAYS = 14
