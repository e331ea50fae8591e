import datetime

from google.protobuf import timestamp_pb2 as _timestamp_pb2
from google.protobuf.internal import containers as _containers
from google.protobuf.internal import enum_type_wrapper as _enum_type_wrapper
from google.protobuf import descriptor as _descriptor
from google.protobuf import message as _message
from collections.abc import Iterable as _Iterable, Mapping as _Mapping
from typing import ClassVar as _ClassVar, Optional as _Optional, Union as _Union

DESCRIPTOR: _descriptor.FileDescriptor

class Platform(int, metaclass=_enum_type_wrapper.EnumTypeWrapper):
    __slots__ = ()
    PLATFORM_UNSPECIFIED: _ClassVar[Platform]
    TWITTER: _ClassVar[Platform]
    WEIBO: _ClassVar[Platform]

class HeadlineKind(int, metaclass=_enum_type_wrapper.EnumTypeWrapper):
    __slots__ = ()
    HEADLINE_KIND_UNSPECIFIED: _ClassVar[HeadlineKind]
    FULL: _ClassVar[HeadlineKind]
    CONSTRAINED: _ClassVar[HeadlineKind]
PLATFORM_UNSPECIFIED: Platform
TWITTER: Platform
WEIBO: Platform
HEADLINE_KIND_UNSPECIFIED: HeadlineKind
FULL: HeadlineKind
CONSTRAINED: HeadlineKind

class Post(_message.Message):
    __slots__ = ("id", "platform", "lang", "text", "author", "created_at", "attributes", "user_hashtags")
    class AttributesEntry(_message.Message):
        __slots__ = ("key", "value")
        KEY_FIELD_NUMBER: _ClassVar[int]
        VALUE_FIELD_NUMBER: _ClassVar[int]
        key: str
        value: str
        def __init__(self, key: _Optional[str] = ..., value: _Optional[str] = ...) -> None: ...
    ID_FIELD_NUMBER: _ClassVar[int]
    PLATFORM_FIELD_NUMBER: _ClassVar[int]
    LANG_FIELD_NUMBER: _ClassVar[int]
    TEXT_FIELD_NUMBER: _ClassVar[int]
    AUTHOR_FIELD_NUMBER: _ClassVar[int]
    CREATED_AT_FIELD_NUMBER: _ClassVar[int]
    ATTRIBUTES_FIELD_NUMBER: _ClassVar[int]
    USER_HASHTAGS_FIELD_NUMBER: _ClassVar[int]
    id: str
    platform: Platform
    lang: str
    text: str
    author: str
    created_at: _timestamp_pb2.Timestamp
    attributes: _containers.ScalarMap[str, str]
    user_hashtags: _containers.RepeatedScalarFieldContainer[str]
    def __init__(self, id: _Optional[str] = ..., platform: _Optional[_Union[Platform, str]] = ..., lang: _Optional[str] = ..., text: _Optional[str] = ..., author: _Optional[str] = ..., created_at: _Optional[_Union[datetime.datetime, _timestamp_pb2.Timestamp, _Mapping]] = ..., attributes: _Optional[_Mapping[str, str]] = ..., user_hashtags: _Optional[_Iterable[str]] = ...) -> None: ...

class Token(_message.Message):
    __slots__ = ("text", "start", "end", "pos_ptb", "pos_ark")
    TEXT_FIELD_NUMBER: _ClassVar[int]
    START_FIELD_NUMBER: _ClassVar[int]
    END_FIELD_NUMBER: _ClassVar[int]
    POS_PTB_FIELD_NUMBER: _ClassVar[int]
    POS_ARK_FIELD_NUMBER: _ClassVar[int]
    text: str
    start: int
    end: int
    pos_ptb: str
    pos_ark: str
    def __init__(self, text: _Optional[str] = ..., start: _Optional[int] = ..., end: _Optional[int] = ..., pos_ptb: _Optional[str] = ..., pos_ark: _Optional[str] = ...) -> None: ...

class Hashtag(_message.Message):
    __slots__ = ("text", "score", "source")
    TEXT_FIELD_NUMBER: _ClassVar[int]
    SCORE_FIELD_NUMBER: _ClassVar[int]
    SOURCE_FIELD_NUMBER: _ClassVar[int]
    text: str
    score: float
    source: str
    def __init__(self, text: _Optional[str] = ..., score: _Optional[float] = ..., source: _Optional[str] = ...) -> None: ...

class ModelRef(_message.Message):
    __slots__ = ("name", "version")
    NAME_FIELD_NUMBER: _ClassVar[int]
    VERSION_FIELD_NUMBER: _ClassVar[int]
    name: str
    version: str
    def __init__(self, name: _Optional[str] = ..., version: _Optional[str] = ...) -> None: ...

class TaggedPost(_message.Message):
    __slots__ = ("post", "tokens", "pos_model", "hashtags", "hashtag_model", "processed_at", "truncated", "original_length", "hashtag_status")
    POST_FIELD_NUMBER: _ClassVar[int]
    TOKENS_FIELD_NUMBER: _ClassVar[int]
    POS_MODEL_FIELD_NUMBER: _ClassVar[int]
    HASHTAGS_FIELD_NUMBER: _ClassVar[int]
    HASHTAG_MODEL_FIELD_NUMBER: _ClassVar[int]
    PROCESSED_AT_FIELD_NUMBER: _ClassVar[int]
    TRUNCATED_FIELD_NUMBER: _ClassVar[int]
    ORIGINAL_LENGTH_FIELD_NUMBER: _ClassVar[int]
    HASHTAG_STATUS_FIELD_NUMBER: _ClassVar[int]
    post: Post
    tokens: _containers.RepeatedCompositeFieldContainer[Token]
    pos_model: ModelRef
    hashtags: _containers.RepeatedCompositeFieldContainer[Hashtag]
    hashtag_model: ModelRef
    processed_at: _timestamp_pb2.Timestamp
    truncated: bool
    original_length: int
    hashtag_status: str
    def __init__(self, post: _Optional[_Union[Post, _Mapping]] = ..., tokens: _Optional[_Iterable[_Union[Token, _Mapping]]] = ..., pos_model: _Optional[_Union[ModelRef, _Mapping]] = ..., hashtags: _Optional[_Iterable[_Union[Hashtag, _Mapping]]] = ..., hashtag_model: _Optional[_Union[ModelRef, _Mapping]] = ..., processed_at: _Optional[_Union[datetime.datetime, _timestamp_pb2.Timestamp, _Mapping]] = ..., truncated: _Optional[bool] = ..., original_length: _Optional[int] = ..., hashtag_status: _Optional[str] = ...) -> None: ...

class Article(_message.Message):
    __slots__ = ("id", "source", "lang", "body", "title", "published_at", "required_phrases")
    ID_FIELD_NUMBER: _ClassVar[int]
    SOURCE_FIELD_NUMBER: _ClassVar[int]
    LANG_FIELD_NUMBER: _ClassVar[int]
    BODY_FIELD_NUMBER: _ClassVar[int]
    TITLE_FIELD_NUMBER: _ClassVar[int]
    PUBLISHED_AT_FIELD_NUMBER: _ClassVar[int]
    REQUIRED_PHRASES_FIELD_NUMBER: _ClassVar[int]
    id: str
    source: str
    lang: str
    body: str
    title: str
    published_at: _timestamp_pb2.Timestamp
    required_phrases: _containers.RepeatedScalarFieldContainer[str]
    def __init__(self, id: _Optional[str] = ..., source: _Optional[str] = ..., lang: _Optional[str] = ..., body: _Optional[str] = ..., title: _Optional[str] = ..., published_at: _Optional[_Union[datetime.datetime, _timestamp_pb2.Timestamp, _Mapping]] = ..., required_phrases: _Optional[_Iterable[str]] = ...) -> None: ...

class HeadlineCandidate(_message.Message):
    __slots__ = ("text", "score", "kind", "phrase", "model")
    TEXT_FIELD_NUMBER: _ClassVar[int]
    SCORE_FIELD_NUMBER: _ClassVar[int]
    KIND_FIELD_NUMBER: _ClassVar[int]
    PHRASE_FIELD_NUMBER: _ClassVar[int]
    MODEL_FIELD_NUMBER: _ClassVar[int]
    text: str
    score: float
    kind: HeadlineKind
    phrase: str
    model: ModelRef
    def __init__(self, text: _Optional[str] = ..., score: _Optional[float] = ..., kind: _Optional[_Union[HeadlineKind, str]] = ..., phrase: _Optional[str] = ..., model: _Optional[_Union[ModelRef, _Mapping]] = ...) -> None: ...

class GenerationIssue(_message.Message):
    __slots__ = ("kind", "phrase", "status", "message")
    KIND_FIELD_NUMBER: _ClassVar[int]
    PHRASE_FIELD_NUMBER: _ClassVar[int]
    STATUS_FIELD_NUMBER: _ClassVar[int]
    MESSAGE_FIELD_NUMBER: _ClassVar[int]
    kind: HeadlineKind
    phrase: str
    status: str
    message: str
    def __init__(self, kind: _Optional[_Union[HeadlineKind, str]] = ..., phrase: _Optional[str] = ..., status: _Optional[str] = ..., message: _Optional[str] = ...) -> None: ...

class EnrichedArticle(_message.Message):
    __slots__ = ("article", "candidates", "processed_at", "truncated", "issues")
    ARTICLE_FIELD_NUMBER: _ClassVar[int]
    CANDIDATES_FIELD_NUMBER: _ClassVar[int]
    PROCESSED_AT_FIELD_NUMBER: _ClassVar[int]
    TRUNCATED_FIELD_NUMBER: _ClassVar[int]
    ISSUES_FIELD_NUMBER: _ClassVar[int]
    article: Article
    candidates: _containers.RepeatedCompositeFieldContainer[HeadlineCandidate]
    processed_at: _timestamp_pb2.Timestamp
    truncated: bool
    issues: _containers.RepeatedCompositeFieldContainer[GenerationIssue]
    def __init__(self, article: _Optional[_Union[Article, _Mapping]] = ..., candidates: _Optional[_Iterable[_Union[HeadlineCandidate, _Mapping]]] = ..., processed_at: _Optional[_Union[datetime.datetime, _timestamp_pb2.Timestamp, _Mapping]] = ..., truncated: _Optional[bool] = ..., issues: _Optional[_Iterable[_Union[GenerationIssue, _Mapping]]] = ...) -> None: ...

class DeadLetter(_message.Message):
    __slots__ = ("original_value", "original_key", "reason", "source_topic", "partition", "offset", "failed_at", "error_code", "original_value_size", "original_key_size", "original_value_sha256")
    ORIGINAL_VALUE_FIELD_NUMBER: _ClassVar[int]
    ORIGINAL_KEY_FIELD_NUMBER: _ClassVar[int]
    REASON_FIELD_NUMBER: _ClassVar[int]
    SOURCE_TOPIC_FIELD_NUMBER: _ClassVar[int]
    PARTITION_FIELD_NUMBER: _ClassVar[int]
    OFFSET_FIELD_NUMBER: _ClassVar[int]
    FAILED_AT_FIELD_NUMBER: _ClassVar[int]
    ERROR_CODE_FIELD_NUMBER: _ClassVar[int]
    ORIGINAL_VALUE_SIZE_FIELD_NUMBER: _ClassVar[int]
    ORIGINAL_KEY_SIZE_FIELD_NUMBER: _ClassVar[int]
    ORIGINAL_VALUE_SHA256_FIELD_NUMBER: _ClassVar[int]
    original_value: bytes
    original_key: bytes
    reason: str
    source_topic: str
    partition: int
    offset: int
    failed_at: _timestamp_pb2.Timestamp
    error_code: str
    original_value_size: int
    original_key_size: int
    original_value_sha256: str
    def __init__(self, original_value: _Optional[bytes] = ..., original_key: _Optional[bytes] = ..., reason: _Optional[str] = ..., source_topic: _Optional[str] = ..., partition: _Optional[int] = ..., offset: _Optional[int] = ..., failed_at: _Optional[_Union[datetime.datetime, _timestamp_pb2.Timestamp, _Mapping]] = ..., error_code: _Optional[str] = ..., original_value_size: _Optional[int] = ..., original_key_size: _Optional[int] = ..., original_value_sha256: _Optional[str] = ...) -> None: ...
