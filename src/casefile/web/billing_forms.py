"""What the billing screens' forms share: a service call whose refusal (the API's own: an
overdraft, a move the invoice's state does not allow, a field out of range) is shown on the page
it came from instead of a bare error page, and the forms' values read as the API's bodies."""

from __future__ import annotations

from collections.abc import AsyncIterator, Awaitable, Callable
from contextlib import asynccontextmanager
from dataclasses import dataclass
from typing import TypeVar

from fastapi import Request
from pydantic import ValidationError
from sqlalchemy.ext.asyncio import AsyncSession
from starlette.datastructures import FormData

from casefile.auth.permissions import Permission, Principal
from casefile.error_handlers import validation_details
from casefile.errors import AppError, ErrorDetail, permission_missing
from casefile.request_scope import runtime_of

T = TypeVar("T")


@dataclass(frozen=True)
class Refused:
    """The API's refusal of a form: its message and HTTP status (409 for an overdraft...)."""

    message: str
    status_code: int


def refusal_text(details: list[ErrorDetail] | None, message: str) -> str:
    if details:
        return "; ".join(f"{d.field}: {d.message}" if d.field else d.message for d in details)
    return message


async def attempt(session: AsyncSession, action: Callable[[], Awaitable[T]]) -> T | Refused:
    """Run `action` (a service call, its body built inside it): its result, or the API's
    refusal, with the request's transaction rolled back as the API's refusal rolls it back. The
    page that shows the refusal is then read in a session of its own (`reading`)."""
    try:
        return await action()
    except ValidationError as exc:
        await session.rollback()
        return Refused(refusal_text(validation_details(exc.errors()), "Please check the form"), 422)
    except AppError as exc:
        await session.rollback()
        return Refused(refusal_text(exc.details, exc.message), exc.status_code)


@asynccontextmanager
async def reading(request: Request) -> AsyncIterator[AsyncSession]:
    """A read session for the page that shows a refused form: the form's write transaction is
    over (rolled back), and the page reads, and records its reads in the audit trail, exactly as
    its GET does (on SQLite a read's audit entry cannot commit while a write transaction of the
    same request holds the database)."""
    async with runtime_of(request).db.transaction(write=False) as session:
        yield session


def require(principal: Principal, *permissions: Permission) -> None:
    """A form's permissions, checked before the matter it names (as the API's dependencies)."""
    for permission in permissions:
        if not principal.can(permission):
            raise permission_missing(permission)


def text(form: FormData, name: str) -> str:
    value = form.get(name)
    return value.strip() if isinstance(value, str) else ""


def optional(form: FormData, name: str) -> str | None:
    return text(form, name) or None
