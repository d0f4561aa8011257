"""`casefile export verify FILE.zip`: a matter's export checked offline (casefile.exports.verify).

Modules are imported where they are used, as in casefile.cli, so that `casefile --help` stays fast."""

from __future__ import annotations

import sys

import click


@click.group()
def export() -> None:
    """Check a matter's export (the zip of `GET /exports/{id}/content`)."""


@export.command("verify")
@click.argument("file", type=click.Path(dir_okay=False, exists=True))
@click.option(
    "--key-id",
    help="The signing key the audit entries' tree head must be signed by (GET /audit/signing-keys)",
)
def export_verify(file: str, key_id: str | None) -> None:
    """Check FILE against its manifest (every file's size and SHA-256, nothing missing or added)
    and its audit entries against their inclusion proofs and the signed tree head. Exits 1 and
    names the first mismatch. Needs no database: it runs anywhere casefile is installed."""
    from pathlib import Path

    from casefile.exports.verify import verify_export

    result = verify_export(Path(file), expected_key_id=key_id)
    for note in result.notes:
        click.echo(f"note: {note}", err=True)
    if result.broken is not None:
        click.echo(f"export broken: {result.broken} ({result.files} files checked before it)", err=True)
        sys.exit(1)
    signed = (
        f"; {result.entries} audit entries proven against the tree head of size {result.tree_size} "
        f"signed by key {result.key_id}"
        if result.tree_size is not None
        else ""
    )
    click.echo(f"export intact: {result.files} files match the manifest{signed}")
