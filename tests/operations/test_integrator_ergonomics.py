"""What an integrator's client relies on: operation ids named for what they do, API keys as bearer
tokens, `Location` on 201, and the `Link` header of lists (docs/api-conventions.md)."""

from __future__ import annotations

import re
from collections import Counter

import httpx

from casefile.operation_ids import OPERATION_IDS
from tests.support import plain
from tests.support.servers import Api

RULE = re.compile(r"^[a-z]+(?:_[a-z]+)+$")  # <resource>_<action>


def test_operation_ids_are_unique_follow_the_rule_and_come_from_the_table(api: Api) -> None:
    doc = plain.get(api.root + "/openapi.json").json()
    found = {
        (method.upper(), path): operation["operationId"]
        for path, item in doc["paths"].items()
        for method, operation in item.items()
    }
    ids = list(found.values())
    assert [name for name, n in Counter(ids).items() if n > 1] == []
    assert [name for name in ids if not RULE.match(name)] == []
    assert found == OPERATION_IDS  # every operation has its id from the table, and no entry is stale
    assert found[("POST", "/api/v1/cases")] == "cases_create"
    assert found[("POST", "/api/v1/cases/{case_id}/documents")] == "documents_upload"


def test_an_api_key_works_as_a_bearer_token(api: Api) -> None:
    key = api.make_key(["read:cases"])["key"]
    with api.client(headers={"Authorization": f"Bearer {key}"}) as c:
        assert c.get("/cases").status_code == 200
        refused = c.post("/cases", json={"title": "Not with read:cases"})
    assert refused.status_code == 403 and refused.json()["error_code"] == "AUTH_010"
    with api.client(headers={"Authorization": f"Bearer {key}x"}) as c:
        wrong = c.get("/cases")
    assert wrong.status_code == 401 and wrong.json()["error_code"] == "AUTH_003"  # a key's error, not a JWT's


def test_created_resources_have_a_location_that_reads_them(admin: httpx.Client) -> None:
    case = admin.post("/cases", json={"title": "Location v. Header"})
    assert case.status_code == 201
    assert case.headers["Location"] == f"/api/v1/cases/{case.json()['data']['id']}"
    document = admin.post(
        f"/cases/{case.json()['data']['id']}/documents",
        files={"file": ("a.txt", b"Some text.\n", "text/plain")},
    )
    assert document.headers["Location"] == f"/api/v1/documents/{document.json()['data']['id']}"
    contact = admin.post("/contacts", json={"name": "Located Person", "kind": "person"})
    party = admin.post(
        f"/cases/{case.json()['data']['id']}/parties",
        json={"contact_id": contact.json()["data"]["id"], "role": "client"},
    )
    assert (
        party.headers["Location"] == f"/api/v1/cases/{case.json()['data']['id']}/parties"
    )  # no URL of its own
    for made in (case, document, contact, party):
        assert made.status_code == 201, made.text
        read = httpx.get(str(made.url.join(made.headers["Location"])), headers=admin.headers)
        assert read.status_code == 200, (made.headers["Location"], read.text)


def test_a_queued_job_has_a_location(make_server) -> None:
    api = make_server(ai_enabled=True, worker_enabled=False)  # queued, never run
    with api.admin() as admin:
        case = admin.post("/cases", json={"title": "Jobs"}).json()["data"]
        document = admin.post(
            f"/cases/{case['id']}/documents", files={"file": ("a.txt", b"Text.\n", "text/plain")}
        )
        job = admin.post(f"/documents/{document.json()['data']['id']}/process")
        assert (
            job.status_code == 202
            and job.headers["Location"] == f"/api/v1/jobs/{job.json()['data']['job_id']}"
        )
        assert (
            admin.get(job.headers["Location"].removeprefix("/api/v1")).json()["data"]["status"] == "pending"
        )


def test_lists_link_to_their_next_page(admin: httpx.Client) -> None:
    marker = "Linkedlist"
    for n in range(5):
        assert admin.post("/cases", json={"title": f"{marker} {n}"}).status_code == 201
    seen: list[str] = []
    url: str | None = f"/cases?search={marker}&limit=2&sort=title&order=asc"
    pages = 0
    while url is not None:
        page = admin.get(url)
        assert page.status_code == 200, page.text
        seen += [case["title"] for case in page.json()["data"]]
        pages += 1
        link = page.headers.get("Link")
        if link is None:
            assert page.json()["meta"]["pagination"].get("next_cursor") is None
            url = None
            continue
        found = re.fullmatch(r'<(/api/v1/cases\?[^>]+)>; rel="next"', link)
        assert found, link
        assert "cursor=" in found[1] and "search=Linkedlist" in found[1] and "limit=2" in found[1]
        url = found[1].removeprefix("/api/v1")
    assert pages == 3 and seen == [f"{marker} {n}" for n in range(5)]
    # A list without cursors (search) moves `page` on.
    hits = admin.get(f"/search?q={marker}&limit=2&kind=case")
    assert re.fullmatch(
        r'</api/v1/search\?q=Linkedlist&limit=2&kind=case&page=2>; rel="next"', hits.headers["Link"]
    )
