"""The shapes text-facts come in: pages, passages, embedding vectors, and the reasons a file may
yield no text. Plain data, picklable: the pipeline runs in a separate process."""

from __future__ import annotations

from dataclasses import dataclass
from typing import TYPE_CHECKING, TypeAlias

if TYPE_CHECKING:  # numpy is in the `casefile[ai]` extra: a process without it imports this module too
    import numpy as np
    import numpy.typing as npt

EMBEDDING_DIM = 384

Vectors: TypeAlias = "npt.NDArray[np.float32]"  # shape (n, EMBEDDING_DIM), each row L2-normalised


@dataclass(frozen=True)
class Page:
    number: int  # from 1
    text: str


@dataclass(frozen=True)
class TextPassage:
    """A passage for search and answers. `start`/`end` are character offsets in its page's text,
    so `pages[page - 1].text[start:end] == text`."""

    index: int
    page: int
    start: int
    end: int
    text: str


class NoExtractableText(Exception):
    """The file has no text layer and no OCR is available: the document is `skipped`."""


class ProcessingFailed(Exception):
    """The file could not be processed (damaged, encrypted, …): the message is the reason given
    in `ai.processing_failed`, written for a user, never a stack trace."""
