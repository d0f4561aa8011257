"""`casefile export verify`: an export checked offline, with nothing but the zip, stopping at the
first thing wrong, which it names.

The manifest must list every other file of the zip, once, and each file must have the listed size
and SHA-256. Then the audit entries: each must hash to its `hash` (the audit trail's content rule,
or the chained rule of the entries from before the log), its leaf hash must be that hash's, and its
audit path must lead from the leaf at its position to the root of the signed tree head, whose
Ed25519 signature must verify with the public key shipped beside it (whose id, the SHA-256 of the
key, the firm publishes at `GET /audit/signing-keys`: `--key-id` pins it). Edit any entry and its
hash no longer matches; recompute its hash and the proof no longer reaches the signed root."""

from __future__ import annotations

import hashlib
import json
import zipfile
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from casefile.audit.hashing import expected_hash
from casefile.audit.merkle import leaf_hash, root_from_inclusion
from casefile.audit.signing import key_id, signature_valid

CHUNK = 1024 * 1024
MANIFEST = "manifest.json"


class Broken(Exception):
    """The first thing found wrong."""


@dataclass
class ExportCheck:
    files: int = 0
    entries: int = 0
    key_id: str | None = None
    tree_size: int | None = None
    broken: str | None = None
    notes: list[str] = field(default_factory=list)


def verify_export(path: Path, *, expected_key_id: str | None = None) -> ExportCheck:
    result = ExportCheck()
    try:
        with zipfile.ZipFile(path) as archive:
            manifest = _manifest(archive)
            _check_files(archive, manifest, result)
            _check_audit(archive, manifest, result, expected_key_id)
    except Broken as problem:
        result.broken = str(problem)
    except (zipfile.BadZipFile, OSError) as exc:
        result.broken = f"not a readable zip ({exc})"
    return result


def _manifest(archive: zipfile.ZipFile) -> dict[str, Any]:
    try:
        manifest = json.loads(archive.read(MANIFEST))
    except KeyError:
        raise Broken("the zip has no manifest.json") from None
    except ValueError as exc:
        raise Broken(f"manifest.json is not JSON ({exc})") from None
    if not isinstance(manifest, dict) or not isinstance(manifest.get("files"), list):
        raise Broken("manifest.json lists no files")
    return manifest


def _check_files(archive: zipfile.ZipFile, manifest: dict[str, Any], result: ExportCheck) -> None:
    members = [info.filename for info in archive.infolist()]
    seen: set[str] = set()
    for name in members:
        if name in seen:
            raise Broken(f"{name} is in the zip twice")
        seen.add(name)
    listed: set[str] = set()
    for item in manifest["files"]:
        name, expected_sha, expected_size = item.get("path"), item.get("sha256"), item.get("size")
        if not isinstance(name, str) or name in listed:
            raise Broken(f"the manifest lists {name!r} twice or without a name")
        listed.add(name)
        if name not in seen:
            raise Broken(f"{name}: listed in the manifest but missing from the zip")
        digest, size = hashlib.sha256(), 0
        with archive.open(name) as member:
            while block := member.read(CHUNK):
                digest.update(block)
                size += len(block)
        if size != expected_size:
            raise Broken(f"{name}: {size} bytes, the manifest says {expected_size}")
        if digest.hexdigest() != expected_sha:
            raise Broken(f"{name}: its SHA-256 is {digest.hexdigest()}, the manifest says {expected_sha}")
        result.files += 1
    extra = sorted(seen - listed - {MANIFEST})
    if extra:
        raise Broken(f"{extra[0]}: in the zip but not in the manifest")


def _check_audit(
    archive: zipfile.ZipFile, manifest: dict[str, Any], result: ExportCheck, expected_key_id: str | None
) -> None:
    audit = manifest.get("audit")
    if not audit or audit.get("tree_size") is None:
        result.notes.append("the export carries no audit entries")
        return
    try:
        head = json.loads(archive.read("audit/tree_head.json"))
        public_key, root = bytes.fromhex(head["public_key"]), bytes.fromhex(head["root_hash"])
        signature = bytes.fromhex(head["signature"])
        tree_size, timestamp = int(head["tree_size"]), int(head["timestamp"])
    except (KeyError, ValueError, TypeError) as exc:
        raise Broken(f"audit/tree_head.json is not a signed tree head with its key ({exc})") from None
    if key_id(public_key) != head.get("key_id"):
        raise Broken("audit/tree_head.json: its public key is not the key its key_id names")
    if expected_key_id is not None and head["key_id"] != expected_key_id:
        raise Broken(f"the tree head is signed by key {head['key_id']}, not the expected {expected_key_id}")
    if not signature_valid(public_key, tree_size, timestamp, root, signature):
        raise Broken("audit/tree_head.json: the signature does not verify (the head was altered)")
    if tree_size != audit["tree_size"]:
        raise Broken("the manifest and audit/tree_head.json name different tree heads")
    result.key_id, result.tree_size = head["key_id"], tree_size
    case_id = (manifest.get("case") or {}).get("id")
    with archive.open("audit/entries.jsonl") as lines:
        for number, line in enumerate(lines, start=1):
            if line.strip():
                _check_entry(json.loads(line), number, case_id, tree_size, root)
                result.entries += 1
    if result.entries != audit.get("entries"):
        raise Broken(
            f"audit/entries.jsonl holds {result.entries} entries, the manifest says {audit.get('entries')}"
        )


def _check_entry(proof: dict[str, Any], line: int, case_id: str | None, tree_size: int, root: bytes) -> None:
    try:
        entry, index = proof["entry"], int(proof["leaf_index"])
        path = [bytes.fromhex(node) for node in proof["audit_path"]]
        where = f"audit entry {entry['id']} (line {line})"
        stated = bytes.fromhex(entry["hash"])
    except (KeyError, ValueError, TypeError) as exc:
        raise Broken(f"audit/entries.jsonl line {line} is not an entry with its proof ({exc})") from None
    if entry.get("case_id") != case_id:
        raise Broken(f"{where}: it is not an entry of this matter")
    if entry["hash"] not in {expected_hash(entry, legacy=False), expected_hash(entry, legacy=True)}:
        raise Broken(f"{where}: its content does not match its hash (the entry was edited)")
    if entry.get("seq") != index + 1:
        raise Broken(f"{where}: its position is not the one its proof is for")
    if root_from_inclusion(index, tree_size, leaf_hash(stated), path) != root:
        raise Broken(
            f"{where}: its inclusion proof does not lead to the signed root (not in the log as signed)"
        )
