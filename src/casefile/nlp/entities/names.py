"""People and organisations: organisations by their legal form or body suffix
(organizations.py), people by the places names stand in legal writing (people.py), both completed
by a trained model checked by rules (model_names.py)."""

from __future__ import annotations

import re
from typing import Any

from ..types import Page
from .base import EntitySet, SpansByPage
from .model_names import model_names
from .name_rules import ORG_HEAD_WORDS, Vocabulary, org_key, person_key_text
from .organizations import find_organizations
from .people import find_people, person_mentions

__all__ = ["find_names", "org_key"]


def _add_more_occurrences(pages: list[Page], found: EntitySet) -> None:
    """Every other place the exact name appears, so search can highlight them all."""
    for entity in found.items.values():
        pattern = re.compile(rf"(?<![\w]){re.escape(entity.text)}(?![\w])")
        for page in pages:
            for match in pattern.finditer(page.text):
                entity.occurrences.append((page.number, match.start(), match.end()))


def find_names(pages: list[Page], excluded: SpansByPage) -> tuple[list[dict[str, Any]], list[dict[str, Any]]]:
    """(people, organisations), leaving out names inside the `excluded` spans (cited cases)."""
    model = model_names(pages, excluded)
    # The model sometimes calls a person an organisation ("Edward Thornbury" in a memo heading): a
    # name the person rules or the model elsewhere place as a person is one.
    person_keys = {person_key_text(m[0]) for m in [*person_mentions(pages, excluded), *model.people]}
    model.organizations = [
        m
        for m in model.organizations
        if m[0].split()[-1] in ORG_HEAD_WORDS or person_key_text(m[0]) not in person_keys
    ]
    organizations = find_organizations(pages, excluded, model, Vocabulary.of(pages))
    people = find_people(pages, excluded, set(organizations.items), model)
    _add_more_occurrences(pages, people)
    _add_more_occurrences(pages, organizations)
    return people.as_list(), organizations.as_list()
