"""`casefile audit export`: the whole trail, oldest first, as JSON Lines or CSV.

Each JSON line is an entry exactly as the API shows it, so its `hash` can be recomputed from the
line (docs/api-conventions.md#audit-trail). CSV has one column per field, `details` as compact
JSON. The export is of the chain as it stood when it started (entries up to the head's `seq` then),
and is itself recorded (`audit.exported`).
"""

from __future__ import annotations

import csv
import json
from collections.abc import Callable
from pathlib import Path
from typing import Any, Literal, TextIO

from casefile.audit import service
from casefile.audit.chain import HASHED_FIELDS
from casefile.db import Database

ExportFormat = Literal["jsonl", "csv"]
COLUMNS = (*HASHED_FIELDS, "hash")


class _Writer:
    def __init__(self, out: TextIO, export_format: ExportFormat) -> None:
        self.out = out
        self.csv = csv.DictWriter(out, fieldnames=COLUMNS) if export_format == "csv" else None
        if self.csv is not None:
            self.csv.writeheader()

    def write(self, entry: dict[str, Any]) -> None:
        if self.csv is None:
            self.out.write(json.dumps(entry, ensure_ascii=False, separators=(",", ":")) + "\n")
            return
        row = {
            **entry,
            "details": json.dumps(
                entry["details"], ensure_ascii=False, sort_keys=True, separators=(",", ":")
            ),
        }
        self.csv.writerow(row)


async def export(
    db: Database,
    target: Path,
    export_format: ExportFormat,
    *,
    on_start: Callable[[int], None] = lambda total: None,
    on_entry: Callable[[], None] = lambda: None,
) -> int:
    """Write the trail to `target`; return the number of entries written. `on_start` receives how
    many there will be, `on_entry` is called after each (a progress bar)."""
    written = 0
    async with db.transaction(write=False) as session:
        up_to = await service.head_seq(session)
        on_start(up_to)
        with target.open("w", encoding="utf-8", newline="") as out:
            writer = _Writer(out, export_format)
            async for entry in service.entries_in_order(session, up_to=up_to):
                writer.write(entry)
                written += 1
                on_entry()
    await service.record_apart(
        db,
        "audit.exported",
        resource_type="audit",
        details={"format": export_format, "entries": written, "file": target.name},
    )
    return written
