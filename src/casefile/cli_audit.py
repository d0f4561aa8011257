"""`casefile audit`: verify the audit log, export it, and export its signed tree heads.

Modules are imported where they are used, as in casefile.cli, so that `casefile --help` stays fast."""

from __future__ import annotations

import json
import sys
from typing import TYPE_CHECKING, TextIO

import click

if TYPE_CHECKING:
    from collections.abc import Callable

    from casefile.settings import Settings


def _settings() -> Settings:
    """The settings, the data dir, the database and Redis checked (casefile.preflight): a problem
    ends the command with its one or two lines, never a traceback."""
    from casefile.preflight import settings_for_command

    return settings_for_command(checked=True)


@click.group()
def audit() -> None:
    """Check and export the audit log, and export its signed tree heads."""


async def _verify_audit(settings: Settings, kept_heads: list[dict[str, object]]) -> object:
    from casefile.audit.verification import verify
    from casefile.db import Database

    db = Database(settings)
    try:
        async with db.transaction(write=False) as session:
            return await verify(session, kept_heads)
    finally:
        await db.dispose()


@audit.command("verify")
@click.option(
    "--kept-heads",
    type=click.Path(dir_okay=False, exists=True),
    help="Tree heads kept outside Casefile (JSON Lines from `casefile audit heads` or `audit.tree_head` "
    "webhooks): the log must still match every one of them",
)
def audit_verify(kept_heads: str | None) -> None:
    """Check the whole log against its signed tree heads, oldest entry first. Exits 1 and names
    the first thing wrong: an entry edited, deleted, inserted or moved, the log truncated, a tree
    head altered, or (with --kept-heads) the log rewritten since a head was kept."""
    from pathlib import Path

    from casefile.audit.verification import Verification

    kept: list[dict[str, object]] = []
    if kept_heads is not None:
        try:
            lines = Path(kept_heads).read_text(encoding="utf-8").splitlines()
            kept = [_kept_head(json.loads(line)) for line in lines if line.strip()]
        except (ValueError, KeyError, TypeError) as exc:
            raise click.ClickException(
                f"{kept_heads}: not tree heads, one JSON object a line ({exc})"
            ) from exc
    import asyncio

    result = asyncio.run(_verify_audit(_settings(), kept))
    assert isinstance(result, Verification)
    for note in result.notes:
        click.echo(f"note: {note}", err=True)
    if result.broken is not None:
        click.echo(
            f"audit log broken at {result.broken.describe()} ({result.checked} entries before it are intact)",
            err=True,
        )
        sys.exit(1)
    kept_note = f", {result.kept} kept heads" if kept else ""
    click.echo(
        f"audit log intact: {result.checked} entries, {result.heads} signed tree heads{kept_note}; "
        f"{result.waiting} entries wait for the sequencer"
    )


def _kept_head(line: dict[str, object]) -> dict[str, object]:
    """A head line, or a webhook delivery's body whose `data` is one."""
    head = line.get("data") if isinstance(line.get("data"), dict) else line
    assert isinstance(head, dict)
    for name in ("tree_size", "root_hash", "timestamp", "key_id", "signature"):
        if name not in head:
            raise KeyError(name)
    return head


@audit.command("heads")
@click.option("--output", type=click.Path(dir_okay=False), help="File to write (default: standard output)")
@click.option(
    "--after-size", type=int, default=-1, help="Only heads of larger trees (to append to a kept file)"
)
def audit_heads(output: str | None, after_size: int) -> None:
    """Export the signed tree heads, oldest first, one JSON object a line with the key's public
    key: keep them outside Casefile, and check the log against them with `audit verify
    --kept-heads`."""
    import asyncio

    from casefile.audit.export import export_heads
    from casefile.db import Database

    settings = _settings()

    async def run(out: TextIO) -> int:
        db = Database(settings)
        try:
            return await export_heads(db, out, after_size=after_size)
        finally:
            await db.dispose()

    if output is None:
        asyncio.run(run(sys.stdout))
        return
    with open(output, "a", encoding="utf-8") as out:
        written = asyncio.run(run(out))
    click.echo(f"appended {written} tree heads to {output}", err=True)


@audit.command("export")
@click.option("--output", required=True, type=click.Path(dir_okay=False), help="File to write")
@click.option(
    "--format",
    "export_format",
    type=click.Choice(["jsonl", "csv"]),
    default="jsonl",
    show_default=True,
    help="JSON Lines (each entry as the API shows it) or CSV",
)
@click.option("--force", is_flag=True, help="Overwrite the file if it exists")
def audit_export(output: str, export_format: str, force: bool) -> None:
    """Export the log, in log order, with a progress bar (on stderr). The export is recorded in
    the trail (`audit.exported`)."""
    from contextlib import ExitStack
    from pathlib import Path

    from casefile.audit.export import export
    from casefile.db import Database

    target = Path(output)
    if target.exists() and not force:
        raise click.ClickException(f"{target} exists (use --force to overwrite it)")
    settings = _settings()

    async def run(bars: ExitStack) -> int:
        advance: list[Callable[[int], None]] = []

        def start(total: int) -> None:  # the bar is made once the number of entries is known
            bar = bars.enter_context(click.progressbar(length=total, label="exporting", file=sys.stderr))
            advance.append(bar.update)

        db = Database(settings)
        try:
            return await export(
                db,
                target,
                "csv" if export_format == "csv" else "jsonl",
                on_start=start,
                on_entry=lambda: advance[0](1),
            )
        finally:
            await db.dispose()

    import asyncio

    with ExitStack() as bars:
        written = asyncio.run(run(bars))
    click.echo(f"exported {written} entries to {target}")
