"""Cursor pagination (`?cursor=`, `meta.pagination.next_cursor`) walks a list in the same order as
page numbers do, whatever the sort key, ties in it included (the id breaks them), and NULL keys."""

from __future__ import annotations

from datetime import datetime
from typing import Any

import httpx
import pytest

from tests.support.assertions import api_error, ok
from tests.support.factories import new_case, unique
from tests.support.servers import Api

CASE_SORTS = ("created_at", "updated_at", "title", "case_number", "status", "priority")


@pytest.fixture(scope="module")
def tied(api: Api) -> tuple[str, list[str]]:
    """Nine cases sharing a search word, with repeated titles (in three spellings of one word),
    statuses and priorities, and one creation and update instant for all of them."""
    tag = unique("tiedrow")
    titles = ["Same", "same", "SAME", "Other", "other", "Same", "Zed", "zed", "same"]
    priorities = ["high", "low", "high", "urgent", "low", "high", "medium", "low", "high"]
    ids = []
    with api.admin() as admin:
        for i, (title, priority) in enumerate(zip(titles, priorities, strict=True)):
            case = new_case(
                admin,
                title=f"{tag} {title}",
                priority=priority,
                case_number=f"{tag}-{i % 3}{i}",
                status="closed" if i % 2 else "active",
                case_type=tag,  # a filter of their own, to list them without a search
            )
            ids.append(case["id"])
    # Every case of the tag at one instant: created_at and updated_at are all ties.
    api.sql(
        "UPDATE cases SET created_at = :t, updated_at = :t WHERE title LIKE :pattern",
        t=datetime(2026, 1, 2, 3, 4, 5, 6),  # naive UTC, as the column stores it
        pattern=f"{tag} %",
    )
    return tag, ids


def walk_by_page(client: httpx.Client, path: str, **params: Any) -> tuple[list[str], list[dict]]:
    ids, metas, page = [], [], 1
    while True:
        r = client.get(path, params={**params, "page": page})
        rows, meta = ok(r), r.json()["meta"]["pagination"]
        if not rows:
            return ids, metas
        ids += [row["id"] for row in rows]
        metas.append(meta)
        page += 1


def walk_by_cursor(client: httpx.Client, path: str, **params: Any) -> tuple[list[str], list[dict]]:
    ids, metas, cursor = [], [], None
    while True:
        r = client.get(path, params={**params, **({"cursor": cursor} if cursor else {})})
        rows, meta = ok(r), r.json()["meta"]["pagination"]
        ids += [row["id"] for row in rows]
        metas.append(meta)
        cursor = meta.get("next_cursor")
        if cursor is None:
            return ids, metas
        assert len(rows) == params["limit"]


@pytest.mark.parametrize("order", ["asc", "desc"])
@pytest.mark.parametrize("sort", CASE_SORTS)
@pytest.mark.parametrize("by", ["search", "case_type"])  # a search and a plain list page differently
def test_cases_by_cursor_as_by_page(admin: httpx.Client, tied, sort: str, order: str, by: str) -> None:
    tag, made = tied
    params = {by: tag, "sort": sort, "order": order, "limit": 2}
    by_page, page_metas = walk_by_page(admin, "/cases", **params)
    by_cursor, cursor_metas = walk_by_cursor(admin, "/cases", **params)
    assert sorted(by_page) == sorted(made)  # every case once, none twice
    assert by_cursor == by_page
    # The cursor pages say where they are, as numbered pages do.
    assert [m["page"] for m in cursor_metas] == [1, 2, 3, 4, 5]
    assert {(m["total"], m["pages"], m.get("total_exact")) for m in cursor_metas + page_metas} == {
        (9, 5, None)
    }


def test_ties_are_broken_by_id(admin: httpx.Client, tied) -> None:
    tag, made = tied
    ids, _ = walk_by_cursor(admin, "/cases", search=tag, sort="created_at", order="desc", limit=2)
    assert ids == sorted(made, reverse=True)  # every created_at is the same
    ids, _ = walk_by_cursor(admin, "/cases", search=tag, sort="created_at", order="asc", limit=4)
    assert ids == sorted(made)


def test_a_filtered_walk(admin: httpx.Client, tied) -> None:
    tag, _ = tied
    params = {"search": tag, "status": "closed", "sort": "title", "order": "asc", "limit": 1}
    by_cursor, metas = walk_by_cursor(admin, "/cases", **params)
    assert by_cursor == walk_by_page(admin, "/cases", **params)[0]
    assert len(by_cursor) == 4 and metas[-1]["page"] == 4


def test_nullable_sort_keys(api: Api, admin: httpx.Client) -> None:
    """API keys by `expires_at`, most of them never expiring (NULL): NULL sorts last ascending and
    first descending, on both databases, and a cursor may stop on a NULL."""
    name = unique("cursor-key")
    for expires in (None, "2031-05-05T00:00:00Z", None, "2031-05-05T00:00:00Z", None, "2030-01-01T00:00:00Z"):
        api.make_key(["read:cases"], name=name, **({"expires_at": expires} if expires else {}))
    for order in ("asc", "desc"):
        by_page, _ = walk_by_page(admin, "/admin/api-keys", sort="expires_at", order=order, limit=2)
        by_cursor, _ = walk_by_cursor(admin, "/admin/api-keys", sort="expires_at", order=order, limit=2)
        assert by_cursor == by_page and len(set(by_page)) == len(by_page)
        keys = {k["id"]: k for k in ok(admin.get("/admin/api-keys", params={"limit": 100}))}
        expiries = [keys[i]["expires_at"] for i in by_page if i in keys]
        nulls = [e is None for e in expiries]
        assert nulls == sorted(nulls, reverse=order == "desc"), expiries


def test_a_cursor_belongs_to_its_list(admin: httpx.Client, tied) -> None:
    tag, _ = tied
    first = admin.get("/cases", params={"search": tag, "sort": "title", "limit": 2})
    cursor = first.json()["meta"]["pagination"]["next_cursor"]
    assert cursor
    same = admin.get("/cases", params={"search": tag, "sort": "title", "limit": 2, "cursor": cursor})
    assert ok(same) and same.json()["meta"]["pagination"]["page"] == 2
    for other in ({"sort": "status"}, {"order": "asc"}, {"status": "closed"}, {"search": f"{tag} same"}):
        params = {"search": tag, "sort": "title", "limit": 2, "cursor": cursor, **other}
        api_error(admin.get("/cases", params=params), 422, "VALIDATION_ERROR")
    both = {"search": tag, "sort": "title", "limit": 2, "cursor": cursor, "page": 3}
    api_error(admin.get("/cases", params=both), 422, "VALIDATION_ERROR")
    for junk in ("nope", "eyJrIjpbInQiLCJ4Il19", cursor[:-4], "\u00e9t\u00e9"):
        api_error(admin.get("/cases", params={"sort": "title", "cursor": junk}), 422, "VALIDATION_ERROR")


@pytest.mark.parametrize(
    "path",
    [
        "/cases",
        "/users",
        "/admin/api-keys",
        "/admin/webhooks",
        "/admin/deliveries",
        "/admin/groups",
        "/contacts",
        "/tasks",
        "/conflict-checks",
        "/admin/trash",
    ],
)
def test_every_list_gives_the_new_pagination_fields(admin: httpx.Client, path: str) -> None:
    r = admin.get(path, params={"limit": 1})
    ok(r)
    pagination = r.json()["meta"]["pagination"]
    assert {"page", "limit", "total", "pages"} <= set(pagination)
    assert set(pagination) <= {"page", "limit", "total", "pages", "total_exact", "next_cursor"}
    assert ("next_cursor" in pagination) == (pagination["total"] > 1)
    if pagination["total"] > 1:
        after = admin.get(path, params={"limit": 1, "cursor": pagination["next_cursor"]})
        assert ok(after) and after.json()["meta"]["pagination"]["page"] == 2
