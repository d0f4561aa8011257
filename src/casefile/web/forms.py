"""Forms of the pages read into the API's own request models, so a form is validated by exactly
the rules of the API's body (a refusal is the API's 422, shown as a page)."""

from __future__ import annotations

from typing import Any, TypeVar

from pydantic import BaseModel, ValidationError
from starlette.datastructures import FormData

from casefile.error_handlers import validation_details
from casefile.errors import ValidationFailed

M = TypeVar("M", bound=BaseModel)


def validated(model: type[M], values: dict[str, Any]) -> M:
    try:
        return model.model_validate(values)
    except ValidationError as exc:
        raise ValidationFailed(details=validation_details(exc.errors())) from None


def text(form: FormData, name: str) -> str:
    value = form.get(name)
    return value.strip() if isinstance(value, str) else ""


def lines(value: str) -> list[str]:
    """One item a line or comma-separated, blanks dropped, each once."""
    return list(dict.fromkeys(item.strip() for item in value.replace(",", "\n").splitlines() if item.strip()))
