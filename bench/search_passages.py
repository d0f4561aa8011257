"""`GET /search` latency over 100,000 document passages, on SQLite and on PostgreSQL, plus the
in-process vector index's load and catch-up times and memory.

What it does, per database (see docs/research/bench-notes-2026-11.md, "Search over passages"):

1. creates a fresh database (SQLite: a file in a temporary data dir; PostgreSQL: a dedicated
   database, default `casefile_bench_search`, dropped at the end) and migrates it;
2. synthesises N passages (default 100,000) from varied legal templates, 10 per document, 100
   documents per case. Vectors: `--real` passages (default 1,000) are embedded with the real
   model; every other passage gets a real vector plus Gaussian noise, renormalised (cosine ~0.9 to
   its source), so the similarity distribution resembles real data without embedding 100k texts
   (~40 min on this VM). Everything is stored through the same table the pipeline writes;
3. measures, in this process, the vector index's cold load, a catch-up with nothing new, a
   catch-up after 100 new passages, a bare numpy top-k, and the index's memory;
4. starts the real server (`casefile serve --no-worker`, AI processing off) on a free loopback
   port and times `GET /api/v1/search` end to end over HTTP, one request at a time: the first
   (cold) request, then warm-up requests, then `--requests` timed ones cycling through keyword and
   paraphrase queries (limit 20);
5. prints a table and writes JSON to `bench/results/search_passages-<backend>-<timestamp>.json`.

Bounded by `--deadline-minutes`; stops the server and drops the database on every exit path.
All traffic stays on loopback.
"""

from __future__ import annotations

import argparse
import asyncio
import json
import os
import platform
import random
import resource
import shutil
import signal
import socket
import statistics
import subprocess
import sys
import tempfile
import time
from collections.abc import Iterator
from contextlib import contextmanager, suppress
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

import asyncpg
import httpx
import numpy as np
import smoke
from sqlalchemy import insert
from sqlalchemy.engine import make_url

from casefile.db import Database
from casefile.migrate import upgrade
from casefile.models import Case, Document, Passage
from casefile.nlp.embedder import get_embedder
from casefile.nlp.types import EMBEDDING_DIM
from casefile.search.vector_index import VectorIndex
from casefile.settings import Settings

ROOT = Path(__file__).resolve().parent.parent
RESULTS_DIR = ROOT / "bench" / "results"
ADMIN_EMAIL, ADMIN_PASSWORD = "bench@casefile.test", "Bench-Passw0rd-search"
PER_DOCUMENT, PER_CASE = 10, 100

PARTIES = [
    "Harborview Properties",
    "Bluefin Analytics",
    "Cascade Logistics",
    "Meridian Credit",
    "Summit Roofing",
    "Lakeshore Development",
    "Redwood Mutual",
    "Vantage Software",
    "Atlas Turbine",
    "Greenfield Energy",
    "Northpoint Software",
    "Quanta Labs",
    "Kestrel Biotech",
    "Northgate Pharmaceuticals",
    "Marlowe Foods",
    "Castellan Distribution",
    "Pinecrest Realty",
    "Ardent Cloud",
    "Whitmore & Pike",
    "Brightline Staffing",
]
PEOPLE = [
    "Maria Chen",
    "Daniel Okafor",
    "Teresa Morales",
    "Anil Patel",
    "Rachel Goldberg",
    "Brian Kessler",
    "Helen Thornbury",
    "Kevin Nguyen",
    "Sarah Whitaker",
    "Victor Sandoval",
    "Laura Chen",
    "Oliver Grant",
]
TEMPLATES = [
    "{a} shall pay {b} the sum of ${n:,}.00 within {d} days after the effective date, and interest accrues "
    "at {p} percent per year on any amount not paid when due.",
    "The tenant failed to pay rent for {m1} and {m2}, and the landlord served a notice to cure giving "
    "{d} days to pay ${n:,}.00 in arrears before terminating the lease.",
    "On {m1} {d}, {y}, {x} testified at deposition that the {thing} was inspected by the field service "
    "engineers of {a} and that no defect was reported to {b}.",
    "{a} moves for summary judgment because there is no genuine dispute of material fact and the policy "
    "excluded damage caused by continuous seepage over {d} days or more.",
    "The employee alleges that {a} terminated her employment in retaliation for complaints of discrimination "
    "and unpaid overtime, and seeks ${n:,} in back pay and liquidated damages.",
    "Each party shall keep the other party's confidential information secret, use it solely to evaluate the "
    "proposed {thing} licence, and return or destroy it within {d} days of a written request.",
    "The court grants the motion to compel: {a} shall produce the emails of its custodians and a privilege "
    "log by {m1} {d}, {y}, and shall pay the reasonable expenses of the motion.",
    "{x} downloaded {n:,} files from the source code repository of {a} two days before resigning to join "
    "{b}, a direct competitor, according to the forensic examination.",
    "The supplier shall meet {p} percent monthly availability for the hosted {thing}; if it falls below that "
    "level the customer receives service credits of {d} percent of the monthly charge.",
    "{x} died intestate on {m1} {d}, {y}, survived by a spouse and two children, and left real property "
    "and a brokerage account worth ${n:,}.",
    "Invoice for professional services: review of production, drafting of the motion, and preparation for "
    "the deposition of {x}, {d} hours in total, amount due ${n:,}.00 within thirty days.",
    "{b} did not purchase the minimum annual volume of products required by the distribution agreement with "
    "{a}, and the shortfall of EUR {n:,} was not cured after notice of breach.",
]
THINGS = [
    "turbine",
    "platform",
    "compound",
    "pricing engine",
    "roof membrane",
    "warehouse system",
    "software",
]
MONTHS = [
    "January",
    "February",
    "March",
    "April",
    "May",
    "June",
    "July",
    "August",
    "September",
    "October",
    "November",
    "December",
]
FILLER = (
    "The parties reserve all other rights and remedies. Nothing in this paragraph waives any objection. "
    "Capitalised terms have the meanings given in the agreement. "
)

QUERIES = {
    "keyword": [
        "unpaid rent notice to cure",
        "motion to compel emails privilege log",
        "summary judgment seepage",
        "confidential information licence",
        "service credits availability",
        "died intestate spouse",
        "overtime discrimination back pay",
        "deposition field service engineers",
        "Kessler source code",
        "minimum annual volume distribution",
    ],
    "paraphrase": [
        "tenant eviction nonpayment",
        "ex-employee took trade secrets to a rival",
        "insurer wins without a trial",
        "who inherits when someone dies without a will",
        "hosting outage refunds",
        "worker fired for complaining about bias",
        "court orders the other side to hand over documents",
        "non-disclosure of secret data",
        "lawyer's bill for litigation work",
        "reseller missed its purchase targets",
    ],
}


def passage_text(rng: random.Random) -> str:
    sentences = []
    for _ in range(rng.randint(2, 4)):
        a, b = rng.sample(PARTIES, 2)
        sentences.append(
            rng.choice(TEMPLATES).format(
                a=a,
                b=b,
                x=rng.choice(PEOPLE),
                n=rng.randint(1_000, 2_000_000),
                d=rng.randint(2, 60),
                p=rng.choice([5, 7, 9, 10, 99.5, 99.9]),
                m1=rng.choice(MONTHS),
                m2=rng.choice(MONTHS),
                y=rng.randint(2015, 2026),
                thing=rng.choice(THINGS),
            )
        )
    if rng.random() < 0.5:
        sentences.append(FILLER)
    return " ".join(sentences)


def make_vectors(texts: list[str], real: int, rng: np.random.Generator, log: Any) -> np.ndarray:
    started = time.monotonic()
    base = get_embedder().embed(texts[:real])
    log(f"  embedded {real} real passages in {time.monotonic() - started:.1f} s")
    vectors = np.empty((len(texts), EMBEDDING_DIM), dtype=np.float32)
    vectors[:real] = base
    rest = len(texts) - real
    if rest > 0:
        source = base[rng.integers(0, real, size=rest)]
        noisy = source + rng.normal(0, 0.025, size=source.shape).astype(np.float32)
        vectors[real:] = noisy / np.linalg.norm(noisy, axis=1, keepdims=True)
    return vectors


async def load(settings: Settings, texts: list[str], vectors: np.ndarray, log: Any) -> None:
    db = Database(settings)
    now = datetime.now(UTC)
    documents = len(texts) // PER_DOCUMENT
    cases = max(1, documents // PER_CASE)
    started = time.monotonic()
    try:
        async with db.transaction() as session:
            await session.execute(
                insert(Case),
                [
                    {
                        "id": f"case_bench{i:08d}",
                        "title": f"{PARTIES[i % 20]} v. {PARTIES[(i + 7) % 20]} ({i})",
                        "case_number": f"BENCH-{i:06d}",
                        "status": "active",
                        "priority": "medium",
                        "description": "Benchmark case",
                        "created_at": now,
                        "updated_at": now,
                    }
                    for i in range(cases)
                ],
            )
            await session.execute(
                insert(Document),
                [
                    {
                        "id": f"doc_bench{i:08d}",
                        "case_id": f"case_bench{i // PER_CASE:08d}",
                        "title": f"Exhibit {i}: {THINGS[i % len(THINGS)]} file",
                        "tags": [],
                        "file_name": f"e{i}.txt",
                        "file_size": 1000,
                        "file_type": "text/plain",
                        "sha256": f"{i:064x}",
                        "uploaded_at": now,
                        "updated_at": now,
                        "processing_status": "completed",
                    }
                    for i in range(documents)
                ],
            )
        batch = 5_000
        for first in range(0, len(texts), batch):
            rows = []
            for i in range(first, min(first + batch, len(texts))):
                doc = i // PER_DOCUMENT
                rows.append(
                    {
                        "document_id": f"doc_bench{doc:08d}",
                        "case_id": f"case_bench{doc // PER_CASE:08d}",
                        "passage_index": i % PER_DOCUMENT,
                        "page": 1 + (i % PER_DOCUMENT) // 3,
                        "start": 0,
                        "end": len(texts[i]),
                        "text": texts[i],
                        "embedding": vectors[i].tobytes(),
                        "created_at": now,
                    }
                )
            async with db.transaction() as session:
                await session.execute(insert(Passage), rows)
        log(
            f"  loaded {cases} cases, {documents} documents, {len(texts)} passages in "
            f"{time.monotonic() - started:.1f} s"
        )
    finally:
        await db.dispose()


def rss_mib() -> float:
    for line in Path("/proc/self/status").read_text().splitlines():
        if line.startswith("VmRSS:"):
            return int(line.split()[1]) / 1024
    return float("nan")


async def index_figures(settings: Settings, vectors: np.ndarray) -> dict[str, Any]:
    db = Database(settings)
    figures: dict[str, Any] = {}
    try:
        index = VectorIndex("bench")
        before = rss_mib()
        async with db.transaction(write=False) as session:
            started = time.perf_counter()
            await index.catch_up(session)
            figures["load_ms"] = round((time.perf_counter() - started) * 1000, 1)
        figures["passages"] = index.live
        figures["index_mib"] = round(index.memory_bytes() / 2**20, 1)
        figures["rss_growth_mib"] = round(rss_mib() - before, 1)
        timings = []
        for _ in range(20):
            async with db.transaction(write=False) as session:
                started = time.perf_counter()
                await index.catch_up(session)
                timings.append((time.perf_counter() - started) * 1000)
        figures["catch_up_nothing_new_ms_p50"] = round(statistics.median(timings), 2)
        async with db.transaction() as session:
            now = datetime.now(UTC)
            await session.execute(
                insert(Passage),
                [
                    {
                        "document_id": "doc_bench00000000",
                        "case_id": "case_bench00000000",
                        "passage_index": 1000 + i,
                        "page": 1,
                        "start": 0,
                        "end": 4,
                        "text": "new passage",
                        "embedding": vectors[i % len(vectors)].tobytes(),
                        "created_at": now,
                    }
                    for i in range(100)
                ],
            )
        async with db.transaction(write=False) as session:
            started = time.perf_counter()
            await index.catch_up(session)
            figures["catch_up_100_new_ms"] = round((time.perf_counter() - started) * 1000, 1)
        query = vectors[1]
        timings = []
        for _ in range(50):
            started = time.perf_counter()
            index.search(query, k=100, min_similarity=0.3)
            timings.append((time.perf_counter() - started) * 1000)
        figures["numpy_top100_ms_p50"] = round(statistics.median(timings), 2)
        figures["numpy_top100_ms_p95"] = round(float(np.percentile(timings, 95)), 2)
    finally:
        await db.dispose()
    return figures


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


@contextmanager
def server(settings: Settings, database_url: str | None) -> Iterator[tuple[str, int]]:
    port = free_port()
    env = {
        **os.environ,
        "CASEFILE_DATA_DIR": str(settings.data_dir),
        "CASEFILE_ADMIN_EMAIL": ADMIN_EMAIL,
        "CASEFILE_ADMIN_PASSWORD": ADMIN_PASSWORD,
        "CASEFILE_AI_ENABLED": "false",
        "CASEFILE_RATE_LIMIT_USER": "1000000/hour",
        "CASEFILE_RATE_LIMIT_LOGIN": "1000/minute",
    }
    env.pop("CASEFILE_DATABASE_URL", None)
    if database_url:
        env["CASEFILE_DATABASE_URL"] = database_url
    process = subprocess.Popen(
        [
            str(Path(sys.executable).with_name("casefile")),
            "serve",
            "--host",
            "127.0.0.1",
            "--port",
            str(port),
            "--no-worker",
            "--log-level",
            "warning",
        ],
        env=env,
        start_new_session=True,
    )
    base = f"http://127.0.0.1:{port}"
    try:
        deadline = time.monotonic() + 60
        while True:
            with suppress(httpx.HTTPError):
                if httpx.get(base + "/healthz", timeout=2).status_code == 200:
                    break
            if time.monotonic() > deadline or process.poll() is not None:
                raise RuntimeError("the server did not start")
            time.sleep(0.2)
        yield base, process.pid
    finally:
        with suppress(ProcessLookupError):
            os.killpg(process.pid, signal.SIGTERM)
        try:
            process.wait(timeout=30)
        except subprocess.TimeoutExpired:
            os.killpg(process.pid, signal.SIGKILL)
            process.wait()


def process_rss_mib(pid: int) -> float:
    for line in Path(f"/proc/{pid}/status").read_text().splitlines():
        if line.startswith("VmRSS:"):
            return int(line.split()[1]) / 1024
    return float("nan")


def time_requests(base: str, pid: int, requests: int, log: Any) -> dict[str, Any]:
    with httpx.Client(base_url=base + "/api/v1", timeout=120) as client:
        r = client.post("/auth/login", json={"email": ADMIN_EMAIL, "password": ADMIN_PASSWORD})
        r.raise_for_status()
        client.headers["Authorization"] = f"Bearer {r.json()['data']['token']}"
        rss_before = process_rss_mib(pid)
        started = time.perf_counter()
        r = client.get("/search", params={"q": "unpaid rent", "limit": 20})
        r.raise_for_status()
        cold_ms = (time.perf_counter() - started) * 1000
        rss_after = process_rss_mib(pid)
        log(f"  cold first request {cold_ms:.0f} ms (loads the model and the vector index)")
        for q in ("warm up one", "warm up two", "lease default", "patent", "court order"):
            client.get("/search", params={"q": q}).raise_for_status()
        results: dict[str, Any] = {
            "cold_first_request_ms": round(cold_ms, 1),
            "server_rss_before_first_search_mib": round(rss_before, 1),
            "server_rss_after_first_search_mib": round(rss_after, 1),
            "kinds": {},
        }
        all_timings: list[float] = []
        per_kind = max(1, requests // len(QUERIES))
        for kind, queries in QUERIES.items():
            timings, totals = [], []
            for i in range(per_kind):
                q = queries[i % len(queries)]
                started = time.perf_counter()
                r = client.get("/search", params={"q": q, "limit": 20})
                timings.append((time.perf_counter() - started) * 1000)
                r.raise_for_status()
                totals.append(r.json()["meta"]["pagination"]["total"])
            all_timings += timings
            results["kinds"][kind] = summary(timings) | {"total_median": statistics.median(totals)}
        results["all"] = summary(all_timings)
        results["server_rss_end_mib"] = round(process_rss_mib(pid), 1)
    return results


def summary(timings: list[float]) -> dict[str, Any]:
    return {
        "n": len(timings),
        "p50_ms": round(statistics.median(timings), 1),
        "p95_ms": round(float(np.percentile(timings, 95)), 1),
        "max_ms": round(max(timings), 1),
    }


async def pg_admin(url: str, sql: str) -> None:
    conn = await asyncpg.connect(url)
    try:
        await conn.execute(sql)
    finally:
        await conn.close()


@contextmanager
def database(backend: str, pg_url: str, pg_name: str, data_dir: Path) -> Iterator[str | None]:
    if backend == "sqlite":
        yield None
        return
    host = make_url(pg_url).host or ""
    if host not in ("127.0.0.1", "localhost", "::1"):
        raise SystemExit(f"refusing a non-loopback PostgreSQL host: {host}")
    asyncio.run(pg_admin(pg_url, f'DROP DATABASE IF EXISTS "{pg_name}" WITH (FORCE)'))
    asyncio.run(pg_admin(pg_url, f'CREATE DATABASE "{pg_name}"'))
    try:
        yield make_url(pg_url).set(database=pg_name).render_as_string(hide_password=False)
    finally:
        asyncio.run(pg_admin(pg_url, f'DROP DATABASE IF EXISTS "{pg_name}" WITH (FORCE)'))


def run_backend(
    backend: str, args: argparse.Namespace, texts: list[str], vectors: np.ndarray
) -> dict[str, Any]:
    def log(message: str) -> None:
        print(f"[{backend}] {message}", flush=True)

    data_dir = Path(tempfile.mkdtemp(prefix=f"casefile-bench-search-{backend}-"))
    try:
        with database(backend, args.pg_url, args.pg_database, data_dir) as url:
            settings = Settings(_env_file=None, data_dir=data_dir, database_url=url)
            settings.ensure_data_dir()
            upgrade(settings)
            asyncio.run(load(settings, texts, vectors, log))
            if backend == "postgresql":
                asyncio.run(pg_admin(url or "", "VACUUM ANALYZE passages"))
            index = asyncio.run(index_figures(settings, vectors))
            log(f"  index: {index}")
            with server(settings, url) as (base, pid):
                http = time_requests(base, pid, args.requests, log)
            log(f"  search: {http['all']}")
            return {"index": index, "search": http}
    finally:
        shutil.rmtree(data_dir, ignore_errors=True)


def main() -> None:
    parser = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    parser.add_argument("--passages", type=int, default=100_000)
    parser.add_argument("--real", type=int, default=1_000, help="passages embedded with the real model")
    parser.add_argument("--requests", type=int, default=200, help="timed requests per backend")
    parser.add_argument("--backends", default="sqlite,postgresql")
    parser.add_argument("--pg-url", default="postgresql://postgres@127.0.0.1:5432/postgres")
    parser.add_argument("--pg-database", default="casefile_bench_search")
    parser.add_argument("--deadline-minutes", type=float, default=30)
    args = smoke.parse_args(parser, passages=50, real=5, requests=2, backends="sqlite", deadline_minutes=3)
    if not 1 <= args.passages <= 1_000_000 or not 1 <= args.requests <= 10_000:
        raise SystemExit("--passages 1..1,000,000 and --requests 1..10,000")
    signal.signal(signal.SIGALRM, lambda *_: (_ for _ in ()).throw(TimeoutError("deadline reached")))
    signal.alarm(int(args.deadline_minutes * 60))

    rng = random.Random(20261122)
    texts = [passage_text(rng) for _ in range(args.passages)]
    vectors = make_vectors(texts, min(args.real, args.passages), np.random.default_rng(7), print)
    results: dict[str, Any] = {
        "date": datetime.now(UTC).isoformat(timespec="seconds"),
        "machine": f"{platform.machine()}, {os.cpu_count()} cpus, Python {platform.python_version()}",
        "passages": args.passages,
        "real_vectors": min(args.real, args.passages),
        "words_per_passage_mean": round(statistics.mean(len(t.split()) for t in texts), 1),
        "bench_rss_peak_mib": None,
        "backends": {},
    }
    for backend in args.backends.split(","):
        results["backends"][backend] = run_backend(backend.strip(), args, texts, vectors)
    results["bench_rss_peak_mib"] = round(resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024, 1)

    if not args.smoke:
        RESULTS_DIR.mkdir(parents=True, exist_ok=True)
        stamp = datetime.now(UTC).strftime("%Y%m%dT%H%M%SZ")
        path = RESULTS_DIR / f"search_passages-{'-'.join(results['backends'])}-{stamp}.json"
        path.write_text(json.dumps(results, indent=2))
    print(f"\n{'backend':12} {'kind':11} {'n':>4} {'p50 ms':>8} {'p95 ms':>8} {'max ms':>8} {'total':>6}")
    for backend, figures in results["backends"].items():
        for kind, row in [*figures["search"]["kinds"].items(), ("all", figures["search"]["all"])]:
            print(
                f"{backend:12} {kind:11} {row['n']:>4} {row['p50_ms']:>8} {row['p95_ms']:>8} "
                f"{row['max_ms']:>8} {row.get('total_median', ''):>6}"
            )
    if not args.smoke:
        print(f"\nwritten to {path.relative_to(ROOT)}")


if __name__ == "__main__":
    main()
