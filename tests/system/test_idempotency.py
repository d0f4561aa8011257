"""`Idempotency-Key` on POST (docs/api-conventions.md#idempotency), on both databases; the race
across processes on PostgreSQL."""

from __future__ import annotations

import asyncio
import hashlib
import json
import secrets
from collections import Counter
from datetime import datetime, timedelta
from pathlib import Path

import httpx
import pytest

from casefile.clock import utcnow
from tests.support.assertions import api_error, ok
from tests.support.processes import Process, several_api_processes
from tests.support.servers import ADMIN_EMAIL, Api, make_settings, redis_available
from tests.support.waiting import wait_until


def stored(moment: datetime) -> datetime:
    """As the database holds it: naive UTC."""
    return moment.replace(tzinfo=None)


def cases_titled(api: Api, title: str) -> int:
    return int(api.sql("SELECT count(*) FROM cases WHERE title = :t", t=title)[0][0])


def test_a_retry_with_the_key_gets_the_first_answer_and_creates_nothing(
    api: Api, admin: httpx.Client
) -> None:
    title = f"Idempotent {secrets.token_hex(4)}"
    key = {"Idempotency-Key": secrets.token_hex(8)}
    first = admin.post("/cases", json={"title": title}, headers=key)
    created = ok(first, 201)
    again = admin.post("/cases", json={"title": title}, headers=key)
    assert again.status_code == 201
    assert again.headers["idempotent-replayed"] == "true"
    assert again.json()["data"] == created
    assert again.headers["location"] == first.headers["location"]
    assert "idempotent-replayed" not in first.headers
    assert cases_titled(api, title) == 1
    # Without a key, the same request is a new case.
    ok(admin.post("/cases", json={"title": title}), 201)
    assert cases_titled(api, title) == 2


def test_the_key_with_another_body_is_refused(api: Api, admin: httpx.Client) -> None:
    key = {"Idempotency-Key": secrets.token_hex(8)}
    ok(admin.post("/cases", json={"title": "First body"}, headers=key), 201)
    error = api_error(
        admin.post("/cases", json={"title": "Second body"}, headers=key), 422, "VALIDATION_ERROR"
    )
    assert error["details"][0]["field"] == "Idempotency-Key"
    # ...and on another path.
    api_error(
        admin.post("/contacts", json={"kind": "person", "name": "X"}, headers=key), 422, "VALIDATION_ERROR"
    )


def test_keys_are_per_caller(api: Api, admin: httpx.Client) -> None:
    _, token = api.make_user("attorney")
    key = {"Idempotency-Key": secrets.token_hex(8)}
    title = f"Per caller {secrets.token_hex(4)}"
    mine = ok(admin.post("/cases", json={"title": title}, headers=key), 201)
    with api.client(token=token) as other:
        theirs = other.post("/cases", json={"title": title}, headers=key)
    assert ok(theirs, 201)["id"] != mine["id"]
    assert "idempotent-replayed" not in theirs.headers
    assert cases_titled(api, title) == 2


def test_a_refused_request_is_not_kept_and_its_retry_runs(api: Api, admin: httpx.Client) -> None:
    key = {"Idempotency-Key": secrets.token_hex(8)}
    api_error(admin.post("/cases", json={"title": ""}, headers=key), 422, "VALIDATION_ERROR")
    # The refusal changed nothing, so nothing binds the key: the corrected request may use it.
    ok(admin.post("/cases", json={"title": "Corrected"}, headers=key), 201)


def test_a_retry_while_the_first_runs_is_409(api: Api, admin: httpx.Client) -> None:
    """The first request's reservation, committed with its change, and its answer not yet stored
    (as between the commit and the answer): what a concurrent retry sees."""
    key = secrets.token_hex(8)
    body = json.dumps({"title": "Still running"}).encode()
    principal = api.sql("SELECT id FROM users WHERE email = :e", e=ADMIN_EMAIL)[0][0]
    request_hash = hashlib.sha256(b"POST /api/v1/cases\n" + body).hexdigest()
    now = utcnow()
    api.sql(
        "INSERT INTO idempotency_keys "
        "(principal_id, key, method, path, request_hash, created_at, expires_at) "
        "VALUES (:p, :k, 'POST', '/api/v1/cases', :h, :c, :e)",
        p=principal,
        k=key,
        h=request_hash,
        c=stored(now),
        e=stored(now + timedelta(hours=24)),
    )
    headers = {"Idempotency-Key": key, "Content-Type": "application/json"}
    api_error(admin.post("/cases", content=body, headers=headers), 409, "CONFLICT")
    assert cases_titled(api, "Still running") == 0


def test_an_upload_retried_with_its_key_stores_one_document(api: Api, admin: httpx.Client) -> None:
    """An upload streams its body (its route reads in its own transaction): the key works the same."""
    case_id = ok(admin.post("/cases", json={"title": "Upload twice"}), 201)["id"]
    request = admin.build_request(
        "POST", f"/cases/{case_id}/documents", files={"file": ("memo.txt", b"Once.", "text/plain")}
    )
    body, content_type = request.read(), request.headers["content-type"]  # the same bytes twice
    headers = {"Idempotency-Key": secrets.token_hex(8), "Content-Type": content_type}
    first = ok(admin.post(f"/cases/{case_id}/documents", content=body, headers=headers), 201)
    again = admin.post(f"/cases/{case_id}/documents", content=body, headers=headers)
    assert again.status_code == 201 and again.headers["idempotent-replayed"] == "true"
    assert again.json()["data"]["id"] == first["id"]
    assert [d["id"] for d in ok(admin.get(f"/cases/{case_id}/documents"))] == [first["id"]]


def test_malformed_keys_are_refused(admin: httpx.Client) -> None:
    for bad in (b"", b"x" * 256, "caf\u00e9".encode(), b"tab\there"):
        response = admin.post("/cases", json={"title": "k"}, headers={"Idempotency-Key": bad})
        api_error(response, 422, "VALIDATION_ERROR")


def test_the_openapi_document_describes_the_header(api: Api) -> None:
    with api.client() as c:
        document = c.get(api.root + "/openapi.json").json()
    create = document["paths"]["/api/v1/cases"]["post"]
    assert {"name": "Idempotency-Key", "in": "header"}.items() <= next(
        p for p in create["parameters"] if p["name"] == "Idempotency-Key"
    ).items()
    login = document["paths"]["/api/v1/auth/login"]["post"]
    assert all(p["name"] != "Idempotency-Key" for p in login.get("parameters", []))


def test_expired_keys_are_swept_by_the_retention_worker(database, tmp_path: Path) -> None:
    data_dir, url = database
    settings = make_settings(data_dir, url, worker_enabled=False)
    from tests.support.servers import serving

    with serving(settings) as api, api.admin() as admin:
        key = {"Idempotency-Key": secrets.token_hex(8)}
        ok(admin.post("/cases", json={"title": "Old key"}, headers=key), 201)
        ok(admin.post("/cases", json={"title": "Fresh key"}, headers={"Idempotency-Key": "fresh"}), 201)
        api.sql(
            "UPDATE idempotency_keys SET expires_at = :t WHERE key = :k",
            t=stored(utcnow() - timedelta(seconds=1)),
            k=key["Idempotency-Key"],
        )
        # Past its 24 h the key is free: the same key with another body is a new request.
        ok(admin.post("/cases", json={"title": "Reused key"}, headers=key), 201)
        api.sql("UPDATE idempotency_keys SET expires_at = :t", t=stored(utcnow() - timedelta(seconds=1)))
        later = stored(utcnow() + timedelta(hours=1))
        api.sql("UPDATE idempotency_keys SET expires_at = :t WHERE key = 'fresh'", t=later)
        worker = Process("worker", settings, tmp_path / "worker.log", worker_enabled=True)
        try:
            # The retention sweep runs at the worker's start.
            wait_until(lambda: api.sql("SELECT key FROM idempotency_keys") == [("fresh",)], timeout=30)
        finally:
            worker.stop()


@pytest.mark.skipif(not redis_available(), reason="Redis is not reachable (CI requires it)")
def test_twenty_identical_requests_at_once_on_four_processes_create_one_case(
    database: tuple[Path, str | None], backend: str, tmp_path: Path
) -> None:
    if backend != "postgresql":
        pytest.skip("several API processes share one database on PostgreSQL")
    with several_api_processes(database, tmp_path) as (base, token):
        title = f"Raced {secrets.token_hex(4)}"
        responses = asyncio.run(_at_once(base, token, title, secrets.token_hex(8), n=20))
        statuses = Counter(r.status_code for r in responses)
        replayed = sum(1 for r in responses if "idempotent-replayed" in r.headers)
        print({"statuses": dict(statuses), "replayed": replayed})  # shown with -s
        assert set(statuses) <= {201, 409}, statuses
        created = {r.json()["data"]["id"] for r in responses if r.status_code == 201}
        assert len(created) == 1
        assert (
            sum(1 for r in responses if r.status_code == 201 and "idempotent-replayed" not in r.headers) == 1
        )
        with httpx.Client(base_url=base, headers={"Authorization": f"Bearer {token}"}) as c:
            listed = ok(c.get("/cases", params={"search": title}))
        assert [case["id"] for case in listed] == list(created)


async def _at_once(base: str, token: str, title: str, key: str, n: int) -> list[httpx.Response]:
    headers = {"Authorization": f"Bearer {token}", "Idempotency-Key": key}
    async with httpx.AsyncClient(
        base_url=base, headers=headers, timeout=30, limits=httpx.Limits(max_connections=n)
    ) as c:
        return list(await asyncio.gather(*(c.post("/cases", json={"title": title}) for _ in range(n))))
