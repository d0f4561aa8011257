"""Request and response shapes of search and ask (for validation and the OpenAPI document)."""

from __future__ import annotations

from typing import Literal

from pydantic import BaseModel, Field

from casefile.schemas import InModel

MAX_QUERY_LENGTH = 500


class Snippet(BaseModel):
    """The best passage (documents) or case field around the query's words: HTML-escaped text
    with the words in `<mark>`; `start`/`end` are the shown window's character offsets in the
    page's text (documents) or in the field (cases)."""

    text: str
    page: int | None = Field(default=None, description="Documents: the page of the passage")
    field: str | None = Field(default=None, description="Cases: the field the snippet comes from")
    start: int | None
    end: int | None


class SearchHit(BaseModel):
    kind: Literal["case", "document"]
    id: str
    score: float = Field(description="Reciprocal rank fusion score; higher is better")
    title: str
    case_id: str | None = Field(default=None, description="Documents: the case they belong to")
    case_number: str | None = Field(default=None, description="Cases: the case number")
    version: int | None = Field(
        default=None, description="Documents: the version the snippet's passage was taken from"
    )
    snippet: Snippet
    matched: list[Literal["text", "semantic"]]


class AskRequest(InModel):
    question: str = Field(min_length=3, max_length=1000)


class AnswerSentence(BaseModel):
    text: str
    document_id: str
    version: int = Field(description="The document version the sentence was taken from")
    page: int
    start: int
    end: int


class Answer(BaseModel):
    text: str | None
    sentences: list[AnswerSentence]


class AskPassage(BaseModel):
    document_id: str
    version: int = Field(description="The document version the passage was taken from")
    document_title: str
    page: int
    start: int
    end: int
    text: str
    score: float


class AskOut(BaseModel):
    question: str
    answer: Answer
    passages: list[AskPassage]
    grounded: bool
    message: str | None = Field(description="Why there is no answer, when `grounded` is false")
