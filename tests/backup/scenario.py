"""The backup tests' scenario: a source server with data and a webhook, writers that keep going
during the backup, a target to restore into, and the commands an operator types."""

from __future__ import annotations

import asyncio
import os
import secrets
import subprocess
import threading
from contextlib import ExitStack
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import httpx
from sqlalchemy import text

from casefile.db import make_engine
from casefile.settings import Settings
from tests.support.assertions import ok
from tests.support.factories import new_case
from tests.support.processes import CASEFILE, settings_env
from tests.support.receivers import Receiver
from tests.support.servers import Api, fresh_database, make_settings

SECRET = "whsec_backup_0123456789abcdef"
OTHER_SECRET = "whsec_other_hook_0123456789"
PDF = b"%PDF-1.4\n1 0 obj << /Type /Catalog >> endobj\ntrailer << /Root 1 0 R >>\n%%EOF\n"


def cli_env(settings: Settings) -> dict[str, str]:
    """The environment of a `casefile` command on `settings`' data dir and database. The keys stay
    in the data dir, where a default install generates them, so the backup has to carry them."""
    env = settings_env(settings)
    env.pop("CASEFILE_SECRET_KEY")
    env.pop("CASEFILE_JWT_SECRET")
    return env


def casefile(*args: str, env: dict[str, str]) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [CASEFILE, *args], check=False, env=env, capture_output=True, text=True, timeout=300
    )


def table_count(settings: Settings) -> int:
    async def count() -> int:
        engine = make_engine(settings, pooled=False)
        try:
            async with engine.connect() as conn:
                query = "SELECT count(*) FROM pg_tables WHERE schemaname = 'public'"
                return int((await conn.execute(text(query))).scalar_one())
        finally:
            await engine.dispose()

    return asyncio.run(count())


def upload(client: httpx.Client, case_id: str, content: bytes, name: str, **form: Any) -> dict[str, Any]:
    files = {"file": (name, content, "application/octet-stream")}
    return dict(ok(client.post(f"/cases/{case_id}/documents", data=form, files=files), 201))


def every(client: httpx.Client, path: str) -> list[dict[str, Any]]:
    found: list[dict[str, Any]] = []
    page = 1
    while True:
        r = client.get(path, params={"limit": 100, "page": page})
        items = ok(r)
        found += items
        if len(items) < 100:
            return found
        page += 1


@dataclass
class Source:
    """A server with data, and the backup taken of it while a writer kept changing it."""

    api: Api
    receiver: Receiver
    archive: Path
    backup: subprocess.CompletedProcess[str]
    uploaded: dict[str, bytes] = field(default_factory=dict)  # every document ever uploaded
    before: set[str] = field(default_factory=set)  # cases that existed before the backup began
    deleted_during: set[str] = field(default_factory=set)  # documents deleted while it ran
    # Documents given a new version: the bytes of each version, from 1 (the last is `uploaded`'s).
    versions: dict[str, list[bytes]] = field(default_factory=dict)


@dataclass
class Target:
    settings: Settings
    env: dict[str, str]


def make_target(stack: ExitStack, backend: str, root: Path) -> Target:
    data_dir = root / f"restored-{secrets.token_hex(4)}"
    url = stack.enter_context(fresh_database(backend, data_dir))
    settings = make_settings(data_dir, url)
    env = {k: v for k, v in os.environ.items() if not k.startswith("CASEFILE_")}
    env["CASEFILE_DATA_DIR"] = str(data_dir)
    if url:
        env["CASEFILE_DATABASE_URL"] = url
    return Target(settings, env)


def populate(api: Api, receiver: Receiver, source: Source) -> None:
    with api.admin() as admin:
        ok(
            admin.post(
                "/admin/webhooks",
                json={
                    "name": "backups",
                    "url": receiver.url,
                    "events": ["system.backup_completed"],
                    "secret": SECRET,
                },
            ),
            201,
        )
        other = ok(
            admin.post(
                "/admin/webhooks",
                json={
                    "name": "cases, paused",
                    "url": receiver.url,
                    "events": ["case.*", "document.uploaded"],
                    "secret": OTHER_SECRET,
                    "active": False,
                    "retry_policy": {"max_attempts": 3, "initial_delay": 5},
                },
            ),
            201,
        )
        # A rotation leaves the old secret signing for a grace period: that must survive too.
        rotated = {"secret": "whsec_rotated_0123456789abcdef"}
        ok(admin.post(f"/admin/webhooks/{other['id']}/rotate-secret", json=rotated))
        shared = b"Shared exhibit: the same bytes in two cases.\n"
        for i in range(12):
            case = new_case(admin, title=f"Backup case {i}")
            source.before.add(case["id"])
            contents = [(f"Memo {i}\n".encode() * (i + 1), "memo.txt"), (PDF + bytes([i]) * 50, "brief.pdf")]
            if i % 4 == 0:
                contents.append((shared, "shared.txt"))
            if i == 5:
                contents.append((os.urandom(3_000_000).hex().encode()[:3_000_000], "large.txt"))
            for content, name in contents[: 1 + i % 3]:
                doc = upload(admin, case["id"], content, name, tags='["backup"]', document_type="memo")
                source.uploaded[doc["id"]] = content
                if i % 3 == 1 and name == "memo.txt":  # revised: the archive holds every version
                    revised = content + b"Revised.\n"
                    files = {"file": ("memo.txt", revised, "text/plain")}
                    ok(admin.post(f"/documents/{doc['id']}/versions", files=files), 201)
                    source.versions[doc["id"]] = [content, revised]
                    source.uploaded[doc["id"]] = revised


class Writer(threading.Thread):
    """Keeps writing while the backup runs: new cases and documents, and deletions of documents
    it uploaded a moment before (whose files a backup may still need)."""

    def __init__(self, api: Api, source: Source) -> None:
        super().__init__(daemon=True)
        self.api, self.source = api, source
        self.stop = threading.Event()
        self.backup_running = threading.Event()
        self.writes = 0
        self.error: BaseException | None = None

    def run(self) -> None:
        try:
            with self.api.admin() as admin:
                previous: str | None = None
                while not self.stop.is_set():
                    case = new_case(admin)
                    content = f"written during the backup {secrets.token_hex(8)}\n".encode() * 50
                    doc = upload(admin, case["id"], content, "live.txt")
                    self.source.uploaded[doc["id"]] = content
                    if previous is not None:
                        # Deleted for good (trash, then purge): its content is removed.
                        ok(admin.delete(f"/documents/{previous}"))
                        ok(admin.delete(f"/admin/trash/{previous}"))
                        if self.backup_running.is_set():
                            self.source.deleted_during.add(previous)
                    previous = doc["id"]
                    self.writes += 1
        except BaseException as exc:
            self.error = exc
