"""The web app for the firm's staff (docs/web-app.md): server-rendered pages under `/app`,
served by the same process as the API and built on the same dependencies and services, so that
matter access, walls, holds, permissions, audit and events are exactly the API's. The browser
signs in with a session cookie (auth/browser.py), accepted under `/app` only."""

from __future__ import annotations

from fastapi import FastAPI

from casefile.web import (
    access_tab,
    admin_users,
    assets,
    deadlines_tab,
    errors,
    matter,
    matter_work,
    matters,
    my_day,
    parties_tab,
    search_page,
    settings_page,
    signin,
)
from casefile.web.security import WebHeadersMiddleware


def install(app: FastAPI) -> None:
    """The pages' routes, their headers, and their errors as pages. Called by create_app after
    the API's exception handlers are installed (it wraps them)."""
    for module in (
        assets,
        signin,
        my_day,
        matters,
        matter,
        matter_work,
        deadlines_tab,
        parties_tab,
        search_page,
        admin_users,
        access_tab,
        settings_page,
    ):
        app.include_router(module.router)
    app.add_middleware(WebHeadersMiddleware)
    errors.install(app)
