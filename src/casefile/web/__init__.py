"""The web app for the firm's staff (docs/web-app.md): server-rendered pages under `/app`,
served by the same process as the API and built on the same dependencies and services, so that
matter access, walls, holds, permissions, audit and events are exactly the API's. The browser
signs in with a session cookie (auth/browser.py), accepted under `/app` only."""

from __future__ import annotations

from fastapi import FastAPI

from casefile.web import (
    access_tab,
    admin_config,
    admin_groups,
    admin_keys,
    admin_users,
    admin_webhooks,
    ask_page,
    assets,
    conflicts_page,
    deadlines_tab,
    documents_page,
    errors,
    invoices,
    matter,
    matter_work,
    matters,
    my_day,
    parties_tab,
    search_page,
    settings_page,
    signin,
    time_tab,
    timer,
    trash_page,
    trust_pages,
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
        # Issue 28's second round.
        documents_page,
        ask_page,
        conflicts_page,
        trash_page,
        admin_groups,
        admin_keys,
        admin_webhooks,
        admin_config,
        timer,
        time_tab,
        invoices,
        trust_pages,
        access_tab,
        settings_page,
    ):
        app.include_router(module.router)
    app.add_middleware(WebHeadersMiddleware)
    errors.install(app)
