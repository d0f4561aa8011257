"""What any input must be before an endpoint sees it (docs/api-conventions.md#errors).

One rule for every string: no NUL character. PostgreSQL cannot store one in text or JSON, so the
same input would be a 500 there and stored on SQLite; it is refused everywhere instead, with the
field named. Strings arrive three ways, and each way checks here:

- JSON bodies: `json_body_problems`, run by `BodyLimitMiddleware` on every JSON body it buffers,
  which also refuses bodies that are not UTF-8 (contract §3), nested deeper than
  `MAX_JSON_DEPTH`, or holding non-finite numbers (`NaN`, `Infinity`, or a literal that overflows
  to infinity), none of which a JSON column or a signed webhook body can carry;
- query and path parameters: `refuse_nul_in_parameters`, a dependency of the whole API router;
- multipart form fields: `nul_problems` on each field as the upload parser reads it.
"""

from __future__ import annotations

import json
import math
from collections.abc import Iterable
from typing import Any

from fastapi import Request

from casefile.errors import ErrorDetail, ValidationFailed

MAX_JSON_DEPTH = 64
NUL = "\x00"
NUL_MESSAGE = "Must not contain NUL characters"


class _NonFinite(ValueError):
    pass


def _finite_float(literal: str) -> float:
    value = float(literal)
    if not math.isfinite(value):
        raise _NonFinite(literal)
    return value


def _refuse_constant(literal: str) -> float:
    raise _NonFinite(literal)


def json_body_problems(body: bytes) -> list[ErrorDetail]:
    """Why this JSON body cannot be taken, if it cannot. A body that is not JSON at all is left to
    the framework's parser, which names it the same way (`body`)."""
    not_utf8 = [ErrorDetail("body", "The body is not UTF-8")]
    try:
        # A leading byte order mark is ignored, as the framework's parser ignores it.
        text = body.decode("utf-8").removeprefix("\ufeff")
    except UnicodeDecodeError:
        return not_utf8
    try:
        value = json.loads(text, parse_float=_finite_float, parse_constant=_refuse_constant)
    except _NonFinite:
        return [ErrorDetail("body", "Numbers must be finite (no NaN or Infinity)")]
    except RecursionError:
        return [_too_deep()]
    except ValueError:
        # Not JSON as UTF-8 text. The framework's parser would also take UTF-16 or UTF-32 (whose
        # ASCII is valid UTF-8 with NULs between), so such a body must not reach it unchecked.
        return not_utf8 if _json_in_another_encoding(body) else []
    return _walk(value)


def _json_in_another_encoding(body: bytes) -> bool:
    try:
        json.loads(body)  # detects UTF-16 and UTF-32, as the framework does
    except (ValueError, RecursionError):
        return False
    return True


def _too_deep() -> ErrorDetail:
    return ErrorDetail("body", f"The body is nested deeper than {MAX_JSON_DEPTH} levels")


def _walk(root: Any) -> list[ErrorDetail]:
    """NUL characters anywhere (keys included), and the nesting depth; iterative, so no body can
    exhaust the stack here."""
    problems: list[ErrorDetail] = []
    stack: list[tuple[Any, tuple[str, ...]]] = [(root, ())]
    while stack:
        value, path = stack.pop()
        if len(path) > MAX_JSON_DEPTH:
            return [_too_deep()]
        if isinstance(value, str):
            if NUL in value:
                problems.append(ErrorDetail(".".join(path) or "body", NUL_MESSAGE))
        elif isinstance(value, dict):
            if any(NUL in key for key in value):
                problems.append(ErrorDetail(".".join(path) or "body", "Keys must not contain NUL characters"))
            stack.extend((item, (*path, key)) for key, item in value.items())
        elif isinstance(value, list):
            stack.extend((item, (*path, str(index))) for index, item in enumerate(value))
    return sorted(problems, key=lambda problem: problem.field)


def nul_problems(pairs: Iterable[tuple[str, str]]) -> list[ErrorDetail]:
    """One problem per named value (a parameter or a form field) holding a NUL character."""
    fields = dict.fromkeys(name for name, value in pairs if NUL in name or NUL in value)
    return [ErrorDetail(name.replace(NUL, "\\u0000"), NUL_MESSAGE) for name in fields]


async def refuse_nul_in_parameters(request: Request) -> None:
    """Query and path parameters, before any other dependency (authentication included) reads them."""
    path = [(name, str(value)) for name, value in request.path_params.items()]
    problems = nul_problems([*path, *request.query_params.multi_items()])
    if problems:
        raise ValidationFailed(details=problems)
