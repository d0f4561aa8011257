"""Versions through the AI pipeline and a purge (issue 29 item 1), with the real models on both
databases: each version is processed; an AI result made from a replaced version reads `stale`
until processed again; answers and summaries cite `{document_id, version}`; and a purge leaves no
text of the document, nor its content's hash, in any table of the database (read whole, table by
table, as the database lists them), and no content file."""

from __future__ import annotations

import asyncio
import hashlib
import secrets
from typing import Any

import httpx
from sqlalchemy import inspect, text

from casefile.db.engines import make_engine
from casefile.models import Base
from tests.documents.samples import Storage
from tests.support.assertions import ok
from tests.support.factories import new_case, upload
from tests.support.servers import Api
from tests.support.waiting import wait_until

FINAL = ("completed", "failed", "skipped")


def tables_as_text(api: Api) -> dict[str, str]:
    """Every table the database has (the inspector's list: the metadata's tables, the full-text
    index's virtual and shadow tables, alembic's), every row and column, as lower-case text;
    binary values as Latin-1 so that any stored word shows."""

    def render(value: Any) -> str:
        if isinstance(value, bytes | bytearray | memoryview):
            return bytes(value).decode("latin-1")
        return str(value)

    async def run() -> dict[str, str]:
        engine = make_engine(api.settings, pooled=False)
        try:
            async with engine.connect() as conn:
                names = await conn.run_sync(lambda sync: inspect(sync).get_table_names())
                found: dict[str, str] = {}
                for name in names:
                    rows = (await conn.execute(text(f'SELECT * FROM "{name}"'))).all()
                    found[name] = "\n".join(render(v) for row in rows for v in row).lower()
                return found
        finally:
            await engine.dispose()

    return asyncio.run(run())


def where(tables: dict[str, str], needles: list[str]) -> dict[str, list[str]]:
    """{needle: the tables holding it} for the needles found anywhere."""
    hits = {n: [t for t, content in tables.items() if n.lower() in content] for n in needles}
    return {n: t for n, t in hits.items() if t}


def processed(client: httpx.Client, document_id: str, version: int) -> dict[str, Any]:
    def done() -> dict[str, Any] | None:
        document = ok(client.get(f"/documents/{document_id}"))
        ai = document["ai"] or {}
        final = document["processing_status"] in FINAL and ai.get("version") == version
        return document if final else None

    return dict(wait_until(done, timeout=180, interval=0.2))


def add_version(client: httpx.Client, document_id: str, content: bytes, name: str) -> dict[str, Any]:
    r = client.post(f"/documents/{document_id}/versions", files={"file": (name, content, "text/plain")})
    return dict(ok(r, 201))


def test_versions_are_processed_cited_and_purged_without_a_trace(make_server: Any) -> None:
    api: Api = make_server(ai_enabled=True)
    storage = Storage(api)
    tag = secrets.token_hex(3)
    # Words no other row holds (digits last: no stemmer shortens them in a full-text index).
    first_word, second_word, third_word = f"zorvath{tag}1", f"quillmere{tag}2", f"brannock{tag}3"
    title = f"Escrow agreement {tag}9"
    first = (
        f"ESCROW AGREEMENT\n\n{first_word.capitalize()} Holdings agreed to pay a deposit of $12,000 "
        "into escrow on March 3, 2024. The escrow agent releases the deposit on closing.\n"
    ).encode()
    second = (
        f"ESCROW AGREEMENT (REVISED)\n\n{second_word.capitalize()} Partners agreed to pay a deposit of "
        "$15,000 into escrow on April 9, 2024. The escrow agent releases the deposit on closing.\n"
    ).encode()
    third = (
        f"ESCROW AGREEMENT (FINAL)\n\n{third_word.capitalize()} Capital agreed to pay a deposit of "
        "$18,000 into escrow on May 2, 2024. The escrow agent releases the deposit on closing.\n"
    ).encode()
    with api.admin() as admin:
        case = new_case(admin)
        doc = ok(upload(admin, case["id"], first, f"escrow-{tag}.txt", title=title), 201)
        v1 = processed(admin, doc["id"], 1)
        assert v1["processing_status"] == "completed" and v1["ai"]["stale"] is False

        # With AI processing off, nothing reprocesses the new version: the result says it is stale.
        ok(admin.patch("/admin/config", json={"ai": {"enabled": False}}))
        replaced = add_version(admin, doc["id"], second, f"escrow-{tag}-revised.txt")
        assert replaced["version"] == 2 and replaced["processing_status"] == "skipped"
        assert replaced["ai"]["version"] == 1 and replaced["ai"]["stale"] is True
        ok(admin.patch("/admin/config", json={"ai": {"enabled": True}}))
        ok(admin.post(f"/documents/{doc['id']}/process"), 202)
        v2 = processed(admin, doc["id"], 2)
        assert v2["ai"]["stale"] is False and second_word in v2["ai"]["summary"]["text"].lower()
        assert api.sql("SELECT DISTINCT version FROM passages WHERE document_id = :d", d=doc["id"]) == [(2,)]

        # With it on, a new version is queued for processing at once.
        add_version(admin, doc["id"], third, f"escrow-{tag}-final.txt")
        v3 = processed(admin, doc["id"], 3)
        assert v3["ai"]["stale"] is False and third_word in v3["ai"]["summary"]["text"].lower()

        answer = ok(admin.post(f"/cases/{case['id']}/ask", json={"question": "How much was the deposit?"}))
        assert answer["grounded"] and answer["answer"]["sentences"]
        assert {(s["document_id"], s["version"]) for s in answer["answer"]["sentences"]} == {(doc["id"], 3)}
        assert {(p["document_id"], p["version"]) for p in answer["passages"]} == {(doc["id"], 3)}

        ok(admin.post(f"/cases/{case['id']}/summarize"), 202)
        summary = wait_until(lambda: ok(admin.get(f"/cases/{case['id']}"))["ai"], timeout=180)
        assert {(s["document_id"], s["version"]) for s in summary["summary"]["sentences"]} == {(doc["id"], 3)}
        assert summary["provenance"]["documents"][0]["version"] == 3

        hashes = [hashlib.sha256(c).hexdigest() for c in (first, second, third)]
        needles = [first_word, second_word, third_word, title, f"escrow-{tag}", *hashes]
        before = tables_as_text(api)
        # The scan finds what is there: every needle is somewhere before the purge.
        assert set(where(before, needles)) == set(needles)
        assert {"documents", "document_versions", "passages", "events", "cases"} <= {
            t for ts in where(before, needles).values() for t in ts
        }

        ok(admin.delete(f"/documents/{doc['id']}"))
        ok(admin.delete(f"/admin/trash/{doc['id']}"))
        after = tables_as_text(api)
        assert where(after, needles) == {}
        assert set(Base.metadata.tables) <= set(after)  # every table of the schema was read
        for sha256 in hashes:
            wait_until(lambda s=sha256: not storage.has(s), timeout=15)
        [purged] = api.events("document.purged", document_id=doc["id"])
        assert purged["title"] is None and purged["sha256"] is None
        assert ok(admin.get(f"/cases/{case['id']}"))["ai"] is None  # it quoted the document
        print(f"\ntables read after the purge ({len(after)}): {', '.join(sorted(after))}")
