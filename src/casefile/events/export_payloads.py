"""The event of a matter's export (`export.completed`): its type and its builder."""

from __future__ import annotations

from typing_extensions import TypedDict  # pydantic reads TypedDicts of typing_extensions before 3.12

from casefile.clock import format_timestamp, utcnow


class ExportCompleted(TypedDict):
    export_id: str
    case_id: str
    requested_by: str | None
    sha256: str
    size_bytes: int
    files: int
    documents: int
    audit_entries: int
    audit_tree_size: int | None
    completed_at: str


def export_completed(
    *,
    export_id: str,
    case_id: str,
    requested_by: str | None,
    sha256: str,
    size_bytes: int,
    files: int,
    documents: int,
    audit_entries: int,
    audit_tree_size: int | None,
) -> ExportCompleted:
    return {
        "export_id": export_id,
        "case_id": case_id,
        "requested_by": requested_by,
        "sha256": sha256,
        "size_bytes": size_bytes,
        "files": files,
        "documents": documents,
        "audit_entries": audit_entries,
        "audit_tree_size": audit_tree_size,
        "completed_at": format_timestamp(utcnow()),
    }
