"""`casefile audit export`: the log, in log order, as JSON Lines or CSV; `casefile audit heads`:
the signed tree heads, as JSON Lines, to keep outside Casefile.

Each exported entry is exactly as the API shows it, so its `hash` can be recomputed from the line
(docs/api-conventions.md#audit-trail). CSV has one column per field, `details` as compact JSON. The
export holds the log as the sequencer had placed it when the export started (entries not placed
yet come in the next one), and is itself recorded (`audit.exported`).

A heads line is a signed tree head with its key's `public_key` (hex): `casefile audit verify
--kept-heads FILE` checks the log against them later, and so can anyone with the `verifier/`
package.
"""

from __future__ import annotations

import csv
import json
from collections.abc import Callable
from pathlib import Path
from typing import Any, Literal, TextIO

from casefile.audit import log_repository as store
from casefile.audit import proofs, repository, service
from casefile.audit.hashing import ENTRY_FIELDS, entry_fields
from casefile.db import Database

ExportFormat = Literal["jsonl", "csv"]
COLUMNS = (*ENTRY_FIELDS, "sequenced")


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
    """Write the log to `target`; return the number of entries written. `on_start` receives how
    many there will be, `on_entry` is called after each (a progress bar)."""
    written = 0
    async with db.transaction(write=False) as session:
        up_to = (await store.state(session)).tree_size
        on_start(up_to)
        with target.open("w", encoding="utf-8", newline="") as out:
            writer = _Writer(out, export_format)
            async for batch in repository.log_batches(session, up_to=up_to):
                for entry in batch:
                    writer.write(entry_fields(entry))
                    written += 1
                    on_entry()
    await service.record_apart(
        db,
        "audit.exported",
        resource_type="audit",
        details={"format": export_format, "entries": written, "file": target.name},
    )
    return written


async def export_heads(db: Database, out: TextIO, *, after_size: int = -1) -> int:
    """Write the signed heads larger than `after_size`, oldest first, one JSON object a line."""
    written = 0
    async with db.transaction(write=False) as session:
        keys = {key.key_id: key.public_key for key in await store.keys(session)}
        while True:
            page = await store.heads(session, after_size=after_size, limit=1000)
            for head in page:
                line = {**proofs.head_out(head), "public_key": keys.get(head.key_id)}
                out.write(json.dumps(line, separators=(",", ":")) + "\n")
                written += 1
            if len(page) < 1000:
                return written
            after_size = page[-1].tree_size
