"""The in-process vector index: every passage's embedding in one float32 matrix, searched by
brute-force dot product (the vectors are L2-normalised, so this is cosine similarity).

Measured choice (docs/research/local-ai-options.md §6): numpy over 100,000 x 384 answers in a few
milliseconds, faster than sqlite-vec, and pgvector is not available. Vectors live in the
database; each process keeps one index per database, loaded on first use and kept current:

* before each query it reads only the passages with an id above the highest it holds (new
  passages always get higher ids: PostgreSQL's sequence, and on SQLite ids chosen by
  `repository.replace_passages`);
* passages that are gone (a document re-processed or deleted) are noticed two ways: the search
  service hands back candidates whose rows no longer exist (`discard`), and every
  `RECONCILE_SECONDS` a count of the table is compared with the index's; on a difference the ids
  are compared and the missing rows dropped. A dropped row's vector is zeroed (it can never pass
  the similarity floor) and the matrix is compacted once a quarter of it is dead.

The matrix product runs in a worker thread (`search` is synchronous; callers use
`asyncio.to_thread`); the index's arrays only change under a lock, and a search works on a
snapshot of them, so a concurrent catch-up never disturbs it.
"""

from __future__ import annotations

import hashlib
import threading
import time
from dataclasses import dataclass

import numpy as np
import numpy.typing as npt
from sqlalchemy.ext.asyncio import AsyncSession

from casefile.nlp.types import EMBEDDING_DIM
from casefile.search import repository

RECONCILE_SECONDS = 30.0
LOAD_BATCH = 10_000

IntArray = npt.NDArray[np.int64]
FloatArray = npt.NDArray[np.float32]


def document_key(document_id: str) -> int:
    """A 64-bit fingerprint of a document id: lets the index notice an id that now belongs to
    another document's passage."""
    return int.from_bytes(
        hashlib.blake2b(document_id.encode(), digest_size=8).digest(), "little", signed=True
    )


@dataclass(frozen=True)
class Match:
    passage_id: int
    similarity: float


class VectorIndex:
    def __init__(self, key: str = "", *, reconcile_seconds: float = RECONCILE_SECONDS) -> None:
        self.key = key  # the database's
        self._lock = threading.Lock()
        self._ids: IntArray = np.empty(0, dtype=np.int64)
        self._docs: IntArray = np.empty(0, dtype=np.int64)
        self._matrix: FloatArray = np.empty((0, EMBEDDING_DIM), dtype=np.float32)
        self._size = 0  # rows in use (live and dead)
        self._dead = 0
        self._position: dict[int, int] = {}  # passage id -> row, live rows only
        self.max_id = 0
        self._reconcile_seconds = reconcile_seconds
        self._last_reconcile = time.monotonic()

    @property
    def live(self) -> int:
        return self._size - self._dead

    # ---- keeping current -------------------------------------------------------------------------

    async def catch_up(self, session: AsyncSession) -> None:
        """Read the passages added since the last call and, every so often, drop removed ones."""
        if self._size == 0:
            # First load: room for everything at once plus a quarter, so that new passages do not
            # reallocate (and copy) the whole matrix until the collection has grown by that much.
            count = await repository.passage_count(session)
            self._reserve(count + count // 4 + 1024)
        while True:
            rows = await repository.vectors_after(session, self.max_id, LOAD_BATCH)
            self._append(rows)
            if len(rows) < LOAD_BATCH:
                break
        if time.monotonic() - self._last_reconcile >= self._reconcile_seconds:
            await self.reconcile(session)

    async def reconcile(self, session: AsyncSession) -> None:
        """Drop passages the database no longer holds (cheap count first, ids only on a change)."""
        self._last_reconcile = time.monotonic()
        if await repository.passage_count(session) == self.live:
            return
        keys = await repository.passage_keys(session)
        present = {passage_id: document_key(document_id) for passage_id, document_id in keys}
        with self._lock:
            gone = [pid for pid, row in self._position.items() if present.get(pid) != self._docs[row]]
        self.discard(gone)
        missing = [pid for pid in present if pid <= self.max_id and pid not in self._position]
        if missing:  # ids reused by another process (SQLite): read those vectors again
            self._append(await repository.vectors_of(session, missing))

    def _append(self, rows: list[tuple[int, str, bytes]]) -> None:
        if not rows:
            return
        ids = np.fromiter((r[0] for r in rows), dtype=np.int64, count=len(rows))
        docs = np.fromiter((document_key(r[1]) for r in rows), dtype=np.int64, count=len(rows))
        vectors = np.frombuffer(b"".join(r[2] for r in rows), dtype="<f4").reshape(len(rows), EMBEDDING_DIM)
        with self._lock:
            replaced = [int(i) for i in ids if int(i) in self._position]
            self._discard_locked(replaced)
            needed = self._size + len(rows)
            if needed > len(self._ids):
                self._reserve_locked(max(needed, len(self._ids) + len(self._ids) // 4, 1024))
            end = self._size + len(rows)
            self._ids[self._size : end] = ids
            self._docs[self._size : end] = docs
            self._matrix[self._size : end] = vectors
            for offset, passage_id in enumerate(ids.tolist()):
                self._position[passage_id] = self._size + offset
            self._size = end
            self.max_id = max(self.max_id, int(ids.max()))

    def _reserve(self, capacity: int) -> None:
        with self._lock:
            if capacity > len(self._ids):
                self._reserve_locked(capacity)

    def _reserve_locked(self, capacity: int) -> None:
        # New arrays (a search may be reading the old ones); grown by a quarter at a time.
        self._ids = _grown(self._ids, capacity)
        self._docs = _grown(self._docs, capacity)
        matrix = np.zeros((capacity, EMBEDDING_DIM), dtype=np.float32)
        matrix[: self._size] = self._matrix[: self._size]
        self._matrix = matrix

    def discard(self, passage_ids: list[int]) -> None:
        """Forget passages whose rows are gone."""
        if passage_ids:
            with self._lock:
                self._discard_locked(passage_ids)

    def _discard_locked(self, passage_ids: list[int]) -> None:
        for passage_id in passage_ids:
            row = self._position.pop(passage_id, None)
            if row is not None:
                self._matrix[row] = 0.0
                self._dead += 1
        if self._dead > max(1000, self._size // 4):
            self._compact_locked()

    def _compact_locked(self) -> None:
        keep = np.fromiter(sorted(self._position.values()), dtype=np.int64)
        # New arrays: a search running on a snapshot of the old ones is not disturbed.
        self._ids = self._ids[keep].copy()
        self._docs = self._docs[keep].copy()
        self._matrix = self._matrix[keep].copy()
        self._size = len(keep)
        self._dead = 0
        self._position = {int(pid): row for row, pid in enumerate(self._ids.tolist())}

    # ---- searching -------------------------------------------------------------------------------

    def search(self, query: FloatArray, *, k: int, min_similarity: float) -> list[Match]:
        """The `k` most similar passages at or above `min_similarity`, best first. CPU work: call
        it through `asyncio.to_thread`."""
        with self._lock:
            size = self._size
            ids, matrix = self._ids[:size], self._matrix[:size]
        if size == 0:
            return []
        scores = matrix @ query.astype(np.float32).reshape(EMBEDDING_DIM)
        top = np.argpartition(-scores, k - 1)[:k] if size > k else np.arange(size)
        top = top[scores[top] >= min_similarity]
        top = top[np.argsort(-scores[top], kind="stable")]
        return [Match(int(ids[i]), float(scores[i])) for i in top]

    def memory_bytes(self) -> int:
        return int(self._matrix.nbytes + self._ids.nbytes + self._docs.nbytes)


def _grown(array: IntArray, capacity: int) -> IntArray:
    grown = np.zeros(capacity, dtype=array.dtype)
    grown[: len(array)] = array
    return grown


# One index per database per process, created on first use.
_registry: dict[str, VectorIndex] = {}
_registry_lock = threading.Lock()


def index_for(session: AsyncSession) -> VectorIndex:
    key = repository.database_key(session)
    with _registry_lock:
        index = _registry.get(key)
        if index is None:
            index = _registry[key] = VectorIndex(key)
        return index


def forget_indexes() -> None:
    """Drop every index (tests and benchmarks measuring a cold load)."""
    with _registry_lock:
        _registry.clear()
