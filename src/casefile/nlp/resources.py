"""The files shipped beside the code in `data/`: word lists, the tokenizer, the labelled examples
of document types. Word lists are read once per process."""

from __future__ import annotations

import re
from functools import cache
from importlib.resources import files
from importlib.resources.abc import Traversable

_PACKAGE = __name__.rpartition(".")[0]


def data_file(name: str) -> Traversable:
    return files(_PACKAGE).joinpath("data", name)


@cache
def word_list(name: str) -> tuple[str, ...]:
    """The entries of `data/<name>.txt`, in file order: one a line; blank lines and lines starting
    with `#` (the list's explanation) are skipped."""
    lines = data_file(f"{name}.txt").read_text(encoding="utf-8").splitlines()
    return tuple(line.strip() for line in lines if line.strip() and not line.startswith("#"))


def word_set(name: str) -> frozenset[str]:
    return frozenset(word_list(name))


def alternatives(name: str) -> str:
    """The list as a regular-expression alternation of literal words, in file order."""
    return "|".join(re.escape(word) for word in word_list(name))
