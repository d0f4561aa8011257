"""The sequencer: the one background worker that builds the log out of committed entries.

Requests insert entries with their own content hash and nothing else (no position, no shared row,
no lock). Every `audit_sequence_interval_seconds` the sequencer takes the entries that have no
position yet, in id order, gives them the next positions (`seq`) and links (`prev_hash`), appends
their leaf hashes to the Merkle tree (`audit.merkle`), and signs a tree head (`audit.signing`),
all in one transaction, which also emits `audit.tree_head` (through `on_head`, given by
`casefile.background`: events sit above the audit trail).

When an entry is safe to place: as soon as the sequencer sees it. It selects entries by "has no
position yet" (`seq IS NULL`, a partial index), never by "comes after the last one placed", and
rows are only ever inserted, so an entry is visible only once its transaction has committed, and it
stays selectable until it is placed. An entry whose transaction commits after entries created
later were placed is placed in the next batch: later than its id suggests, never skipped, never
placed twice (the UPDATE takes only rows without a position, and positions are unique). The log's
order is the order of placement; within a batch, the ids' order.

One sequencer at a time: a lease on the state row (`audit_log_state`), taken when free or run out,
renewed with every batch and every third of its length when idle, handed back on a clean stop.
Every batch first locks the state row and checks the lease's fencing token, so a sequencer whose
lease was taken over (it stalled past its lease) changes nothing. A crashed one's lease runs out
and another process's sequencer takes over within `LEASE_SECONDS`.
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
import os
import secrets
import socket
from collections.abc import Awaitable, Callable
from datetime import datetime
from typing import Any

from sqlalchemy import select
from sqlalchemy.ext.asyncio import AsyncSession

from casefile.audit import log_repository as store
from casefile.audit.hashing import GENESIS_HASH
from casefile.audit.merkle import Frontier, frontier_keys, leaf_hash
from casefile.audit.signing import HeadSigner
from casefile.clock import utcnow
from casefile.db import Database
from casefile.models import AuditEntry
from casefile.settings import Settings

log = logging.getLogger(__name__)

LEASE_SECONDS = 10.0
BATCH_MAX = 5000
# A stored tree that does not give the recorded root is not extended (signing on top of it would
# vouch for it): the sequencer says so and looks again this much later.
TAMPERED_RETRY_SECONDS = 60.0

HeadAnnouncer = Callable[[AsyncSession, dict[str, Any]], Awaitable[None]]


class LogTampered(RuntimeError):
    """The stored tree does not give the root its state records."""


class Sequencer:
    def __init__(
        self,
        db: Database,
        settings: Settings,
        on_head: HeadAnnouncer | None = None,
        *,
        lease_seconds: float = LEASE_SECONDS,
        batch_max: int = BATCH_MAX,
    ) -> None:
        self.db = db
        self.interval = settings.audit_sequence_interval_seconds
        self.signer = HeadSigner.from_seed(settings.audit_signing_seed)
        self.on_head = on_head
        self.lease_seconds = lease_seconds
        self.batch_max = batch_max
        self.holder = f"{socket.gethostname()[:40]}:{os.getpid()}:{secrets.token_hex(4)}"
        self.token: int | None = None
        self.frontier = Frontier()
        self.last_hash = GENESIS_HASH
        self.last_timestamp = 0
        self.needs_head = False
        self.renewed_at = 0.0

    async def run(self, stop: asyncio.Event) -> None:
        try:
            while not stop.is_set():
                pause = self.interval
                if self.token is None:
                    try:
                        await self._lead()
                    except LogTampered:
                        log.exception("the audit log is not extended")
                        pause = TAMPERED_RETRY_SECONDS
                    if self.token is None:
                        pause = max(pause, min(self.lease_seconds / 2, 2.0))
                if self.token is not None and await self.step() >= self.batch_max:
                    continue  # more are waiting: no pause
                with contextlib.suppress(TimeoutError):
                    await asyncio.wait_for(stop.wait(), timeout=pause)
        finally:
            if self.token is not None:
                with contextlib.suppress(Exception):
                    async with self.db.transaction(write=True) as session:
                        await store.release_lease(session, self.token)
                self.token = None

    async def _lead(self) -> None:
        """Take the lease if it is free, and load the tree's right edge to append to."""
        now = utcnow()
        async with self.db.transaction(write=True) as session:
            token = await store.take_lease(session, self.holder, now, self.lease_seconds)
            if token is None:
                return
            state = await store.state(session)
            nodes = await store.nodes(session, frontier_keys(state.tree_size))
            frontier = (
                Frontier.of(state.tree_size, nodes) if len(nodes) == state.tree_size.bit_count() else None
            )
            if frontier is None or frontier.root().hex() != state.root_hash:
                await store.release_lease(session, token)
                raise LogTampered(
                    f"the stored Merkle tree of {state.tree_size} entries does not give the recorded root "
                    "hash: run `casefile audit verify`"
                )
            await store.register_key(session, self.signer.key_id, self.signer.public_key.hex(), now)
            latest = await store.latest_head(session)
            last = await session.scalar(select(AuditEntry.hash).where(AuditEntry.seq == state.tree_size))
        self.token, self.frontier = token, frontier
        self.last_hash = last if state.tree_size and last else GENESIS_HASH
        self.last_timestamp = latest.timestamp if latest else 0
        self.needs_head = latest is None or latest.tree_size != state.tree_size
        self.renewed_at = asyncio.get_running_loop().time()
        log.info("audit sequencer %s leads the log at %d entries", self.holder, state.tree_size)

    async def step(self) -> int:
        """Place what is waiting (one batch); how many entries were placed."""
        loop = asyncio.get_running_loop()
        async with self.db.transaction(write=False) as session:
            waiting = bool(await store.unplaced(session, 1))
        if not waiting and not self.needs_head:
            if loop.time() - self.renewed_at > self.lease_seconds / 3:
                await self._renew()
            return 0
        return await self._place_batch()

    async def _renew(self) -> None:
        assert self.token is not None
        async with self.db.transaction(write=True) as session:
            held = await store.renew_lease(session, self.token, utcnow(), self.lease_seconds)
        self._after_renewal(held)

    def _after_renewal(self, held: bool) -> None:
        if held:
            self.renewed_at = asyncio.get_running_loop().time()
        else:
            log.warning("audit sequencer %s lost its lease; another one leads", self.holder)
            self.token = None

    async def _place_batch(self) -> int:
        assert self.token is not None
        now = utcnow()
        frontier, last_hash = self.frontier.copy(), self.last_hash
        async with self.db.transaction(write=True) as session:
            state = await store.state(session, lock=True)
            if state.lease_token != self.token or state.tree_size != frontier.size:
                self._after_renewal(False)
                return 0
            rows = await store.unplaced(session, self.batch_max)
            if not rows and not self.needs_head:
                await store.renew_lease(session, self.token, now, self.lease_seconds)
                self.renewed_at = asyncio.get_running_loop().time()
                return 0
            if self.needs_head and rows and frontier.size:
                # The log as it was before this batch has no head yet (the chain migration 0017
                # put in it): it gets its own, so it can be kept and proven on its own.
                await self._record_head(session, self._signed_head(frontier, now))
            placed, nodes = [], []
            for entry_id, entry_hash in rows:
                placed.append(
                    {"entry_id": entry_id, "new_seq": frontier.size + 1, "new_prev_hash": last_hash}
                )
                nodes.extend(frontier.append(leaf_hash(bytes.fromhex(entry_hash))))
                last_hash = entry_hash
            if placed:
                await store.place(session, placed)
            await store.add_nodes(session, nodes)
            head = self._signed_head(frontier, now)
            await self._record_head(session, head)
            state.tree_size, state.root_hash = frontier.size, head["root_hash"]
            await store.renew_lease(session, self.token, now, self.lease_seconds)
        self.frontier, self.last_hash = frontier, last_hash
        self.last_timestamp, self.needs_head = head["timestamp"], False
        self.renewed_at = asyncio.get_running_loop().time()
        return len(placed)

    async def _record_head(self, session: AsyncSession, head: dict[str, Any]) -> None:
        await store.add_head(session, head)
        self.last_timestamp = head["timestamp"]
        if self.on_head is not None:
            await self.on_head(session, head)

    def _signed_head(self, frontier: Frontier, now: datetime) -> dict[str, Any]:
        root = frontier.root()
        # Never earlier than the previous head, whatever the clock did.
        timestamp = max(int(now.timestamp() * 1000), self.last_timestamp)
        return {
            "tree_size": frontier.size,
            "root_hash": root.hex(),
            "timestamp": timestamp,
            "key_id": self.signer.key_id,
            "signature": self.signer.sign(frontier.size, timestamp, root).hex(),
        }
