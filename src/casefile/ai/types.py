"""The shapes that pass between the AI pieces: what processing a document yields, and the
reasons it may stop. Plain data, picklable: processing runs in a separate process."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

import numpy as np
import numpy.typing as npt

EMBEDDING_DIM = 384

Vectors = npt.NDArray[np.float32]  # shape (n, EMBEDDING_DIM), each row L2-normalised


@dataclass(frozen=True)
class Page:
    number: int  # from 1
    text: str


@dataclass(frozen=True)
class Chunk:
    """A passage for search and answers. `start`/`end` are character offsets in its page's text,
    so `pages[page - 1].text[start:end] == text`."""

    index: int
    page: int
    start: int
    end: int
    text: str


@dataclass(frozen=True)
class ProcessedDocument:
    ai: dict[str, Any]  # stored as the document's `ai` (JSON-ready)
    chunks: list[Chunk]
    vectors: Vectors  # one row per chunk
    pages: list[Page] = field(default_factory=list)


class NoExtractableText(Exception):
    """The file has no text layer and no OCR is available: the document is `skipped`."""


class ProcessingFailed(Exception):
    """The file could not be processed (damaged, encrypted, …): the message is the reason given
    in `ai.processing_failed`, written for a user, never a stack trace."""
