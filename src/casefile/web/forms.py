"""Reading the pages' forms: their text fields. A form is then read into the API's own request
model (`error_handlers.validated`), so it is validated by exactly the rules of the API's body (a
refusal is the API's 422, shown as a page)."""

from __future__ import annotations

from starlette.datastructures import FormData


def text(form: FormData, name: str) -> str:
    value = form.get(name)
    return value.strip() if isinstance(value, str) else ""


def lines(value: str) -> list[str]:
    """One item a line or comma-separated, blanks dropped, each once."""
    return list(dict.fromkeys(item.strip() for item in value.replace(",", "\n").splitlines() if item.strip()))
