from . import messages_pb2 as _messages_pb2
from google.protobuf.internal import containers as _containers
from google.protobuf.internal import enum_type_wrapper as _enum_type_wrapper
from google.protobuf import descriptor as _descriptor
from google.protobuf import message as _message
from collections.abc import Iterable as _Iterable, Mapping as _Mapping
from typing import ClassVar as _ClassVar, Optional as _Optional, Union as _Union

DESCRIPTOR: _descriptor.FileDescriptor

class GenerationOrder(int, metaclass=_enum_type_wrapper.EnumTypeWrapper):
    __slots__ = ()
    GENERATION_ORDER_UNSPECIFIED: _ClassVar[GenerationOrder]
    SEQ_B: _ClassVar[GenerationOrder]
    SEQ_F: _ClassVar[GenerationOrder]
    TOK_B: _ClassVar[GenerationOrder]
    TOK_F: _ClassVar[GenerationOrder]

class CandidateKind(int, metaclass=_enum_type_wrapper.EnumTypeWrapper):
    __slots__ = ()
    CANDIDATE_KIND_UNSPECIFIED: _ClassVar[CandidateKind]
    FULL: _ClassVar[CandidateKind]
    CONSTRAINED: _ClassVar[CandidateKind]
GENERATION_ORDER_UNSPECIFIED: GenerationOrder
SEQ_B: GenerationOrder
SEQ_F: GenerationOrder
TOK_B: GenerationOrder
TOK_F: GenerationOrder
CANDIDATE_KIND_UNSPECIFIED: CandidateKind
FULL: CandidateKind
CONSTRAINED: CandidateKind

class SuggestRequest(_message.Message):
    __slots__ = ("article", "language", "required_phrases", "num_candidates", "order", "max_length", "skip_full")
    ARTICLE_FIELD_NUMBER: _ClassVar[int]
    LANGUAGE_FIELD_NUMBER: _ClassVar[int]
    REQUIRED_PHRASES_FIELD_NUMBER: _ClassVar[int]
    NUM_CANDIDATES_FIELD_NUMBER: _ClassVar[int]
    ORDER_FIELD_NUMBER: _ClassVar[int]
    MAX_LENGTH_FIELD_NUMBER: _ClassVar[int]
    SKIP_FULL_FIELD_NUMBER: _ClassVar[int]
    article: str
    language: str
    required_phrases: _containers.RepeatedScalarFieldContainer[str]
    num_candidates: int
    order: GenerationOrder
    max_length: int
    skip_full: bool
    def __init__(self, article: _Optional[str] = ..., language: _Optional[str] = ..., required_phrases: _Optional[_Iterable[str]] = ..., num_candidates: _Optional[int] = ..., order: _Optional[_Union[GenerationOrder, str]] = ..., max_length: _Optional[int] = ..., skip_full: _Optional[bool] = ...) -> None: ...

class HeadlineSuggestion(_message.Message):
    __slots__ = ("text", "score", "kind", "phrase", "model", "order")
    TEXT_FIELD_NUMBER: _ClassVar[int]
    SCORE_FIELD_NUMBER: _ClassVar[int]
    KIND_FIELD_NUMBER: _ClassVar[int]
    PHRASE_FIELD_NUMBER: _ClassVar[int]
    MODEL_FIELD_NUMBER: _ClassVar[int]
    ORDER_FIELD_NUMBER: _ClassVar[int]
    text: str
    score: float
    kind: CandidateKind
    phrase: str
    model: _messages_pb2.ModelRef
    order: str
    def __init__(self, text: _Optional[str] = ..., score: _Optional[float] = ..., kind: _Optional[_Union[CandidateKind, str]] = ..., phrase: _Optional[str] = ..., model: _Optional[_Union[_messages_pb2.ModelRef, _Mapping]] = ..., order: _Optional[str] = ...) -> None: ...

class SuggestResponse(_message.Message):
    __slots__ = ("candidates", "language", "truncated", "request_id")
    CANDIDATES_FIELD_NUMBER: _ClassVar[int]
    LANGUAGE_FIELD_NUMBER: _ClassVar[int]
    TRUNCATED_FIELD_NUMBER: _ClassVar[int]
    REQUEST_ID_FIELD_NUMBER: _ClassVar[int]
    candidates: _containers.RepeatedCompositeFieldContainer[HeadlineSuggestion]
    language: str
    truncated: bool
    request_id: str
    def __init__(self, candidates: _Optional[_Iterable[_Union[HeadlineSuggestion, _Mapping]]] = ..., language: _Optional[str] = ..., truncated: _Optional[bool] = ..., request_id: _Optional[str] = ...) -> None: ...
