"""Schemathesis hooks for scripts/schemathesis.sh: the fuzzer's requests follow the rules of the
API that JSON Schema cannot state, as any client must. Everything a schema can say is said in the
OpenAPI document itself (patterns, enums, formats, fields that take no null); only these are left:

- uniqueness against what is stored: `case_number` (the contract's 422 "Case number must be
  unique") and a group's `name`;
- values that only the server makes: a list's `cursor` (`meta.pagination.next_cursor`), an
  `If-Match` (a resource's `ETag`: any other is 412 by design), and a fresh `Idempotency-Key`
  per new request (a key sent again with another body is 422 by design);
- relations to now or to another value: an API key's `expires_at` in the future, a consistency
  proof's `first` no larger than `second`, a holiday calendar's subdivision one of its country's,
  a maintenance window's end after its start, a webhook recovery's `until` after its `since`, an
  invoice's `end` not before its `start`, a reminder's "exactly one of" `minutes_before` and `at`,
  a choice field's `choices`, rule ids unique within a rule set, a template task relative to one
  of the template's own triggers, a case's `trigger_dates` (the template's triggers, which only
  the stored template knows);
- small languages: a user's e-mail is an address the mail validator accepts (and unique), a quick
  time entry starts with a duration ("0.5h ...");
- the network: a webhook's `url` must be an https address on the public internet.

References to ids that do not exist are not rewritten: they are 404 naming the field
(docs/api-conventions.md#references), which the positive check accepts.

Each hook changes only a value that the schema already allows, so a request the schema calls
invalid stays invalid (negative data is still checked)."""

from __future__ import annotations

import re
import uuid
from datetime import UTC, datetime, timedelta
from typing import Any

import schemathesis

PUBLIC_HOOK_URL = "https://93.184.215.14/casefile-fuzz"  # a global address: passes the SSRF guard
# Amounts: the currency decides the decimal places ("JPY has 0 decimal places"); whole amounts
# suit every currency.
MONEY_FIELDS = {"amount", "bank_balance", "write_off"}
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


def _text(value: Any, limit: int) -> bool:
    """A string the schema allows, empty included (the hooks leave invalid ones alone)."""
    return isinstance(value, str) and len(value) <= limit and "\x00" not in value


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
    fields = query.get("fields")
    if isinstance(fields, str):  # custom field names are the firm's: the fuzzer knows none
        query["fields"] = re.sub(r"custom_fields\{[^}]*\}", "custom_fields", fields)
    for name in MONEY_FIELDS & set(query):
        query[name] = _whole(query[name])
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
        _follow_relations(path, method, body)


def _instant(value: Any) -> datetime | None:
    if not isinstance(value, str) or not _plain(value, 64):
        return None
    try:
        parsed = datetime.fromisoformat(value)
    except ValueError:
        return None
    return parsed if parsed.tzinfo is not None else None


def _later(body: dict[str, Any], first: str, then: str, *, both: bool = False) -> None:
    """`body[then]` strictly after `body[first]`, where both are instants the schema allows (with
    `both`: the two given together, or neither)."""
    start, end = _instant(body.get(first)), _instant(body.get(then))
    alone = both and body.get(then) is None
    if start is not None and (alone or (end is not None and end <= start)):
        body[then] = (start + timedelta(hours=1)).isoformat()
    elif both and end is not None and body.get(first) is None:
        body[first] = (end - timedelta(hours=1)).isoformat()


def _whole(value: Any) -> Any:
    """An amount with its fraction dropped (a fraction of less than one: 1, keeping the sign)."""
    if isinstance(value, str) and re.fullmatch(r"-?\d+\.\d+", value):
        whole = value.split(".", 1)[0]
        if not whole.strip("-0"):
            return "-1" if whole.startswith("-") else "1"
        return whole
    return value


def _follow_relations(path: str, method: str, body: dict[str, Any]) -> None:
    for name in MONEY_FIELDS & set(body):
        body[name] = _whole(body[name])
    if path.endswith("/parties"):
        _later_day(body, "starts_on", "ends_on")
    emails = body.get("emails")
    if path.startswith("/api/v1/contacts") and isinstance(emails, list):
        body["emails"] = [f"fuzz-{i}@example.com" if _text(e, 320) else e for i, e in enumerate(emails)]
    if path.startswith("/api/v1/admin/custom-field-sets") and body.get("entity") not in (None, "case"):
        body.pop("case_types", None)  # only sets of case fields apply per case type
    if path.startswith("/api/v1/admin/custom-field-sets/") and method == "PATCH":
        body.pop("case_types", None)  # the set's entity is stored
    maintenance = body.get("maintenance")
    if path == "/api/v1/admin/config" and isinstance(maintenance, dict):
        _later(maintenance, "scheduled_start", "scheduled_end", both=True)
    if path.endswith("/recover"):
        _later(body, "since", "until")
    if path.endswith("/invoices") and method == "POST":
        _later_day(body, "start", "end")
    reminders = body.get("reminders") if "/tasks" in path else None
    for reminder in reminders if isinstance(reminders, list) else []:
        if isinstance(reminder, dict) and (reminder.get("at") is None) == (
            reminder.get("minutes_before") is None
        ):
            reminder.pop("at", None)
            reminder["minutes_before"] = reminder.get("minutes_before") or 60
    rules = body.get("rules")
    if path.startswith("/api/v1/deadline-rule-sets") and isinstance(rules, list):
        for index, rule in enumerate(rules):
            if isinstance(rule, dict) and isinstance(rule.get("id"), str) and _plain(rule["id"], 60):
                rule["id"] = f"{rule['id']}-{index}"
    if path.startswith("/api/v1/admin/matter-templates"):
        _template_tasks_follow_triggers(body)
    if path.startswith("/api/v1/cases"):
        _cases(path, body)
    if path.startswith("/api/v1/admin/custom-fields"):
        _custom_field(method, body)
    if path == "/api/v1/users" and method == "POST" and _text(body.get("email"), 320):
        body["email"] = f"fuzz-{uuid.uuid4().hex[:12]}@casefile.test"
    if path.endswith("/time-entries") and method == "POST":
        _time_entry(body)


def _later_day(body: dict[str, Any], first: str, then: str) -> None:
    start, end = body.get(first), body.get(then)
    if isinstance(start, str) and isinstance(end, str) and _plain(start, 10) and _plain(end, 10):
        body[first], body[then] = sorted((start, end))  # ISO dates sort as dates


def _cases(path: str, body: dict[str, Any]) -> None:
    if path == "/api/v1/cases":
        if isinstance(body.get("trigger_dates"), dict):
            body["trigger_dates"] = {}
        if body.get("template_id") is None:
            body.pop("template_version", None)  # a version of no template
    action = body.get("action")
    tagging = path == "/api/v1/cases/bulk" and isinstance(action, dict) and action.get("type") == "tag"
    if tagging and not action.get("add") and not action.get("remove"):
        action["add"] = ["fuzz"]  # tags to add or to remove: at least one
    for name in ("walls", "grants") if path.endswith("/access") else ():
        entries = body.get(name)
        if isinstance(entries, list) and all(isinstance(e, dict) for e in entries):  # each subject once
            body[name] = list(
                {repr((e.get("subject_type"), e.get("subject_id"))): e for e in entries}.values()
            )


def _custom_field(method: str, body: dict[str, Any]) -> None:
    """Choices, default and per-status requirement follow the field's type and entity, which a
    PATCH does not send (they are stored)."""
    if method == "PATCH":
        for name in ("choices", "default", "required_for_statuses", "required"):
            body.pop(name, None)
        return
    body.pop("default", None)
    # A required field would refuse every later matter or contact the fuzzer makes without it
    # (tests/fields covers required fields).
    if body.get("required") is True:
        body["required"] = False
    if isinstance(body.get("required_for_statuses"), list):
        body["required_for_statuses"] = []
    choice = body.get("field_type") in ("single_choice", "multiple_choice")
    if choice and body.get("choices") == []:
        body["choices"] = ["fuzz"]
    if not choice and body.get("choices"):
        body["choices"] = []


def _time_entry(body: dict[str, Any]) -> None:
    """Quick entry text, or seconds and a description (text wins when both are given)."""
    if _text(body.get("text"), 10_000):
        body["text"] = f"0.5h fuzz {body['text']}"[:10_000]
    elif body.get("text") is None:
        if body.get("seconds") is None:
            body["seconds"] = 1800
        description = body.get("description")
        if description is None or (_text(description, 10_000) and not description.strip()):
            body["description"] = "fuzz"


def _template_tasks_follow_triggers(body: dict[str, Any]) -> None:
    """A task relative to a trigger names one of the template's deadlines' triggers and its days."""
    deadlines = body.get("deadlines")
    triggers = (
        [d.get("trigger") for d in deadlines if isinstance(d, dict)] if isinstance(deadlines, list) else []
    )
    named = [t for t in triggers if isinstance(t, str)]
    tasks = body.get("tasks")
    for task in tasks if isinstance(tasks, list) else []:
        if not isinstance(task, dict) or task.get("relative_to") != "trigger":
            continue
        if not named:
            task["relative_to"] = "opening"
            continue
        if task.get("trigger") not in named:
            task["trigger"] = named[0]
        if task.get("due_in_days") is None:
            task["due_in_days"] = 7
