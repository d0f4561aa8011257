"""Schemathesis hooks for scripts/schemathesis.sh: the fuzzer's requests follow the rules of the
API that JSON Schema cannot state, as any client must. Everything a schema can say is said in the
OpenAPI document itself (patterns, enums, formats, fields that take no null); only these are left:

- uniqueness against what is stored: `case_number` (the contract's 422 "Case number must be
  unique") and a group's `name`;
- values that only the server makes: a list's `cursor` (`meta.pagination.next_cursor`), an
  `If-Match` (a resource's `ETag`: any other is 412 by design), and a fresh `Idempotency-Key`
  per new request (a key sent again with another body is 422 by design);
- relations to now or to another value: an API key's `expires_at` in the future, a consistency
  proof's `first` no larger than `second`, a holiday calendar's subdivision one of its country's;
- the network: a webhook's `url` must be an https address on the public internet.

Each hook changes only a value that the schema already allows, so a request the schema calls
invalid stays invalid (negative data is still checked)."""

from __future__ import annotations

import uuid
from datetime import UTC, datetime, timedelta
from typing import Any

import schemathesis

PUBLIC_HOOK_URL = "https://93.184.215.14/casefile-fuzz"  # a global address: passes the SSRF guard
UNIQUE_BODY_FIELDS = {
    ("/api/v1/cases", "POST"): "case_number",
    ("/api/v1/cases/{case_id}", "PUT"): "case_number",
    ("/api/v1/cases/{case_id}", "PATCH"): "case_number",
    ("/api/v1/admin/groups", "POST"): "name",
    ("/api/v1/admin/groups/{group_id}", "PATCH"): "name",
}


def _integer(value: Any) -> int | None:
    if isinstance(value, int):
        return value
    return int(value) if isinstance(value, str) and value.isdigit() else None


def _plain(value: str, limit: int) -> bool:
    """A value the schema allows as a string of its kind (the hooks leave invalid ones alone)."""
    return 1 <= len(value) <= limit and "\x00" not in value


def _unique(value: Any, limit: int) -> Any:
    if not isinstance(value, str) or "\x00" in value:
        return value
    suffix = uuid.uuid4().hex[:12]
    return (value[: limit - len(suffix) - 1] + "-" + suffix) if value.strip() else value


@schemathesis.hook
def before_call(context: Any, case: Any, kwargs: dict[str, Any]) -> None:
    path, method = case.operation.path, case.operation.method.upper()
    headers = case.headers or {}
    key = headers.get("Idempotency-Key")
    if isinstance(key, str) and key.isascii() and key.isprintable() and 1 <= len(key) <= 255:
        headers["Idempotency-Key"] = uuid.uuid4().hex
    headers.pop("If-Match", None)
    query = case.query or {}
    query.pop("cursor", None)
    if path.endswith("/consistency-proof"):
        first, second = (_integer(query.get(name)) for name in ("first", "second"))
        if first is not None and second is not None and first > second:
            query["first"], query["second"] = query["second"], query["first"]
    body = case.body
    if isinstance(body, dict):
        unique = UNIQUE_BODY_FIELDS.get((path, method))
        if unique in body:
            body[unique] = _unique(body[unique], 100 if unique == "case_number" else 200)
        expires = body.get("expires_at")
        if path == "/api/v1/admin/api-keys" and isinstance(expires, str) and _plain(expires, 64):
            body["expires_at"] = (datetime.now(UTC) + timedelta(days=30)).isoformat()
        calendar = body.get("calendar")
        if path.startswith("/api/v1/deadline-rule-sets") and isinstance(calendar, dict):
            calendar.pop("subdivision", None)  # one of the country's own: a relation to `country`
        url = body.get("url")
        if path.startswith("/api/v1/admin/webhooks") and isinstance(url, str) and _plain(url, 2048):
            body["url"] = PUBLIC_HOOK_URL
