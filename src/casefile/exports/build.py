"""Building a matter's zip (docs/matter-export.md#what-the-zip-holds): the sections the caller may
read, `index.html` for the client, the audit entries with their proofs, and `manifest.json`
listing every other file's SHA-256 and size. Written to a temporary file in flat memory
(`archive.ZipWriter`), then handed to the content store under its own SHA-256."""

from __future__ import annotations

import os
import tempfile
from collections.abc import Awaitable, Callable
from dataclasses import dataclass
from datetime import datetime
from pathlib import Path
from typing import Any

import anyio
from jinja2 import Environment, PackageLoader, select_autoescape
from sqlalchemy.ext.asyncio import AsyncSession

from casefile.access.matter import Level, level_on
from casefile.auth.permissions import Permission, Principal
from casefile.cases.schemas import CaseOut
from casefile.clock import format_timestamp
from casefile.exports import contents
from casefile.exports.archive import ManifestFile, ZipWriter, dumps, each, file_sha256
from casefile.models import AuditTreeHead, Case
from casefile.runtime import Runtime

FORMAT = "casefile-matter-export"
FORMAT_VERSION = 1
# The notes' text shown in index.html (the whole text is in notes.json).
INDEX_NOTE_CHARS = 2000

_templates = Environment(
    loader=PackageLoader("casefile.exports", "templates"),
    autoescape=select_autoescape(default=True, default_for_string=True),
    trim_blocks=True,
    lstrip_blocks=True,
)


@dataclass(frozen=True)
class Built:
    path: Path
    sha256: str
    size: int
    summary: dict[str, Any]


@dataclass(frozen=True)
class Plan:
    """What the caller may read of the matter, decided before anything is written."""

    documents: bool
    audit: bool
    omitted: list[dict[str, str]]


async def plan(session: AsyncSession, principal: Principal, case: Case) -> Plan:
    omitted = []
    documents = principal.can(Permission.READ_DOCUMENTS)
    if not documents:
        omitted.append({"section": "documents", "reason": "needs the read:documents permission"})
    # The matter's trail is read with `manage` on it (GET /cases/{id}/audit).
    audit = await level_on(session, principal, case) >= Level.MANAGE
    if not audit:
        omitted.append({"section": "audit", "reason": "needs manage on the matter"})
    if not principal.can(Permission.READ_CONTACTS):
        omitted.append({"section": "contacts", "reason": "needs the read:contacts permission (ids only)"})
    return Plan(documents=documents, audit=audit, omitted=omitted)


async def build(
    runtime: Runtime,
    session: AsyncSession,
    principal: Principal,
    case: Case,
    *,
    export_id: str,
    requested_at: datetime,
    head: AuditTreeHead | None,
    on_total: Callable[[int], None],
    on_file: Callable[[ManifestFile], Awaitable[None]],
) -> Built:
    """Write the zip of `case` as `principal` may read it; its audit entries up to `head`."""
    what = await plan(session, principal, case)
    files = await contents.document_files(session, case.id) if what.documents else []
    # case, documents, notes, tasks, deadlines, parties, index; the audit's two; the manifest
    on_total(len(files) + 7 + (2 if what.audit and head is not None else 0) + 1)
    handle, name = tempfile.mkstemp(prefix="export-", suffix=".zip", dir=runtime.settings.upload_temp_dir)
    os.close(handle)  # the zip opens it by name
    temp = Path(name)
    try:
        writer = ZipWriter(temp, requested_at, on_file)
        try:
            summary = await _write(
                runtime,
                session=session,
                principal=principal,
                case=case,
                what=what,
                files=files,
                writer=writer,
                head=head,
            )
            manifest = {
                "format": FORMAT,
                "format_version": FORMAT_VERSION,
                "export_id": export_id,
                "requested_at": format_timestamp(requested_at),
                "case": {"id": case.id, "number": case.case_number, "title": case.title},
                **summary,
                "files": writer.files,
            }
            await writer.close(dumps(manifest, indent=2))
        except BaseException:
            writer.abort()
            raise
        sha256, size = await anyio.to_thread.run_sync(file_sha256, temp)
        return Built(temp, sha256, size, summary)
    except BaseException:
        await anyio.to_thread.run_sync(lambda: temp.unlink(missing_ok=True))
        raise


async def _write(
    runtime: Runtime,
    *,
    session: AsyncSession,
    principal: Principal,
    case: Case,
    what: Plan,
    files: list[contents.DocumentFile],
    writer: ZipWriter,
    head: AuditTreeHead | None,
) -> dict[str, Any]:
    case_record = CaseOut.dump_for(case, principal)
    await writer.add_json("case.json", case_record)
    documents = []
    for file in files:
        await writer.add(file.path, runtime.store.read(file.sha256), compress=False)
        documents.append(contents.document_record(file, principal))
    await writer.add_json_array("documents.json", each(documents))
    note_count, note_previews = 0, list[dict[str, Any]]()

    async def counted_notes() -> Any:
        nonlocal note_count
        async for note in contents.notes(session, case.id):
            note_count += 1
            if len(note_previews) < 1000:
                note_previews.append({**note, "body": note["body"][:INDEX_NOTE_CHARS]})
            yield note

    await writer.add_json_array("notes.json", counted_notes())
    tasks = await contents.tasks(session, case.id, principal)
    await writer.add_json("tasks.json", tasks)
    deadlines = await contents.deadlines(session, case.id)
    await writer.add_json("deadlines.json", deadlines)
    parties = await contents.parties(session, case.id, principal)
    await writer.add_json("parties.json", parties)
    audit = await _write_audit(session, case, what, writer, head)
    summary: dict[str, Any] = {
        "counts": {
            "documents": len(documents),
            "document_bytes": sum(file.size for file in files),
            "notes": note_count,
            "tasks": len(tasks),
            "deadlines": len(deadlines),
            "parties": len(parties),
            "audit_entries": audit["entries"] if audit else 0,
        },
        "omitted": what.omitted,
        "audit": audit,
    }
    page = _templates.get_template("index.html").render(
        case=case_record,
        documents=documents,
        notes=note_previews,
        more_notes=note_count - len(note_previews),
        tasks=tasks,
        deadlines=deadlines,
        parties=parties,
        summary=summary,
        generated_at=format_timestamp(datetime.now().astimezone()),
    )
    await writer.add_bytes("index.html", page.encode("utf-8"))
    return summary


async def _write_audit(
    session: AsyncSession, case: Case, what: Plan, writer: ZipWriter, head: AuditTreeHead | None
) -> dict[str, Any] | None:
    """`audit/tree_head.json` (the signed head, with its key) and `audit/entries.jsonl` (each entry
    with its inclusion proof against that head)."""
    if not what.audit:
        return None
    if head is None:
        return {"entries": 0, "tree_head": None, "note": "no signed tree head yet"}
    key = await contents.public_key(session, head.key_id)
    await writer.add_json("audit/tree_head.json", contents.head_record(head, key))
    count = 0

    async def counted() -> Any:
        nonlocal count
        async for proof in contents.audit_entries(session, case.id, head):
            count += 1
            yield proof

    await writer.add_json_lines("audit/entries.jsonl", counted())
    return {"entries": count, "tree_size": head.tree_size, "key_id": head.key_id}
