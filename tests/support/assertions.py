"""Checks of the API's answers: the success envelope, the error envelope, the auth errors."""

from __future__ import annotations

from typing import Any

import httpx


def ok(response: httpx.Response, status: int = 200) -> Any:
    assert response.status_code == status, f"{response.status_code}: {response.text}"
    body = response.json()
    assert body["success"] is True
    assert response.headers["x-request-id"] == body["meta"]["request_id"]
    return body["data"]


def api_error(response: httpx.Response, status: int, code: str) -> dict[str, Any]:
    assert response.status_code == status, f"{response.status_code}: {response.text}"
    body = response.json()
    assert body["success"] is False and body["error"]["code"] == code, body
    assert body["meta"]["request_id"] == response.headers["x-request-id"]
    return dict(body["error"])


def auth_error(response: httpx.Response, status: int, error_code: str) -> dict[str, Any]:
    assert response.status_code == status, f"{response.status_code}: {response.text}"
    body = response.json()
    assert body["error_code"] == error_code, body
    assert body["error"] == ("unauthorized" if status == 401 else "forbidden")
    assert body["request_id"] == response.headers["x-request-id"]
    return dict(body)


def details(error: dict[str, Any]) -> dict[str, str]:
    return {d["field"]: d["message"] for d in error.get("details") or []}
