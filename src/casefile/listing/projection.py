"""`fields=`: which fields of each returned object to keep, with one level of nesting
(`fields=id,title,assignees{id,name}`, docs/api-conventions.md#lists).

A resource's projectable fields come from its response model (`projectable`): a field whose
value is an object, or a list of objects, of a known model takes sub-field names; an object with
open keys (a case's `custom_fields`) takes any key, which its owner checks (the keys are data, not
schema). An unknown name, at either level, is a VALIDATION_ERROR naming it."""

from __future__ import annotations

import re
import types
from collections.abc import Mapping
from typing import Any, Literal, Union, get_args, get_origin

from pydantic import BaseModel

from casefile.errors import ValidationFailed

# What a field takes after its name: nothing (None), the names of its model's fields, or any
# key ("keys": an object whose keys are data).
Nested = frozenset[str] | Literal["keys"] | None
Projectable = Mapping[str, Nested]
# What was asked: each top-level name, in order, with the sub-fields asked of it (None: whole).
Projection = dict[str, tuple[str, ...] | None]

MAX_FIELDS_LENGTH = 2000
_NAME = r"[A-Za-z_][A-Za-z0-9_]*"
_KEY = r"[A-Za-z_][A-Za-z0-9_.-]*"
# One item of the list: a name, optionally followed by `{sub,sub}` (no braces inside).
_ITEM = re.compile(rf"\s*({_NAME})\s*(?:\{{([^{{}}]*)\}})?\s*(?:,|$)")
_SHAPE = "Write fields as name or name{sub,sub} (one level of nesting), comma-separated"


def _model_of(annotation: Any) -> type[BaseModel] | None:
    """`X`, `X | None`, `list[X]`, `list[X] | None` with X a model → X."""
    if get_origin(annotation) in (Union, types.UnionType):
        members = [a for a in get_args(annotation) if a is not type(None)]
        return _model_of(members[0]) if len(members) == 1 else None
    if get_origin(annotation) is list:
        (item,) = get_args(annotation) or (None,)
        return _model_of(item)
    if isinstance(annotation, type) and issubclass(annotation, BaseModel):
        return annotation
    return None


def _is_open_object(annotation: Any) -> bool:
    if get_origin(annotation) in (Union, types.UnionType):
        return any(_is_open_object(a) for a in get_args(annotation) if a is not type(None))
    return annotation is dict or get_origin(annotation) is dict


def projectable(model: type[BaseModel]) -> dict[str, Nested]:
    """The fields of `model` that `fields=` may name, and what each takes nested."""
    names: dict[str, Nested] = {}
    for name, info in model.model_fields.items():
        nested = _model_of(info.annotation)
        if nested is not None:
            names[name] = frozenset(nested.model_fields)
        elif _is_open_object(info.annotation):
            names[name] = "keys"
        else:
            names[name] = None
    return names


def parse_fields(value: str | None, allowed: Projectable) -> Projection | None:
    """`fields=id,title,assignees{id,name}` → {"id": None, "title": None, "assignees": ("id",
    "name")}. Unknown names (`assignees.nope` for a sub-field) are a validation error."""
    if value is None:
        return None
    if len(value) > MAX_FIELDS_LENGTH:
        raise ValidationFailed.on("fields", f"At most {MAX_FIELDS_LENGTH} characters")
    asked: Projection = {}
    unknown: list[str] = []
    position = 0
    while position < len(value):
        match = _ITEM.match(value, position)
        if match is None or match.end() == position:
            if value[position:].strip(" ,") == "":
                break
            raise ValidationFailed.on("fields", f"{_SHAPE}; cannot read {value[position:][:40]!r}")
        position = match.end()
        name, inner = match.group(1), match.group(2)
        if name not in allowed:
            unknown.append(name)
            continue
        if inner is None:
            asked[name] = None
            continue
        takes = allowed[name]
        subs = [s.strip() for s in inner.split(",") if s.strip()]
        if takes is None:
            raise ValidationFailed.on("fields", f"{name} has no sub-fields to choose from")
        if not subs:
            raise ValidationFailed.on("fields", f"Name at least one field inside {name}{{}}")
        for sub in subs:
            known = re.fullmatch(_KEY, sub) is not None if takes == "keys" else sub in takes
            if not known:
                unknown.append(f"{name}.{sub}")
        asked[name] = tuple(dict.fromkeys(subs))
    if unknown:
        allowed_names = ", ".join(sorted(allowed))
        raise ValidationFailed.on(
            "fields", f"Unknown field(s): {', '.join(unknown)}. Allowed: {allowed_names}"
        )
    if not asked:
        raise ValidationFailed.on("fields", "Name at least one field")
    return asked


def fields_pattern(allowed: Projectable) -> str:
    """The regular expression, published in OpenAPI, of the `fields=` values that `parse_fields`
    accepts for `allowed`: known names, comma-separated, each with known sub-fields in braces where
    it takes them (the parser also allows spaces; the published form need not)."""

    def alternatives(names: Any) -> str:
        return "|".join(re.escape(name) for name in sorted(names))

    items = []
    for name, takes in sorted(allowed.items()):
        if takes is None:
            items.append(re.escape(name))
            continue
        sub = _KEY if takes == "keys" else f"(?:{alternatives(takes)})"
        items.append(rf"{re.escape(name)}(?:\{{{sub}(?:,{sub})*\}})?")
    item = f"(?:{'|'.join(items)})"
    return f"^{item}(?:,{item})*$"


def _pick(value: Any, keys: tuple[str, ...]) -> Any:
    if isinstance(value, list):
        return [_pick(item, keys) for item in value]
    if isinstance(value, dict):
        return {key: value.get(key) for key in keys}
    return value  # null stays null


def project(item: dict[str, Any], fields: Projection | None) -> dict[str, Any]:
    """`item` cut down to the fields asked (and, for a nested one, the sub-fields asked of each
    object in it)."""
    if fields is None:
        return item
    return {name: item[name] if keys is None else _pick(item[name], keys) for name, keys in fields.items()}
