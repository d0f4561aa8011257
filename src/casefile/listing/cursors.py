"""The cursor of a list's next page: opaque to callers, it names the sort, order and scope (the
filters and search asked) it belongs to, the next page's number, and the last row's sort value
(typed, so it binds as the column's type) and id. A cursor is only taken back by the same list."""

from __future__ import annotations

import base64
import binascii
import hashlib
import json
from datetime import date, datetime
from typing import Any

from sqlalchemy import ColumnElement
from sqlalchemy.orm import InstrumentedAttribute

from casefile.errors import ValidationFailed
from casefile.listing.spec import MAX_PAGE, After, ListQuery, ListSpec


def _python_type(column: ColumnElement[Any] | InstrumentedAttribute[Any]) -> type | None:
    try:
        expected: type = column.type.python_type
    except NotImplementedError:
        return None
    return float | int if expected is float else expected  # type: ignore[return-value]


def list_scope(filters: dict[str, list[str]], words: list[str] | None) -> str:
    asked = json.dumps([sorted(filters.items()), words], separators=(",", ":"))
    return hashlib.blake2b(asked.encode(), digest_size=6).hexdigest()


def encode_cursor(query: ListQuery, value: Any, row_id: str) -> str:
    """Opaque to callers. It names the sort, order and scope it belongs to, the next page's number,
    and the last row's sort value (typed, so it binds as the column's type) and id."""
    if isinstance(value, datetime):
        typed: list[Any] = ["t", value.isoformat()]
    elif isinstance(value, date):
        typed = ["d", value.isoformat()]
    elif value is None or isinstance(value, bool | int | float | str):
        typed = ["v", value]
    else:  # a sort key of a type not listed above is a programming error, not a caller's
        raise TypeError(f"cannot put a {type(value).__name__} in a cursor")
    body = {"s": query.sort, "o": query.order, "q": query.scope, "p": query.page + 1, "k": typed, "i": row_id}
    raw = json.dumps(body, separators=(",", ":"), ensure_ascii=False).encode()
    return base64.urlsafe_b64encode(raw).decode().rstrip("=")


def decode_cursor(cursor: str, spec: ListSpec, sort: str, order: str, scope: str) -> tuple[int, After]:
    invalid = ValidationFailed.on("cursor", "Not a cursor this list gave")
    try:
        body = json.loads(base64.urlsafe_b64decode(cursor + "=" * (-len(cursor) % 4)))
        tag, raw = body["k"]
        page, row_id = body["p"], body["i"]
        if tag == "t":
            value: Any = datetime.fromisoformat(raw)
            if value.tzinfo is None:
                raise ValueError("naive")
        elif tag == "d":
            value = date.fromisoformat(raw)
        elif tag == "v" and (raw is None or isinstance(raw, int | float | str)):
            value = raw
        else:
            raise ValueError(tag)
    except (ValueError, TypeError, KeyError, binascii.Error, UnicodeDecodeError):
        raise invalid from None
    if not isinstance(page, int) or not 1 < page <= MAX_PAGE or not isinstance(row_id, str):
        raise invalid
    key = spec.sortable.get(sort)  # None: a custom field's, typed by its owner
    expected = None if key is None else _python_type(key)
    if value is not None and expected is not None and not isinstance(value, expected):
        raise invalid  # e.g. text where a time is sorted: the database would refuse to compare
    if (body.get("s"), body.get("o"), body.get("q")) != (sort, order, scope):
        raise ValidationFailed.on("cursor", "This cursor is for another sort, order, filter or search")
    return page, After(value, row_id)
