"""Errors on the web app's pages: the API's own handlers run first (so a refusal is audited
exactly as through the API: `denied` entries, the same status and message), then their JSON
answer is shown as a page. A signed-out visitor of a page is sent to the sign-in form."""

from __future__ import annotations

import inspect
import json
from collections.abc import Awaitable, Callable
from typing import Any
from urllib.parse import quote

from fastapi import FastAPI, Request
from fastapi.responses import RedirectResponse
from starlette.responses import Response

from casefile.auth.browser import applies_to
from casefile.errors import ValidationFailed
from casefile.web.security import session_cookie_headers
from casefile.web.templating import render, render_fragment

Handler = Callable[[Request, Any], Response | Awaitable[Response]]

TITLES = {
    400: "The request could not be read",
    401: "Please sign in",
    403: "Not allowed",
    404: "Not found",
    409: "Conflict",
    413: "Too large",
    415: "File type not accepted",
    422: "Please check the form",
    429: "Too many requests",
}


def _message(response: Response) -> tuple[str, list[str]]:
    """The error's message and details from the API's JSON answer."""
    try:
        body: Any = json.loads(bytes(response.body))
    except ValueError:
        return "Something went wrong", []
    error = body.get("error") if isinstance(body, dict) else None
    if isinstance(error, dict):  # the API error envelope
        details = [f"{d.get('field')}: {d.get('message')}" for d in error.get("details") or []]
        return str(error.get("message") or "Something went wrong"), details
    if isinstance(body, dict) and "error_description" in body:  # an authentication error
        return str(body["error_description"]), []
    return "Something went wrong", []


def _html(original: Handler) -> Handler:
    async def handler(request: Request, exc: Exception) -> Response:
        answered = original(request, exc)
        response = await answered if inspect.isawaitable(answered) else answered
        if not applies_to(request.url.path) or request.url.path.startswith("/app/static/"):
            return response
        status = response.status_code
        secure = request.url.scheme == "https"
        if status == 401 and not request.url.path.startswith("/app/sign-in"):
            # Signed out, timed out or revoked: to the sign-in form, back here afterwards.
            target = request.url.path if request.method == "GET" else "/app"
            location = f"/app/sign-in?next={quote(target)}"
            # htmx's requests follow a redirect themselves and would swap the sign-in page into
            # the part they update: they are told to load it as a page instead.
            if request.headers.get("hx-request"):
                redirect: Response = Response(status_code=200, headers={"HX-Redirect": location})
            else:
                redirect = RedirectResponse(location, status_code=303)
            redirect.raw_headers.extend(session_cookie_headers(None, secure=secure))
            return redirect
        message, details = _message(response)
        context = {"status": status, "title": TITLES.get(status, "Something went wrong"), "message": message}
        context["details"] = details
        context["request_id"] = response.headers.get("x-request-id", "")
        if request.headers.get("hx-request"):
            page = render_fragment("error_fragment.html", context, status_code=status)
        else:
            page = render(request, "error.html", context, status_code=status)
        for name in ("retry-after", "x-request-id", "connection"):
            if name in response.headers:
                page.headers[name] = response.headers[name]
        return page

    return handler


def install(app: FastAPI) -> None:
    """Called once every handler of the API is installed (create_app)."""
    for exc_class, original in list(app.exception_handlers.items()):
        app.exception_handlers[exc_class] = _html(original)


def refusal_text(exc: ValidationFailed) -> str:
    """A validation refusal as one line for a page: each field's message, or the refusal's own."""
    return "; ".join(d.message for d in exc.details or []) or exc.message
