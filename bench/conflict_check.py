"""Conflict-check latency with 100,000 contacts, on SQLite and on PostgreSQL.

What it does, for each database (see docs/research/bench-notes-2026-11.md):

1. makes a fresh database (SQLite: a file in a temporary directory; PostgreSQL: the database
   `casefile_bench_conflicts`, dropped and made again) and migrates it with `casefile.migrate`;
2. loads N contacts (default 100,000) with one alias each, through the contact rules' own
   `contact_names` rows (keys from `casefile.nlp.name_keys`), 10,000 cases with client names, and
   30,000 parties linking contacts to cases: synthetic person and company names from small word
   lists, so that near-duplicates exist as they do in a real firm; then `VACUUM ANALYZE`
   (PostgreSQL) or `ANALYZE` (SQLite), as a live database would have had;
3. times `casefile.conflicts.service.run_check` (the whole check: candidate keys read by length
   window, rapidfuzz scoring, parties and client names, the stored check and its event) on one
   session, in a transaction rolled back after each run, for several kinds of request;
4. prints p50 / p95 / max in ms and the number of hits.

Run: `PYTHONPATH=src python bench/conflict_check.py [--contacts 100000] [--runs 30]
[--postgres postgresql://postgres@127.0.0.1:5432/postgres]` (`--no-postgres`, `--no-sqlite`: one
database only).
"""

from __future__ import annotations

import argparse
import asyncio
import random
import statistics
import tempfile
import time
from pathlib import Path
from typing import Any

import smoke
from sqlalchemy import insert
from sqlalchemy.engine import make_url

from casefile.auth.permissions import Principal
from casefile.clock import new_id, utcnow
from casefile.conflicts.service import run_check
from casefile.db import make_engine
from casefile.migrate import upgrade
from casefile.models import Case, Contact, ContactName, Party
from casefile.nlp.name_keys import name_key
from casefile.settings import Settings

FIRST = [
    "James",
    "Mary",
    "Robert",
    "Patricia",
    "John",
    "Jennifer",
    "Michael",
    "Linda",
    "David",
    "Elizabeth",
    "William",
    "Barbara",
    "Richard",
    "Susan",
    "Joseph",
    "Jessica",
    "Thomas",
    "Sarah",
    "Charles",
    "Karen",
    "Chen",
    "Wei",
    "Ana",
    "José",
    "Müller",
    "Zoë",
    "Siobhán",
    "Olaf",
]
LAST = [
    "Smith",
    "Johnson",
    "Williams",
    "Brown",
    "Jones",
    "Garcia",
    "Miller",
    "Davis",
    "Rodriguez",
    "Martinez",
    "Hernandez",
    "Lopez",
    "Gonzalez",
    "Wilson",
    "Anderson",
    "Thomas",
    "Taylor",
    "Moore",
    "Jackson",
    "Martin",
    "Lee",
    "Perez",
    "Thompson",
    "White",
    "Harris",
    "Sanchez",
    "Clark",
    "Ramirez",
    "Lewis",
    "Robinson",
    "O'Brien",
    "Nguyen",
    "Kowalski",
    "Schäfer",
    "Dubois",
]
WORDS = [
    "Acme",
    "Global",
    "Pacific",
    "Northern",
    "Summit",
    "Pioneer",
    "Atlas",
    "Vertex",
    "Harbor",
    "Crescent",
    "Liberty",
    "Granite",
    "Redwood",
    "Silver",
    "Falcon",
    "Apex",
    "Orion",
    "Beacon",
    "Cedar",
    "Meridian",
    "Evergreen",
    "Keystone",
    "Sterling",
    "Horizon",
    "Quantum",
    "Riverside",
    "Union",
    "Frontier",
    "Coastal",
    "Heritage",
]
TRADES = [
    "Holdings",
    "Logistics",
    "Capital",
    "Industries",
    "Partners",
    "Foods",
    "Energy",
    "Systems",
    "Realty",
    "Pharma",
    "Media",
    "Motors",
    "Insurance",
    "Mining",
    "Labs",
    "Trading",
    "Shipping",
    "Textiles",
    "Ventures",
    "Group",
]
FORMS = ["Inc.", "Corp.", "Corporation", "LLC", "Ltd.", "GmbH", "S.A.", "PLC", "", ""]
ROLES = ["client", "adverse_party", "opposing_counsel", "witness", "expert", "related"]

REQUESTS: dict[str, list[str]] = {
    "company": ["Acme Holdings Corp."],
    "person": ["Jennifer O'Brien"],
    "long_company": ["Northern Pacific Logistics Capital Partners Inc."],
    "three_names": ["Summit Foods GmbH", "Jose Nguyen", "Redwood Energy Ventures LLC"],
}


def synthetic_name(rng: random.Random, serial: int) -> tuple[str, str, str]:
    """(kind, name, alias). A serial number keeps most names distinct, as real ones are."""
    if rng.random() < 0.5:
        first, last = rng.choice(FIRST), rng.choice(LAST)
        return "person", f"{first} {last} {serial}", f"{last}, {first} {serial}"
    words = " ".join(rng.sample(WORDS, rng.choice((1, 2)))) + " " + rng.choice(TRADES)
    form = rng.choice(FORMS)
    return "organization", f"{words} {serial} {form}".strip(), f"{words.upper()} {serial}"


async def load(settings: Settings, count: int) -> None:
    rng = random.Random(7)
    engine = make_engine(settings, pooled=False)
    now = utcnow()
    contacts: list[dict[str, Any]] = []
    names: list[dict[str, Any]] = []
    for serial in range(count):
        kind, name, alias = synthetic_name(rng, serial)
        contact_id = new_id("con")
        contacts.append(
            {
                "id": contact_id,
                "kind": kind,
                "name": name,
                "aliases": [alias],
                "emails": [],
                "phones": [],
                "addresses": [],
                "identifiers": {},
                "tags": [],
                "created_at": now,
                "updated_at": now,
            }
        )
        for source, text in (("contact", name), ("alias", alias)):
            key = name_key(text)
            names.append(
                {"contact_id": contact_id, "source": source, "name": text, "key": key, "key_length": len(key)}
            )
    cases = [
        {
            "id": new_id("case"),
            "title": f"Matter {i}",
            "case_number": f"B-{i:06d}",
            "status": rng.choice(("active", "closed", "archived")),
            "priority": "medium",
            "client_name": synthetic_name(rng, count + i)[1],
            "created_at": now,
            "updated_at": now,
        }
        for i in range(count // 10)
    ]
    parties = [
        {
            "id": new_id("pty"),
            "case_id": rng.choice(cases)["id"],
            "contact_id": contacts[i]["id"],
            "role": rng.choice(ROLES),
            "created_at": now,
        }
        for i in rng.sample(range(count), min(count, (count * 3) // 10))
    ]
    async with engine.begin() as connection:
        for model, rows in ((Contact, contacts), (ContactName, names), (Case, cases), (Party, parties)):
            for start in range(0, len(rows), 5000):
                await connection.execute(insert(model), rows[start : start + 5000])
    # The steady state of a live database: statistics and the visibility map (autovacuum's work
    # on PostgreSQL, which index-only scans need), the query planner's statistics on SQLite.
    async with engine.connect() as connection:
        if connection.dialect.name == "postgresql":
            autocommit = await connection.execution_options(isolation_level="AUTOCOMMIT")
            await autocommit.exec_driver_sql("VACUUM ANALYZE")
        else:
            await connection.exec_driver_sql("ANALYZE")
    await engine.dispose()


async def measure(settings: Settings, runs: int) -> dict[str, tuple[float, float, float, int]]:
    engine = make_engine(settings, pooled=False)
    actor = Principal(kind="user", id="user_bench", permissions=frozenset({"*:*"}), role="admin")
    results = {}
    from sqlalchemy.ext.asyncio import AsyncSession

    for kind, request in REQUESTS.items():
        timings, hits = [], 0
        for i in range(runs + 3):
            async with engine.connect() as connection:
                transaction = await connection.begin()
                session = AsyncSession(bind=connection, join_transaction_mode="create_savepoint")
                started = time.perf_counter()
                check = await run_check(session, actor, request)
                elapsed = (time.perf_counter() - started) * 1000
                hits = len(check.hits)
                await session.close()
                await transaction.rollback()
            if i >= 3:  # the first runs warm caches
                timings.append(elapsed)
        timings.sort()
        results[kind] = (statistics.median(timings), timings[int(len(timings) * 0.95) - 1], timings[-1], hits)
    await engine.dispose()
    return results


async def fresh_postgres(url: str, name: str) -> str:
    import asyncpg

    admin = make_url(url)
    connection = await asyncpg.connect(
        admin.set(drivername="postgresql").render_as_string(hide_password=False)
    )
    try:
        await connection.execute(f'DROP DATABASE IF EXISTS "{name}" WITH (FORCE)')
        await connection.execute(f'CREATE DATABASE "{name}"')
    finally:
        await connection.close()
    return admin.set(database=name).render_as_string(hide_password=False)


def run(label: str, settings: Settings, count: int, runs: int) -> None:
    upgrade(settings)
    started = time.perf_counter()
    asyncio.run(load(settings, count))
    print(
        f"\n{label}: loaded {count:,} contacts ({2 * count:,} names) in {time.perf_counter() - started:.1f} s"
    )
    print(f"{'request':<14} {'p50 ms':>8} {'p95 ms':>8} {'max ms':>8} {'hits':>6}")
    for kind, (p50, p95, worst, hits) in asyncio.run(measure(settings, runs)).items():
        print(f"{kind:<14} {p50:8.1f} {p95:8.1f} {worst:8.1f} {hits:6d}")


def main() -> None:
    parser = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    parser.add_argument("--contacts", type=int, default=100_000)
    parser.add_argument("--runs", type=int, default=30)
    parser.add_argument("--postgres", default="postgresql://postgres@127.0.0.1:5432/postgres")
    parser.add_argument("--no-postgres", action="store_true")
    parser.add_argument("--no-sqlite", action="store_true")
    args = smoke.parse_args(parser, contacts=200, runs=2, no_postgres=True)
    with tempfile.TemporaryDirectory() as tmp:
        if not args.no_sqlite:
            run("SQLite", Settings(data_dir=Path(tmp) / "sqlite"), args.contacts, args.runs)
        if not args.no_postgres:
            url = asyncio.run(fresh_postgres(args.postgres, "casefile_bench_conflicts"))
            run("PostgreSQL", Settings(data_dir=Path(tmp) / "pg", database_url=url), args.contacts, args.runs)


if __name__ == "__main__":
    main()
