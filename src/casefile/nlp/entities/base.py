"""Entities found in a text: one per normalised value, with every place it occurs."""

from __future__ import annotations

import re
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

from ..types import Page

Spans = list[tuple[int, int]]  # (start, end) offsets in one page's text
SpansByPage = dict[int, Spans]


@dataclass
class Entity:
    key: str
    text: str
    value: Any = None
    occurrences: list[tuple[int, int, int]] = field(default_factory=list)
    extra: dict[str, Any] = field(default_factory=dict)

    def as_dict(self) -> dict[str, Any]:
        item: dict[str, Any] = {"text": self.text}
        if self.value is not None:
            item["value"] = self.value
        item.update(self.extra)
        item["occurrences"] = [{"page": p, "start": s, "end": e} for p, s, e in sorted(set(self.occurrences))]
        return item


class EntitySet:
    """Entities of one category, deduplicated by key, in order of first occurrence."""

    def __init__(self) -> None:
        self.items: dict[str, Entity] = {}

    def add(self, key: str, text: str, page: int, start: int, end: int, value: Any = None) -> Entity:  # noqa: PLR0917
        entity = self.items.get(key)
        if entity is None:
            entity = self.items[key] = Entity(key, text, value)
        entity.occurrences.append((page, start, end))
        return entity

    def as_list(self) -> list[dict[str, Any]]:
        ordered = sorted(self.items.values(), key=lambda e: min(e.occurrences))
        return [e.as_dict() for e in ordered]


def overlaps(spans: Spans, start: int, end: int) -> bool:
    return any(start < e and s < end for s, e in spans)


def find_by_patterns(
    pages: list[Page],
    patterns: list[re.Pattern[str]],
    read: Callable[[re.Match[str]], tuple[str, Any] | None],
) -> list[dict[str, Any]]:
    """Entities matched by `patterns`, tried in order of preference: `read` gives a match's
    (key, value), or None when the match is no entity after all (an impossible date); a match
    overlapping one already taken on its page is skipped."""
    found = EntitySet()
    for page in pages:
        taken: Spans = []
        for pattern in patterns:
            for match in pattern.finditer(page.text):
                if overlaps(taken, match.start(), match.end()):
                    continue
                entry = read(match)
                if entry is None:
                    continue
                taken.append(match.span())
                key, value = entry
                found.add(key, match.group(0), page.number, match.start(), match.end(), value)
    return found.as_list()
