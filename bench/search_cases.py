"""Case list and full-text search latency on PostgreSQL with 1,000,000 cases.

What it does, in order (see docs/research/bench-notes-2026-11.md for how to run it and what the figures mean):

1. creates a dedicated database (default `casefile_bench`; `--reuse` keeps an existing one) and
   brings its schema up to date with the project's own `casefile migrate`;
2. bulk-loads N synthetic cases (default 1,000,000) with server-side SQL (`INSERT ... SELECT ...
   FROM generate_series`): titles, client names and descriptions drawn from name and legal
   vocabularies with a skewed (Zipf-like) frequency, so that search selectivity is realistic;
   then `VACUUM ANALYZE cases`;
3. starts the real API server (`casefile serve`) on a free loopback port and logs in;
4. times `GET /api/v1/cases` end to end over HTTP, one request at a time, for several kinds of
   query (rare word, rare surname, two words, prefix, case number, common word, search + status,
   plain list, list with a status filter, deep page);
5. prints `EXPLAIN (ANALYZE, BUFFERS)` of the SQL that `casefile.listing.fetch_page` issues (the
   `count(*)` and the page query) so the reader can see which indexes answer;
6. prints a results table and writes it as JSON to `bench/results/search_cases-<timestamp>.json`.

The whole run is bounded by a global deadline (`--deadline-minutes`, default 30) and stops the
server it started on every exit path. All traffic stays on the loopback interface.
"""

from __future__ import annotations

import argparse
import asyncio
import json
import math
import os
import platform
import random
import re
import secrets
import signal
import socket
import statistics
import subprocess
import sys
import tempfile
import time
from collections.abc import Iterator
from contextlib import contextmanager, suppress
from dataclasses import dataclass, field
from datetime import UTC, datetime, timedelta
from pathlib import Path
from types import FrameType
from typing import Any, cast
from urllib.parse import urlsplit, urlunsplit

import asyncpg
import httpx
import smoke
from sqlalchemy import Table

from casefile.cases.repository import MAX_WORDS_PER_PREFIX, PLAIN_WORD
from casefile.listing import search_words
from casefile.models import Base, Case

ROOT = Path(__file__).resolve().parent.parent
RESULTS_DIR = ROOT / "bench" / "results"
DEFAULT_URL = "postgresql://postgres@127.0.0.1/casefile_bench"
# `--smoke` loads 1,000 rows here (recreated), and search_cases_ab.py --smoke reads them.
SMOKE_URL = "postgresql://postgres@127.0.0.1/casefile_bench_smoke"
LOOPBACK_HOSTS = frozenset({"127.0.0.1", "localhost", "::1", ""})
API = "/api/v1"
# Issue 16: every kind p95 < 50 ms (it was "well under 100 ms" before totals were capped).
TARGET_MS = 50.0
# `deep_page` walks here by cursor once before timing (page 500 of 20: OFFSET 9980 otherwise).
DEEP_PAGE = 500
ADMIN_EMAIL = "bench-admin@bench.test"
IDLE_BUSY_PERCENT = 20.0
CONTENDED_PERCENT = 10.0
# Set on `cases` (COMMENT ON TABLE) while its secondary indexes are dropped for a load.
LOADING_MARK = "casefile-bench: load in progress"


def word_list(text: str) -> tuple[str, ...]:
    """Whitespace-separated words, first occurrence kept."""
    return tuple(dict.fromkeys(text.split()))


def phrase_list(text: str) -> tuple[str, ...]:
    """'|'-separated phrases, stripped."""
    return tuple(phrase.strip() for phrase in text.split("|"))


# ---------------------------------------------------------------------------------------------
# Vocabularies. Each list is ordered from most to least frequent: picks follow a Zipf-like law
# (rank r is drawn with probability ln((r+1)/r) / ln(n+1), roughly proportional to 1/r).
# ---------------------------------------------------------------------------------------------

# Description words: a legal vocabulary of ~300 words; the first ten each appear in well over
# 10% of the cases, the tail in a fraction of a percent.
COMMON_WORDS = word_list(
    """
    court claim party contract agreement damages plaintiff defendant motion notice filed client
    breach payment hearing evidence counsel discovery settlement liability order property
    employment insurance dispute judgment appeal complaint statute injury negligence deadline
    review request response records witness deposition terms obligation invoice termination
    compensation fees filing amendment schedule county federal regulatory compliance license
    lease tenant landlord employer employee wages overtime discrimination harassment retaliation
    wrongful dismissal summary trial jury verdict mediation arbitration clause indemnity warranty
    fraud misrepresentation disclosure confidential privilege subpoena injunction relief remedy
    interest penalty audit tax assessment estate probate trustee beneficiary guardian custody
    support divorce marital asset valuation merger acquisition shareholder director officer
    fiduciary duty securities investor loan mortgage foreclosure creditor debtor bankruptcy
    trademark patent copyright infringement royalty software vendor supplier delivery goods
    shipment defect product recall vehicle accident medical malpractice hospital physician
    diagnosis treatment premises construction contractor subcontractor lien permit zoning
    easement deed boundary environmental contamination emissions agency inspection violation
    citation criminal charge arrest plea sentencing probation bail warrant seizure immigration
    visa asylum deportation petition application renewal consent authorization attorney
    affidavit declaration exhibit transcript memorandum brief opinion ruling remand reversal
    sanctions contempt default service jurisdiction venue transfer removal tolling limitation
    expert testimony examination objection stipulation continuance calendar conference pretrial
    docket clerk judge magistrate tribunal panel board commission regulation provision exemption
    waiver release covenant noncompete solicitation secret privacy cybersecurity negotiation
    counterclaim crossclaim intervention joinder class certification pleading
    answer reply allegation admission denial punitive compensatory restitution
    forfeiture garnishment levy execution enforcement collection repossession eviction
    habitability deposit rent utilities maintenance repairs condominium
    homeowners association bylaws governance minutes quorum resolution dissolution partnership
    operating capital distribution dividend appraisal franchise distributor
    licensing exclusivity territory pricing antitrust competition monopoly cartel whistleblower
    pension benefits disability leave accommodation workers occupational safety hazard toxic
    exposure asbestos pharmaceutical device labeling advertising consumer lending
    usurious telemarketing robocall spam phishing ransomware outage negligent intentional
    defamation libel slander publication reputation emotional distress loss consortium
    survival decedent heirs intestate codicil guardianship conservatorship adoption paternity
    visitation alimony prenuptial annulment relocation subpoenaed interrogatories admissions
    production spoliation preservation hold escrow closing survey
    """
)

# Rare legal terms: each description word is drawn from this tier with a small probability, so
# a term here matches between roughly a hundred and ten thousand cases.
RARE_WORDS = word_list(
    """
    estoppel laches subrogation novation interpleader mandamus certiorari replevin champerty
    rescission reformation escheat usury bailment chattel pendens quantum meruit barratry
    indemnitor indemnitee assignor assignee bailor bailee mortgagor mortgagee
    lessor lessee vendee obligor obligee surety guarantor promissory cognovit demurrer
    voir dire remittitur additur nolle prosequi amicus curiae coram nobis quo warranto
    venire facias scienter mens rea actus corpus delicti nunc pro tunc sua sponte ultra vires
    inter alia prima facie forum conveniens non res judicata collateral attainder
    bill lading demurrage salvage admiralty maritime jettison bottomry respondentia charterparty
    hypothecation cestui que trust emblements fixtures profit prendre servitude riparian littoral
    accretion avulsion adverse possession tacking ouster partition cotenancy escheated dower
    curtesy homestead spendthrift cy pres perpetuities abatement ademption lapse
    antilapse holographic nuncupative testamentary intestacy per stirpes capita pretermitted
    elective share quasi community usufruct emphyteusis forced heirship lesion redhibition
    negotiorum gestio cause solidary vicarious respondeat superior
    """
)

# Surnames for parties and clients: the ~250 most common US surnames, in order of frequency.
SURNAMES = word_list(
    """
    Smith Johnson Williams Brown Jones Garcia Miller Davis Rodriguez Martinez Hernandez Lopez
    Gonzalez Wilson Anderson Thomas Taylor Moore Jackson Martin Lee Perez Thompson White Harris
    Sanchez Clark Ramirez Lewis Robinson Walker Young Allen King Wright Scott Torres Nguyen Hill
    Flores Green Adams Nelson Baker Hall Rivera Campbell Mitchell Carter Roberts Gomez Phillips
    Evans Turner Diaz Parker Cruz Edwards Collins Reyes Stewart Morris Morales Murphy Cook Rogers
    Gutierrez Ortiz Morgan Cooper Peterson Bailey Reed Kelly Howard Ramos Kim Cox Ward Richardson
    Watson Brooks Chavez Wood James Bennett Gray Mendoza Ruiz Hughes Price Alvarez Castillo
    Sanders Patel Myers Long Ross Foster Jimenez Powell Jenkins Perry Russell Sullivan Bell
    Coleman Butler Henderson Barnes Gonzales Fisher Vasquez Simmons Romero Jordan Patterson
    Alexander Hamilton Graham Reynolds Griffin Wallace Moreno West Cole Hayes Bryant Herrera
    Gibson Ellis Tran Medina Aguilar Stevens Murray Ford Castro Marshall Owens Harrison Fernandez
    Mcdonald Woods Washington Kennedy Wells Vargas Henry Chen Freeman Webb Tucker Guzman Burns
    Crawford Olson Simpson Porter Hunter Gordon Mendez Silva Shaw Snyder Mason Dixon Munoz Hunt
    Hicks Holmes Palmer Wagner Black Robertson Boyd Rose Stone Salazar Fox Warren Mills Meyer Rice
    Schmidt Garza Daniels Ferguson Nichols Stephens Soto Weaver Ryan Gardner Payne Grant Dunn
    Kelley Spencer Hawkins Arnold Pierce Vazquez Hansen Peters Santos Hart Bradley Knight Elliott
    Cunningham Duncan Armstrong Hudson Carroll Lane Riley Andrews Alvarado Ray Delgado Berry
    Perkins Hoffman Johnston Matthews Pena Richards Contreras Willis Carpenter Lawrence Sandoval
    """
)

# Uncommon surnames: drawn uniformly, rarely; each names a few dozen cases.
RARE_SURNAMES = word_list(
    """
    Abernathy Achterberg Adeyemi Alcantara Amundsen Archambault Azarian Bartolucci Belmonte
    Bjornstad Blakemore Bouchard Brzezinski Calloway Castellanos Cavanaugh Chakraborty Cienfuegos
    Czerwinski Dabrowski Delacroix Desrosiers Dimitriou Drummond Eberhardt Eichelberger Esposito
    Fairweather Falkenberg Fitzgerald Florescu Galloway Gianopoulos Goldberger Grabowski Haddad
    Halvorsen Hargreaves Hashimoto Heidegger Hollingsworth Ibrahimovic Ignatiev Iwasaki Jablonski
    Jankowski Kaczmarek Kowalczyk Kuznetsov Lachance Lindqvist Lombardi Macallister Malinowski
    Marchetti Mwangi Nakashima Nakamura Nwachukwu Obradovic Okonkwo Oyelaran Pemberton Petrakis
    Przybylski Quintanilla Rasmussen Rautenberg Rosenthal Sarkissian Satterfield Schoenberg
    Siddiqui Silvestri Sorensen Stavropoulos Szymanski Takahashi Thorvaldsen Trujillo Underwood
    Vandermeer Villanueva Wainwright Whitcombe Wojcik Yamamoto Yilmaz Zabaleta Zielinski
    Zimmerman Zuckerman Ashworth Beauchamp Carrington Donnelly Ellsworth Fontaine Gallagher
    """
)

FIRST_NAMES = word_list(
    """
    James Mary Robert Patricia John Jennifer Michael Linda David Elizabeth William Barbara Richard
    Susan Joseph Jessica Christopher Sarah Charles Karen Daniel Lisa Matthew Nancy Anthony Betty
    Mark Sandra Donald Margaret Steven Ashley Andrew Kimberly Paul Emily Joshua Donna Kenneth
    Michelle Kevin Carol Brian Amanda George Melissa Timothy Deborah Ronald Stephanie Jason
    Rebecca Edward Laura Jeffrey Cynthia Ryan Dorothy Jacob Amy Gary Kathleen Nicholas Angela Eric
    Shirley Jonathan Emma Stephen Brenda Larry Pamela Justin Nicole Scott Anna Brandon Samantha
    Benjamin Katherine Samuel Christine Gregory Debra Alexander Rachel Patrick Carolyn Frank Janet
    Raymond Maria Jack Olivia Dennis Heather Jerry Helen Priya Wei Ahmed Fatima Diego Sofia Hiroshi
    Yuki Olga Ivan
    """
)

COMPANY_NAMES = word_list(
    """
    Acme Northwind Globex Initech Umbrella Hooli Vandelay Soylent Cyberdyne Tyrell Oceanic
    Pinnacle Summit Redwood Bluewater Ironclad Silverline Evergreen Keystone Liberty Patriot
    Frontier Horizon Meridian Atlas Apex Beacon Cascade Crescent Eagle Falcon Granite Harbor
    Heritage Highland Lakeshore Landmark Lighthouse Magnolia Maple Monarch Nova Orion Paramount
    Pioneer Prairie Riverside Sterling Sunrise Titan Trident Vanguard Vertex Westfield Willow
    Zenith Alder Birchwood Cobalt Driftwood Emberly Foxglove Goldleaf Hawthorne Ironwood Juniper
    Kingsley Larkspur Marigold Nettle Oakmont Pemberly Quarry Rockport Saltmarsh Thistle Umberton
    """
)
COMPANY_TRADES = word_list(
    """
    Logistics Holdings Capital Health Energy Foods Systems Technologies Pharmaceuticals Builders
    Realty Media Motors Airlines Shipping Textiles Mining Bank Hospitality Retail Analytics
    Biotech Manufacturing Properties Ventures Networks Chemicals Consulting Entertainment Labs
    """
)
COMPANY_SUFFIXES: tuple[str, ...] = ("LLC", "Inc.", "Corp.", "Ltd.", "LLP", "Group", "Co.", "PLC")
# "In re <Company> <matter>"
MATTERS: tuple[str, ...] = (
    "Bankruptcy",
    "Securities Litigation",
    "Antitrust Litigation",
    "Data Breach Litigation",
    "Chapter 11 Proceedings",
    "Receivership",
    "Estate Administration",
    "Trust Dispute",
    "Merger Litigation",
    "Product Liability Litigation",
    "Arbitration",
    "Derivative Litigation",
)

CASE_TYPES: dict[str, int] = {
    "litigation": 20,
    "contract": 15,
    "employment": 12,
    "personal_injury": 10,
    "real_estate": 8,
    "family": 8,
    "intellectual_property": 6,
    "corporate": 6,
    "bankruptcy": 4,
    "criminal_defense": 4,
    "immigration": 4,
    "regulatory": 3,
}
# US states, most populous first.
JURISDICTIONS = phrase_list(
    """
    California|New York|Texas|Florida|Illinois|Pennsylvania|Ohio|Georgia|North Carolina|Michigan|
    New Jersey|Virginia|Washington|Arizona|Massachusetts|Tennessee|Indiana|Maryland|Missouri|
    Wisconsin|Colorado|Minnesota|South Carolina|Alabama|Louisiana|Kentucky|Oregon|Oklahoma|
    Connecticut|Utah|Iowa|Nevada|Arkansas|Mississippi|Kansas|New Mexico|Nebraska|Idaho|
    West Virginia|Hawaii|New Hampshire|Maine|Montana|Rhode Island|Delaware|South Dakota|
    North Dakota|Alaska|Vermont|Wyoming
    """
)
# Older cases are mostly closed or archived; recent ones mostly open.
STATUS_OLD: dict[str, int] = {
    "closed": 58,
    "archived": 27,
    "active": 6,
    "pending": 3,
    "on_hold": 3,
    "intake": 3,
}
STATUS_RECENT: dict[str, int] = {
    "closed": 20,
    "archived": 2,
    "active": 40,
    "pending": 14,
    "on_hold": 8,
    "intake": 16,
}
RECENT_FRACTION = 0.3
PRIORITY_WEIGHTS: dict[str, int] = {"low": 30, "medium": 45, "high": 20, "urgent": 5}

DESCRIPTION_WORDS = (10, 30)
RARE_WORD_PROBABILITY = 0.004  # per description word
RARE_SURNAME_PROBABILITY = 0.005  # per surname
YEARS_OF_HISTORY = 10
CROCKFORD = "0123456789abcdefghjkmnpqrstvwxyz"
CASE_COLUMNS = (
    "id, title, case_number, case_type, jurisdiction, client_name, description, "
    "status, priority, created_by, created_at, updated_at"
)
STATUSES = tuple(STATUS_OLD)
assert not set(COMMON_WORDS) & set(RARE_WORDS), set(COMMON_WORDS) & set(RARE_WORDS)
assert not set(SURNAMES) & set(RARE_SURNAMES), set(SURNAMES) & set(RARE_SURNAMES)


# ---------------------------------------------------------------------------------------------
# Deadline and clean-up
# ---------------------------------------------------------------------------------------------


class BenchError(Exception):
    """The benchmark cannot go on; the message says why."""


class DeadlineExceeded(BenchError):
    pass


class Deadline:
    """One global deadline. SIGALRM interrupts whatever runs when it passes."""

    def __init__(self, seconds: float) -> None:
        self.seconds = seconds
        self.end = time.monotonic() + seconds

    def remaining(self) -> float:
        return self.end - time.monotonic()

    def check(self, what: str) -> float:
        left = self.remaining()
        if left <= 0:
            raise DeadlineExceeded(f"global deadline of {self.seconds / 60:.0f} min passed before {what}")
        return left

    def arm(self) -> None:
        def on_alarm(_signum: int, _frame: FrameType | None) -> None:
            raise DeadlineExceeded(f"global deadline of {self.seconds / 60:.0f} min passed")

        def on_term(signum: int, _frame: FrameType | None) -> None:
            raise BenchError(f"stopped by signal {signum}")

        signal.signal(signal.SIGALRM, on_alarm)
        signal.signal(signal.SIGTERM, on_term)
        signal.setitimer(signal.ITIMER_REAL, self.seconds)

    @staticmethod
    def disarm() -> None:
        signal.setitimer(signal.ITIMER_REAL, 0)


def log(message: str) -> None:
    print(f"[{datetime.now().strftime('%H:%M:%S')}] {message}", flush=True)


# ---------------------------------------------------------------------------------------------
# Database: creation, schema, bulk load
# ---------------------------------------------------------------------------------------------


@dataclass(frozen=True)
class Target:
    url: str  # postgresql://... of the benchmark database
    admin_url: str  # the same server's `postgres` database, for CREATE/DROP DATABASE
    name: str

    @classmethod
    def parse(cls, url: str) -> Target:
        parts = urlsplit(url)
        if parts.scheme not in ("postgresql", "postgres"):
            raise BenchError(f"--database-url must be a postgresql:// URL, not {url!r}")
        if (parts.hostname or "") not in LOOPBACK_HOSTS:
            raise BenchError(f"only a loopback PostgreSQL is allowed, not host {parts.hostname!r}")
        name = parts.path.lstrip("/")
        if not name or "/" in name:
            raise BenchError(f"--database-url must name a database: {url!r}")
        admin = urlunsplit((parts.scheme, parts.netloc, "/postgres", parts.query, ""))
        return cls(url=url, admin_url=admin, name=name)


def quote_ident(name: str) -> str:
    return '"' + name.replace('"', '""') + '"'


async def connect(url: str, deadline: Deadline) -> asyncpg.Connection:
    left = deadline.check("connecting to PostgreSQL")
    conn: asyncpg.Connection = await asyncpg.connect(url, timeout=min(30.0, left))
    # No statement may outlive the run.
    await conn.execute(f"SET statement_timeout = {max(1, int(left * 1000))}")
    return conn


async def prepare_database(target: Target, *, reuse: bool, recreate: bool, deadline: Deadline) -> bool:
    """Create the database if needed; return True when it was created now (empty)."""
    admin = await connect(target.admin_url, deadline)
    try:
        exists = await admin.fetchval("SELECT 1 FROM pg_database WHERE datname = $1", target.name)
        if exists and recreate:
            if "bench" not in target.name:
                raise BenchError(f"refusing to drop {target.name!r}: its name does not contain 'bench'")
            log(f"dropping database {target.name}")
            await admin.execute(f"DROP DATABASE {quote_ident(target.name)} WITH (FORCE)")
            exists = False
        elif exists and not reuse:
            raise BenchError(
                f"database {target.name!r} exists: pass --reuse to use it, or --recreate to drop it and "
                "load from scratch"
            )
        if not exists:
            log(f"creating database {target.name}")
            await admin.execute(f"CREATE DATABASE {quote_ident(target.name)}")
        return not exists
    finally:
        await admin.close()


def casefile_executable() -> Path:
    for candidate in (ROOT / ".venv" / "bin" / "casefile", Path(sys.executable).parent / "casefile"):
        if candidate.exists():
            return candidate
    raise BenchError("cannot find the `casefile` command; run from the project's virtualenv")


def server_environment(target: Target, data_dir: Path, extra: dict[str, str]) -> dict[str, str]:
    """The parent's environment without any CASEFILE_* settings, plus ours (no `.env` either:
    the commands run in the temporary data dir)."""
    env = {k: v for k, v in os.environ.items() if not k.startswith("CASEFILE_")}
    env.update(
        {
            "CASEFILE_DATABASE_URL": target.url,
            "CASEFILE_DATA_DIR": str(data_dir),
            "CASEFILE_LOG_LEVEL": "WARNING",
            # The bench's one user sends ~800 requests in a few seconds: the default limit
            # (1,000 an hour) would answer 429 once the searches are fast.
            "CASEFILE_RATE_LIMIT_USER": "100000000/hour",
        }
    )
    env.update(extra)
    return env


def run_migrations(target: Target, data_dir: Path, deadline: Deadline) -> None:
    left = deadline.check("migrating")
    log("running `casefile migrate`")
    result = subprocess.run(
        [str(casefile_executable()), "migrate"],
        env=server_environment(target, data_dir, {}),
        cwd=data_dir,
        capture_output=True,
        text=True,
        timeout=min(left, 600),
        check=False,
    )
    if result.returncode != 0:
        raise BenchError(f"casefile migrate failed ({result.returncode}):\n{result.stdout}\n{result.stderr}")


def weighted_slots(weights: dict[str, int]) -> list[str]:
    """A list in which each value appears `weight` times: a uniform pick from it is weighted."""
    return [value for value, weight in weights.items() for _ in range(weight)]


def zipf_pick(array: str) -> str:
    """SQL: one element of the SQL array `array`, rank r with probability ~ 1/r."""
    n = f"cardinality({array})"
    return f"({array})[least(floor(exp(random() * ln({n} + 1)))::int, {n})]"


def uniform_pick(array: str) -> str:
    return f"({array})[1 + floor(random() * cardinality({array}))::int]"


def tiered_pick(common: str, rare: str, rare_probability: str, *, rare_zipf: bool) -> str:
    rare_expr = zipf_pick(rare) if rare_zipf else uniform_pick(rare)
    return f"(CASE WHEN random() < {rare_probability} THEN {rare_expr} ELSE {zipf_pick(common)} END)"


def base32(value: str, digits: int) -> str:
    """SQL: `value` (a bigint expression) as `digits` lower-case Crockford base-32 characters."""
    return " || ".join(
        f"substr('{CROCKFORD}', (({value} >> {5 * (digits - 1 - i)}) & 31)::int + 1, 1)"
        for i in range(digits)
    )


@dataclass(frozen=True)
class Timeline:
    """Row g (1-based) is created at start + (g - 1) * step: evenly spread over ~10 years, so ids
    (time-ordered) and case numbers (`YYYY-NNNNNN`, counted per year) follow g."""

    start: datetime
    step_us: int
    years: list[int]
    first_rows: list[int]  # first g of each year in `years`

    @classmethod
    def make(cls, rows: int, now: datetime) -> Timeline:
        end = now.replace(hour=0, minute=0, second=0, microsecond=0)
        start = end - timedelta(days=round(365.25 * YEARS_OF_HISTORY))
        step_us = max(1, (end - start) // timedelta(microseconds=1) // rows)
        years = list(range(start.year, end.year + 1))
        first_rows = []
        for year in years:
            offset_us = (datetime(year, 1, 1) - start) // timedelta(microseconds=1)
            first_rows.append(1 if offset_us <= 0 else -(-offset_us // step_us) + 1)
        return cls(start=start, step_us=step_us, years=years, first_rows=first_rows)


def insert_sql() -> str:
    """One batch: rows lo..hi. Parameters are numbered as in `insert_args`."""
    description_word = tiered_pick("$3::text[]", "$4::text[]", "$5::float8", rare_zipf=True)
    surname = tiered_pick("$6::text[]", "$7::text[]", "$8::float8", rare_zipf=False)
    company = (
        f"{zipf_pick('$10::text[]')} || ' ' || {uniform_pick('$11::text[]')} || ' ' || "
        f"{uniform_pick('$12::text[]')}"
    )
    person = "r.first_name || ' ' || r.surname1"
    # Cases in the most recent RECENT_FRACTION of the timeline (g > $25) are mostly open.
    recent, old = uniform_pick("$16::text[]"), uniform_pick("$15::text[]")
    status = f"CASE WHEN g > $25::bigint THEN {recent} ELSE {old} END"
    return f"""
INSERT INTO cases ({CASE_COLUMNS})
SELECT
    'case_' || {base32("r.created_ms", 10)} || {base32("r.g", 6)} || {base32("r.noise", 10)},
    CASE
        WHEN r.form < 0.55 THEN r.surname1 || ' v. ' || r.company
        WHEN r.form < 0.70 THEN 'In re ' || r.company || ' ' || r.matter
        WHEN r.form < 0.85 THEN r.company || ' v. ' || r.surname1
        ELSE r.surname1 || ' v. ' || r.surname2
    END,
    r.year || '-' || lpad(r.seq::text, greatest(6, length(r.seq::text)), '0'),
    r.case_type,
    r.jurisdiction,
    CASE
        WHEN r.form < 0.55 THEN CASE WHEN r.client_pick < 0.6 THEN {person} ELSE r.company END
        WHEN r.form < 0.70 THEN r.company
        WHEN r.form < 0.85 THEN CASE WHEN r.client_pick < 0.7 THEN r.company ELSE {person} END
        ELSE {person}
    END,
    upper(left(r.description, 1)) || substr(r.description, 2) || '.',
    r.status,
    r.priority,
    r.created_by,
    r.created_at,
    r.created_at + power(random(), 3) * ($22::timestamp - r.created_at)
FROM (
    SELECT
        t.*,
        floor(extract(epoch FROM t.created_at) * 1000)::bigint AS created_ms,
        extract(year FROM t.created_at)::int AS year,
        t.g - ($24::int[])[extract(year FROM t.created_at)::int - $23::int + 1] + 1 AS seq,
        (
            SELECT string_agg({description_word}, ' ')
            FROM generate_series(1, t.words)
        ) AS description
    FROM (
        SELECT
            g,
            $20::timestamp + ((g - 1) * $21::bigint) * interval '1 microsecond' AS created_at,
            {DESCRIPTION_WORDS[0]} + floor(random() * {DESCRIPTION_WORDS[1] - DESCRIPTION_WORDS[0] + 1})::int
                AS words,
            floor(random() * 1125899906842624)::bigint AS noise,
            random() AS form,
            random() AS client_pick,
            {surname} AS surname1,
            {surname} AS surname2,
            {uniform_pick("$9::text[]")} AS first_name,
            {company} AS company,
            {uniform_pick("$13::text[]")} AS matter,
            {uniform_pick("$14::text[]")} AS case_type,
            {zipf_pick("$17::text[]")} AS jurisdiction,
            {status} AS status,
            {uniform_pick("$18::text[]")} AS priority,
            {uniform_pick("$19::text[]")} AS created_by
        FROM generate_series($1::bigint, $2::bigint) AS g
        OFFSET 0
    ) AS t
    OFFSET 0
) AS r
"""


def insert_args(lo: int, hi: int, rows: int, timeline: Timeline, now: datetime) -> list[Any]:
    rng = random.Random(7)
    created_by = ["user_" + "".join(rng.choice(CROCKFORD) for _ in range(26)) for _ in range(25)]
    args: list[Any] = [
        lo,
        hi,
        list(COMMON_WORDS),
        list(RARE_WORDS),
        RARE_WORD_PROBABILITY,
        list(SURNAMES),
        list(RARE_SURNAMES),
        RARE_SURNAME_PROBABILITY,
        list(FIRST_NAMES),
        list(COMPANY_NAMES),
        list(COMPANY_TRADES),
        list(COMPANY_SUFFIXES),
        list(MATTERS),
        weighted_slots(CASE_TYPES),
        weighted_slots(STATUS_OLD),
        weighted_slots(STATUS_RECENT),
        list(JURISDICTIONS),
        weighted_slots(PRIORITY_WEIGHTS),
        created_by,
        timeline.start,
        timeline.step_us,
        now,
        timeline.years[0],
        timeline.first_rows,
        math.floor(rows * (1 - RECENT_FRACTION)),
    ]
    return args


async def secondary_indexes(conn: asyncpg.Connection) -> list[tuple[str, str]]:
    """(name, CREATE INDEX statement) of every index on `cases` that backs no constraint."""
    rows = await conn.fetch(
        """
        SELECT i.relname AS name, pg_get_indexdef(i.oid) AS definition
        FROM pg_index x
        JOIN pg_class i ON i.oid = x.indexrelid
        WHERE x.indrelid = 'cases'::regclass
          AND NOT EXISTS (SELECT 1 FROM pg_constraint c WHERE c.conindid = x.indexrelid)
        ORDER BY i.relname
        """
    )
    return [(row["name"], row["definition"]) for row in rows]


async def missing_schema(conn: asyncpg.Connection) -> list[str]:
    """Tables and columns of the models (casefile.models) that the database lacks."""
    rows = await conn.fetch(
        "SELECT table_name, column_name FROM information_schema.columns WHERE table_schema = 'public'"
    )
    present: dict[str, set[str]] = {}
    for row in rows:
        present.setdefault(row["table_name"], set()).add(row["column_name"])
    missing: list[str] = []
    for table in Base.metadata.sorted_tables:
        if table.name not in present:
            missing.append(f"table {table.name}")
            continue
        missing.extend(
            f"column {table.name}.{c.name}" for c in table.columns if c.name not in present[table.name]
        )
    return missing


def expected_index_names() -> set[str]:
    """The indexes `cases` must have: the model's, its constraints', and the migrations' GIN (over
    (status, search_vector) since migration 0016; over search_vector alone before it, or where
    btree_gin could not be installed)."""
    names = {str(index.name) for index in cast(Table, Case.__table__).indexes}
    return names | {"pk_cases", "uq_cases_case_number", "ix_cases_status_search_vector"}


async def create_indexes(url: str, definitions: list[tuple[str, str]], deadline: Deadline) -> None:
    """Build the indexes on two connections: the GIN index (the slowest) alone on one."""
    gin = [d for d in definitions if " USING gin " in d[1]]
    others = [d for d in definitions if d not in gin]

    async def build(batch: list[tuple[str, str]]) -> None:
        conn = await connect(url, deadline)
        try:
            await conn.execute("SET maintenance_work_mem = '1GB'")
            for name, definition in batch:
                started = time.perf_counter()
                await conn.execute(definition)
                log(f"  index {name}: {time.perf_counter() - started:.1f} s")
        finally:
            await conn.close()

    await asyncio.gather(build(gin), build(others))


async def load_cases(
    target: Target, rows: int, *, reload: bool, batch_rows: int, deadline: Deadline
) -> dict[str, Any]:
    """Make sure `cases` holds exactly `rows` benchmark rows; load them if it is empty."""
    conn = await connect(target.url, deadline)
    try:
        existing = await conn.fetchval("SELECT count(*) FROM cases")
        mark = await conn.fetchval("SELECT obj_description('cases'::regclass, 'pg_class')") or ""
        if LOADING_MARK in mark:
            raise BenchError(f"an earlier load into {target.name} was interrupted: run again with --recreate")
        missing_columns = await missing_schema(conn)
        if missing_columns:
            # The server would fail on them (500s). Typically the initial migration was edited in
            # place after this database was migrated, so `casefile migrate` has nothing to apply.
            raise BenchError(
                f"{target.name} is older than the code: it lacks {', '.join(missing_columns[:8])}"
                f"{' ...' if len(missing_columns) > 8 else ''}; run again with --recreate"
            )
        present = {r["relname"] for r in await conn.fetch(INDEX_NAMES_SQL)}
        missing = expected_index_names() - present
        if missing:
            # E.g. an index added to the models (and the initial migration) after this database was
            # migrated: the figures then describe the database's indexes, not the current code's.
            log(f"WARNING: {target.name} lacks indexes the models declare: {sorted(missing)}")
        if existing == rows and not reload:
            log(f"reusing the {existing:,} cases already in {target.name} ({mark or 'no load mark'})")
            return {"loaded": False, "rows": existing, "mark": mark}
        if existing and not reload:
            raise BenchError(
                f"{target.name} holds {existing:,} cases, not {rows:,}: pass --reload to replace them "
                "(or --recreate)"
            )
        if existing:
            log(f"deleting the {existing:,} cases in {target.name} (--reload)")
            await conn.execute("TRUNCATE cases, case_assignees, case_number_counters")
        definitions = await secondary_indexes(conn)
        log(
            f"loading {rows:,} cases: dropping {len(definitions)} secondary indexes for the load "
            "(they are rebuilt from their exact definitions afterwards)"
        )
        await conn.execute(f"COMMENT ON TABLE cases IS '{LOADING_MARK}'")
        for name, _ in definitions:
            await conn.execute(f"DROP INDEX {quote_ident(name)}")
    finally:
        await conn.close()

    timings: dict[str, Any] = {"loaded": True, "rows": rows}
    started = time.perf_counter()
    ok = False
    try:
        timings["insert_seconds"] = await insert_rows(target, rows, batch_rows, deadline)
        log("rebuilding indexes")
        index_started = time.perf_counter()
        await create_indexes(target.url, definitions, deadline)
        timings["index_seconds"] = round(time.perf_counter() - index_started, 1)
        ok = True
    finally:
        if not ok:
            # Leave an empty table with its indexes rather than a half-loaded one without them.
            with suppress(Exception):
                await restore_after_failed_load(target, definitions)
    conn = await connect(target.url, deadline)
    try:
        log("VACUUM ANALYZE cases")
        vacuum_started = time.perf_counter()
        await conn.execute("VACUUM ANALYZE cases")
        timings["vacuum_analyze_seconds"] = round(time.perf_counter() - vacuum_started, 1)
        mark = f"casefile-bench: {rows} cases loaded {datetime.now(UTC):%Y-%m-%d %H:%M} UTC"
        await conn.execute(f"COMMENT ON TABLE cases IS '{mark}'")
        # Automatic case numbers must continue after the loaded ones.
        await conn.execute(
            """
            INSERT INTO case_number_counters (year, last_value)
            SELECT split_part(case_number, '-', 1)::int, max(split_part(case_number, '-', 2)::int)
            FROM cases GROUP BY 1
            ON CONFLICT (year) DO UPDATE SET last_value = excluded.last_value
            """
        )
    finally:
        await conn.close()
    timings["total_seconds"] = round(time.perf_counter() - started, 1)
    log(f"load done in {timings['total_seconds']:.0f} s")
    return timings


INDEX_NAMES_SQL = """
SELECT i.relname FROM pg_index x JOIN pg_class i ON i.oid = x.indexrelid
WHERE x.indrelid = 'cases'::regclass
"""


async def restore_after_failed_load(target: Target, definitions: list[tuple[str, str]]) -> None:
    log("load failed: emptying cases and restoring its indexes")
    conn = await asyncpg.connect(target.url, timeout=30)
    try:
        await conn.execute("SET statement_timeout = '10min'")
        await conn.execute("TRUNCATE cases, case_assignees, case_number_counters")
        present = {r["relname"] for r in await conn.fetch(INDEX_NAMES_SQL)}
        for name, definition in definitions:
            if name not in present:
                await conn.execute(definition)
        await conn.execute("COMMENT ON TABLE cases IS NULL")
    finally:
        await conn.close()


async def insert_rows(target: Target, rows: int, batch_rows: int, deadline: Deadline) -> float:
    """INSERT ... SELECT in batches on two connections (two cores); returns the seconds taken."""
    now = datetime.now(UTC).replace(tzinfo=None)
    timeline = Timeline.make(rows, now)
    sql = insert_sql()
    batches = [(lo, min(lo + batch_rows - 1, rows)) for lo in range(1, rows + 1, batch_rows)]
    queue: asyncio.Queue[tuple[int, int]] = asyncio.Queue()
    for batch in batches:
        queue.put_nowait(batch)
    done = 0
    started = time.perf_counter()

    async def worker() -> None:
        nonlocal done
        conn = await connect(target.url, deadline)
        try:
            await conn.execute("SET synchronous_commit = off")
            statement = await conn.prepare(sql)
            while not queue.empty():
                lo, hi = queue.get_nowait()
                deadline.check("loading the next batch")
                # Each batch draws the same random data whichever connection runs it.
                await conn.execute(f"SELECT setseed({lo / (rows + 1):.9f})")
                await statement.fetch(*insert_args(lo, hi, rows, timeline, now))
                done += hi - lo + 1
                elapsed = time.perf_counter() - started
                log(f"  {done:>10,} / {rows:,} rows  ({elapsed:.0f} s, {done / elapsed:,.0f} rows/s)")
        finally:
            await conn.close()

    await asyncio.gather(worker(), worker())
    return round(time.perf_counter() - started, 1)


# ---------------------------------------------------------------------------------------------
# Query kinds
# ---------------------------------------------------------------------------------------------


@dataclass
class Kind:
    name: str
    description: str
    params: list[dict[str, str]]  # cycled through; the first `warmup` are used only to warm up


@dataclass
class KindResult:
    name: str
    description: str
    example: str
    requests: int
    totals: list[int]
    latencies_ms: list[float]
    queries: list[str] = field(default_factory=list)
    cpu_busy_percent: float | None = None
    other_cpu_percent: float | None = None
    attempts: int = 1

    def summary(self) -> dict[str, Any]:
        lat = sorted(self.latencies_ms)
        return {
            "kind": self.name,
            "description": self.description,
            "example": self.example,
            "requests": self.requests,
            "distinct_queries": len(set(self.queries)),
            "total_min": min(self.totals),
            "total_median": int(statistics.median(self.totals)),
            "total_max": max(self.totals),
            "p50_ms": round(percentile(lat, 50), 1),
            "p95_ms": round(percentile(lat, 95), 1),
            "max_ms": round(lat[-1], 1),
            "mean_ms": round(statistics.fmean(lat), 1),
            # The whole machine's CPU while this kind ran; one request at a time uses about one
            # core (server + PostgreSQL), i.e. ~50% on two cores. Much more means other load.
            "cpu_busy_percent": self.cpu_busy_percent,
            # CPU of processes other than this benchmark's (other work on a shared machine).
            "other_cpu_percent": self.other_cpu_percent,
            "attempts": self.attempts,
        }


def percentile(sorted_values: list[float], pct: float) -> float:
    """Linear interpolation between closest ranks (numpy's default)."""
    if not sorted_values:
        return math.nan
    k = (len(sorted_values) - 1) * pct / 100
    lo, hi = math.floor(k), math.ceil(k)
    return sorted_values[lo] + (sorted_values[hi] - sorted_values[lo]) * (k - lo)


def prefix_free(words: list[str], vocabulary: set[str]) -> list[str]:
    """Words that no other word in the data starts with: a prefix search for them finds them only."""
    lowered = {w.lower() for w in vocabulary}
    return [w for w in words if not any(o != w.lower() and o.startswith(w.lower()) for o in lowered)]


def all_tokens() -> set[str]:
    tokens: set[str] = set()
    for group in (
        COMMON_WORDS,
        RARE_WORDS,
        SURNAMES,
        RARE_SURNAMES,
        FIRST_NAMES,
        COMPANY_NAMES,
        COMPANY_TRADES,
        COMPANY_SUFFIXES,
        MATTERS,
    ):
        for item in group:
            tokens.update(part.strip(".").lower() for part in item.split())
    return tokens


def build_kinds(case_numbers: list[str], rng: random.Random, deep_page: int = DEEP_PAGE) -> list[Kind]:
    tokens = all_tokens()
    base = {"sort": "created_at", "order": "desc", "page": "1", "limit": "20"}

    def searches(values: list[str], **extra: str) -> list[dict[str, str]]:
        return [{**base, "search": v, **extra} for v in values]

    # Rare: the less frequent half of the rare tier (about 100-250 matching cases each).
    rare_words = prefix_free(list(RARE_WORDS[len(RARE_WORDS) // 2 :]), tokens)
    rng.shuffle(rare_words)
    rare_surnames = prefix_free(list(RARE_SURNAMES), tokens)
    rng.shuffle(rare_surnames)
    # Two words of mid frequency (ranks 20-120), as a user narrowing a search would type.
    mid = list(COMMON_WORDS[20:120])
    pairs = [f"{mid[i]} {mid[(i * 7 + 31) % len(mid)]}" for i in range(len(mid))]
    rng.shuffle(pairs)
    # 3- and 4-letter prefixes of mid-frequency words (ranks 30-200).
    prefixes: list[str] = []
    for i, word in enumerate(COMMON_WORDS[30:200]):
        prefix = word[: 3 + i % 2]
        if len(word) >= 6 and prefix not in prefixes:
            prefixes.append(prefix)
    rng.shuffle(prefixes)
    common = list(COMMON_WORDS[:10])
    status_words = [(COMMON_WORDS[10 + i % 40], STATUSES[i % len(STATUSES)]) for i in range(80)]
    rng.shuffle(status_words)
    return [
        Kind("rare_word", "one rare legal term (~100-250 matches)", searches(rare_words)),
        Kind("rare_surname", "one uncommon surname (~30-70 matches)", searches(rare_surnames)),
        Kind("two_words", "two mid-frequency words, both required", searches(pairs)),
        Kind("prefix", "3-4 letter prefix of a mid-frequency word", searches(prefixes)),
        Kind("case_number", "an exact case number, e.g. 2021-004512", searches(case_numbers)),
        Kind("common_word", "one of the 10 most common words (>= 10% of rows)", searches(common)),
        Kind(
            "search_status",
            "a mid-frequency word + status filter",
            [{**base, "search": w, "status": s} for w, s in status_words],
        ),
        Kind("list_all", "plain list, no search, page 1", [dict(base)]),
        Kind("list_closed", "plain list, status=closed, page 1", [{**base, "status": "closed"}]),
        # Deep pages go by cursor (`meta.pagination.next_cursor`): the cursor of page 500 is
        # found by walking there once before timing (resolve_cursors).
        Kind(
            "deep_page", f"plain list, page {deep_page} by cursor", [{**base, "cursor": f"@page{deep_page}"}]
        ),
        # The same page by OFFSET, for comparison with earlier runs.
        Kind("deep_offset", f"plain list, page {deep_page} by OFFSET", [{**base, "page": str(deep_page)}]),
    ]


def resolve_cursors(client: httpx.Client, kinds: list[Kind], deadline: Deadline) -> list[Kind]:
    """Replace a `cursor=@pageN` placeholder with the real cursor of page N, found by following
    `next_cursor` from page 1 with the same parameters (untimed)."""
    resolved = []
    for kind in kinds:
        params = []
        for original in kind.params:
            p = original
            if p.get("cursor", "").startswith("@page"):
                target = int(p["cursor"].removeprefix("@page"))
                walk = {k: v for k, v in p.items() if k not in ("cursor", "page")}
                cursor = None
                for _ in range(target - 1):
                    deadline.check("walking to a deep page")
                    response = client.get(
                        f"{API}/cases", params={**walk, **({"cursor": cursor} if cursor else {})}
                    )
                    if response.status_code != 200:
                        raise BenchError(
                            f"GET /cases {walk} -> {response.status_code}: {response.text[:500]}"
                        )
                    cursor = response.json()["meta"]["pagination"].get("next_cursor")  # absent: the last page
                    if cursor is None:
                        raise BenchError(f"the list ends before page {target}")
                log(f"{kind.name}: cursor of page {target} found")
                p = {**walk, "cursor": str(cursor)}
            params.append(p)
        resolved.append(Kind(kind.name, kind.description, params))
    return resolved


def describe(params: dict[str, str]) -> str:
    shown = {
        k: (v if k != "cursor" else v[:12] + "…")
        for k, v in params.items()
        if k not in ("sort", "order", "limit") and (k, v) != ("page", "1")
    }
    return "&".join(f"{k}={v}" for k, v in shown.items()) or "(no parameters)"


# ---------------------------------------------------------------------------------------------
# The server and the HTTP client
# ---------------------------------------------------------------------------------------------


def free_port() -> int:
    with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as sock:
        sock.bind(("127.0.0.1", 0))
        return int(sock.getsockname()[1])


@dataclass
class Server:
    process: subprocess.Popen[bytes]
    base_url: str
    log_path: Path
    email: str
    password: str

    def log_tail(self, lines: int = 40) -> str:
        try:
            return "\n".join(self.log_path.read_text(errors="replace").splitlines()[-lines:])
        except OSError:
            return "(no server log)"


@contextmanager
def running_server(target: Target, data_dir: Path, deadline: Deadline) -> Iterator[Server]:
    """`casefile serve` on a free loopback port; always stopped on exit."""
    port = free_port()
    email = ADMIN_EMAIL
    asyncio.run(forget_bench_admin(target, email, deadline))
    password = secrets.token_urlsafe(18)
    env = server_environment(
        target,
        data_dir,
        {
            "CASEFILE_ADMIN_EMAIL": email,
            "CASEFILE_ADMIN_PASSWORD": password,
            "CASEFILE_JWT_TTL_SECONDS": "7200",
        },
    )
    log_path = data_dir / "server.log"
    command = [str(casefile_executable()), "serve", "--host", "127.0.0.1", "--port", str(port)]
    log(f"starting {' '.join(command[1:])}")
    with log_path.open("wb") as log_file:
        process = subprocess.Popen(
            command, env=env, cwd=data_dir, stdout=log_file, stderr=subprocess.STDOUT, start_new_session=True
        )
    server = Server(process, f"http://127.0.0.1:{port}", log_path, email, password)
    try:
        wait_until_healthy(server, deadline)
        yield server
    except BaseException:
        print(f"--- last lines of the server log ---\n{server.log_tail()}", file=sys.stderr)
        raise
    finally:
        stop_server(process)


def wait_until_healthy(server: Server, deadline: Deadline) -> None:
    give_up = time.monotonic() + min(120.0, deadline.check("starting the server"))
    with httpx.Client(base_url=server.base_url, trust_env=False, timeout=5) as client:
        while time.monotonic() < give_up:
            if server.process.poll() is not None:
                raise BenchError(f"the server exited ({server.process.returncode}):\n{server.log_tail()}")
            with suppress(httpx.TransportError):
                if client.get("/healthz").status_code == 200:
                    return
            time.sleep(0.2)
    raise BenchError(f"the server did not answer /healthz in time:\n{server.log_tail()}")


def stop_server(process: subprocess.Popen[bytes]) -> None:
    if process.poll() is not None:
        return
    log(f"stopping the server (pid {process.pid})")
    process.terminate()
    try:
        process.wait(timeout=20)
    except subprocess.TimeoutExpired:
        process.kill()
        process.wait(timeout=10)


def login(client: httpx.Client, server: Server) -> str:
    response = client.post(f"{API}/auth/login", json={"email": server.email, "password": server.password})
    if response.status_code != 200:
        raise BenchError(f"login failed: {response.status_code} {response.text[:500]}")
    token: str = response.json()["data"]["token"]
    return token


def run_kind(
    client: httpx.Client, kind: Kind, *, warmup: int, requests: int, deadline: Deadline, mine: Mine
) -> KindResult:
    # Kinds with many queries keep their first few for the warm-up; the others reuse them all.
    timed_pool = kind.params[warmup:] if len(kind.params) > 2 * warmup else kind.params
    for i in range(warmup):
        get_cases(client, kind.params[i % len(kind.params)], deadline)
    totals: list[int] = []
    latencies: list[float] = []
    used: list[str] = []
    cpu_before = cpu_times()
    others_before = mine.others_cpu_ticks()
    for i in range(requests):
        params = timed_pool[i % len(timed_pool)]
        elapsed_ms, total = get_cases(client, params, deadline)
        latencies.append(elapsed_ms)
        totals.append(total)
        used.append(describe(params))
    return KindResult(
        name=kind.name,
        description=kind.description,
        example=describe(timed_pool[0]),
        requests=requests,
        totals=totals,
        latencies_ms=latencies,
        queries=used,
        cpu_busy_percent=busy_percent(cpu_before, cpu_after := cpu_times()),
        other_cpu_percent=others_percent(others_before, mine.others_cpu_ticks(), cpu_before, cpu_after),
    )


@dataclass(frozen=True)
class Mine:
    """The processes whose CPU is this benchmark's own: this script, the server it started, and
    the PostgreSQL backends connected to the benchmark database (their process title names it)."""

    pids: frozenset[int]
    database: str

    def is_mine(self, pid: int) -> bool:
        if pid in self.pids:
            return True
        try:
            title = Path(f"/proc/{pid}/cmdline").read_bytes().replace(b"\0", b" ").decode(errors="replace")
        except OSError:
            return False
        return title.startswith("postgres:") and f" {self.database} " in title

    def others_cpu_ticks(self) -> dict[int, int]:
        """utime + stime, in clock ticks, of every other live process."""
        ticks: dict[int, int] = {}
        with suppress(OSError):
            for entry in os.scandir("/proc"):
                if not entry.name.isdigit() or self.is_mine(int(entry.name)):
                    continue
                try:
                    stat = Path(f"/proc/{entry.name}/stat").read_text().rsplit(")", 1)[1].split()
                except (OSError, IndexError):
                    continue
                ticks[int(entry.name)] = int(stat[11]) + int(stat[12])
        return ticks


def others_percent(
    before: dict[int, int], after: dict[int, int], cpu_before: tuple[int, int], cpu_after: tuple[int, int]
) -> float | None:
    """Share of the machine's CPU (100% = every core) that other processes used in between; short-
    lived processes that came and went in between are not seen."""
    total = cpu_after[1] - cpu_before[1]
    if total <= 0 or not after:
        return None
    used = sum(ticks - before[pid] for pid, ticks in after.items() if pid in before)
    return round(100 * used / total, 1)


def run_kind_with_retries(
    client: httpx.Client, kind: Kind, args: argparse.Namespace, deadline: Deadline, mine: Mine
) -> KindResult:
    """Time one kind; on a shared machine, time it again (up to --retries times) while other
    processes used more than CONTENDED_PERCENT of the CPU, and keep the least disturbed attempt."""
    attempts: list[KindResult] = []
    for attempt in range(1 + args.retries):
        if args.wait_idle:
            check_machine_idle(args.wait_idle, deadline)
        log(f"timing {kind.name}: {args.warmup} warm-up + {args.requests} timed requests")
        result = run_kind(
            client, kind, warmup=args.warmup, requests=args.requests, deadline=deadline, mine=mine
        )
        s = result.summary()
        log(
            f"  total {s['total_median']:,} (median)  p50 {s['p50_ms']:.1f} ms  p95 {s['p95_ms']:.1f} ms  "
            f"max {s['max_ms']:.1f} ms  (other processes: {s['other_cpu_percent']}% CPU)"
        )
        attempts.append(result)
        other = result.other_cpu_percent
        if other is None or other <= CONTENDED_PERCENT or attempt == args.retries:
            break
        log(f"  other processes used {other:.0f}% of the CPU: timing {kind.name} again")
    best = min(attempts, key=lambda r: r.other_cpu_percent or 0.0)
    best.attempts = len(attempts)
    return best


def cpu_times() -> tuple[int, int]:
    """(busy, total) jiffies of the whole machine, from /proc/stat; (0, 0) where unavailable."""
    try:
        fields = [int(x) for x in Path("/proc/stat").read_text().split("\n", 1)[0].split()[1:]]
    except (OSError, ValueError):
        return 0, 0
    idle = fields[3] + (fields[4] if len(fields) > 4 else 0)  # idle + iowait
    return sum(fields) - idle, sum(fields)


def busy_percent(before: tuple[int, int], after: tuple[int, int]) -> float | None:
    """CPU busy share of the whole machine between two samples (100% = every core busy)."""
    total = after[1] - before[1]
    return round(100 * (after[0] - before[0]) / total, 1) if total > 0 else None


def check_machine_idle(wait_seconds: float, deadline: Deadline) -> float | None:
    """Sample the CPU for two seconds before timing (other work would inflate the figures); with
    `wait_seconds`, keep sampling until the machine is idle or that time has passed."""
    give_up = time.monotonic() + min(wait_seconds, max(0.0, deadline.remaining() - 60))
    while True:
        before = cpu_times()
        time.sleep(2)
        busy = busy_percent(before, cpu_times())
        if busy is None or busy <= IDLE_BUSY_PERCENT or time.monotonic() >= give_up:
            break
    if busy is not None and busy > IDLE_BUSY_PERCENT:
        log(f"WARNING: the machine is {busy:.0f}% busy before timing starts; the figures will be inflated")
    return busy


def get_cases(client: httpx.Client, params: dict[str, str], deadline: Deadline) -> tuple[float, int]:
    timeout = min(60.0, deadline.check("the next request"))
    started = time.perf_counter()
    response = client.get(f"{API}/cases", params=params, timeout=timeout)
    elapsed_ms = (time.perf_counter() - started) * 1000
    if response.status_code != 200:
        raise BenchError(f"GET /cases {params} -> {response.status_code}: {response.text[:500]}")
    body = response.json()
    total: int = body["meta"]["pagination"]["total"]
    return elapsed_ms, total


# ---------------------------------------------------------------------------------------------
# EXPLAIN: the SQL that casefile.listing.fetch_page issues
# ---------------------------------------------------------------------------------------------

SELECT_COLUMNS = ", ".join(f"cases.{c.strip()}" for c in CASE_COLUMNS.split(","))


async def search_tsquery(conn: asyncpg.Connection, text: str) -> str:
    """The tsquery text `casefile.cases.repository.search_condition` sends for a search: each
    plain word replaced by the whole words that start it (from `case_words`, at most
    MAX_WORDS_PER_PREFIX), else kept as a prefix."""
    terms: list[str] = []
    for word in search_words(text) or []:
        whole = []
        if PLAIN_WORD.fullmatch(word):
            rows = await conn.fetch(
                "SELECT DISTINCT word FROM case_words WHERE word LIKE $1 LIMIT $2",
                f"{word}%",
                MAX_WORDS_PER_PREFIX + 1,
            )
            whole = [row["word"] for row in rows]
        if not whole or len(whole) > MAX_WORDS_PER_PREFIX:
            terms.append(f"{word}:*")  # (no whole word at all: the server answers without a query)
        else:
            terms.append(f"({' | '.join(whole)})")
    return " & ".join(terms)


def listing_sql(params: dict[str, str], tsquery: str | None) -> tuple[str, str, list[Any]]:
    """(count SQL, page SQL, bind values) as fetch_page builds them: filters first, then the search
    condition (`tsquery` from search_tsquery); ORDER BY the sort column and id; LIMIT/OFFSET as bind
    parameters."""
    where: list[str] = []
    values: list[Any] = []
    for name in ("status", "case_type", "priority", "jurisdiction"):
        if name in params:
            values.append(params[name])
            where.append(f"cases.{name} = ${len(values)}::VARCHAR")
    if "search" in params:
        values.append(tsquery)
        where.append(f"cases.search_vector @@ to_tsquery('simple', ${len(values)})")
    where_sql = f" WHERE {' AND '.join(where)}" if where else ""
    # Capped as casefile.listing does: at most 10,001 matches are read (total_exact beyond).
    count_sql = f"SELECT count(*) AS count_1 FROM (SELECT 1 FROM cases{where_sql} LIMIT 10001) AS capped"
    limit, page = int(params.get("limit", "20")), int(params.get("page", "1"))
    values_page = [*values, limit, (page - 1) * limit]
    n = len(values)
    page_sql = (
        f"SELECT {SELECT_COLUMNS} FROM cases{where_sql} "
        f"ORDER BY cases.created_at DESC, cases.id DESC LIMIT ${n + 1}::INTEGER OFFSET ${n + 2}::INTEGER"
    )
    return count_sql, page_sql, values_page


def inline(sql: str, values: list[Any]) -> str:
    """Substitute bind values as literals (they are letters, digits, '&', ':*' and ints only)."""
    for i in range(len(values), 0, -1):
        sql = sql.replace(f"${i}", literal(values[i - 1]))
    return sql


def literal(value: Any) -> str:
    return str(value) if isinstance(value, int) else "'" + str(value).replace("'", "''") + "'"


async def explain_all(
    target: Target, chosen: list[tuple[str, dict[str, str]]], deadline: Deadline
) -> list[dict[str, Any]]:
    """EXPLAIN (ANALYZE, BUFFERS) of the count and page queries for each (kind, params): as a
    custom plan (literal values, what the first executions of a prepared statement get) and as a
    generic plan (what PostgreSQL may switch a reused prepared statement to after five runs)."""
    conn = await connect(target.url, deadline)
    out: list[dict[str, Any]] = []
    try:
        for kind, params in chosen:
            tsquery = await search_tsquery(conn, params["search"]) if "search" in params else None
            count_sql, page_sql, values = listing_sql(params, tsquery)
            n_filter = len(values) - 2
            entry: dict[str, Any] = {"kind": kind, "query": describe(params), "plans": {}}
            for label, sql, vals in (("count", count_sql, values[:n_filter]), ("page", page_sql, values)):
                deadline.check("EXPLAIN")
                custom = await conn.fetch(f"EXPLAIN (ANALYZE, BUFFERS) {inline(sql, vals)}")
                entry["plans"][f"{label}_custom"] = [r[0] for r in custom]
                if vals:
                    entry["plans"][f"{label}_generic"] = await explain_generic(conn, sql, vals)
            out.append(entry)
    finally:
        await conn.close()
    return out


async def explain_generic(conn: asyncpg.Connection, sql: str, values: list[Any]) -> list[str]:
    types = ", ".join("integer" if isinstance(v, int) else "text" for v in values)
    args = ", ".join(literal(v) for v in values)
    name = "bench_generic"
    await conn.execute(f"PREPARE {name} ({types}) AS {sql}")
    try:
        await conn.execute("SET plan_cache_mode = force_generic_plan")
        rows = await conn.fetch(f"EXPLAIN (ANALYZE, BUFFERS) EXECUTE {name} ({args})")
        return [r[0] for r in rows]
    finally:
        await conn.execute("RESET plan_cache_mode")
        await conn.execute(f"DEALLOCATE {name}")


async def database_facts(target: Target, deadline: Deadline) -> dict[str, Any]:
    conn = await connect(target.url, deadline)
    try:
        facts: dict[str, Any] = {
            "server_version": await conn.fetchval("SHOW server_version"),
            "rows": await conn.fetchval("SELECT count(*) FROM cases"),
            "table_size": await conn.fetchval("SELECT pg_size_pretty(pg_table_size('cases'))"),
            "indexes_size": await conn.fetchval("SELECT pg_size_pretty(pg_indexes_size('cases'))"),
        }
        for setting in (
            "shared_buffers",
            "work_mem",
            "effective_cache_size",
            "random_page_cost",
            "max_parallel_workers_per_gather",
            "jit",
        ):
            facts[setting] = await conn.fetchval(f"SHOW {setting}")
        sizes = await conn.fetch(
            """
            SELECT i.relname AS name, pg_size_pretty(pg_relation_size(i.oid)) AS size
            FROM pg_index x JOIN pg_class i ON i.oid = x.indexrelid
            WHERE x.indrelid = 'cases'::regclass ORDER BY pg_relation_size(i.oid) DESC
            """
        )
        facts["index_sizes"] = {r["name"]: r["size"] for r in sizes}
        facts["database_settings"] = await conn.fetchval(
            """
            SELECT setconfig FROM pg_db_role_setting
            WHERE setrole = 0
              AND setdatabase = (SELECT oid FROM pg_database WHERE datname = current_database())
            """
        )
        return facts
    finally:
        await conn.close()


SETTING_NAME = re.compile(r"[a-z_]+")
SETTING_VALUE = re.compile(r"[A-Za-z0-9_.]+")


def parse_settings(items: list[str]) -> dict[str, str]:
    settings: dict[str, str] = {}
    for item in items:
        name, _, value = item.partition("=")
        if not SETTING_NAME.fullmatch(name) or not SETTING_VALUE.fullmatch(value):
            raise BenchError(f"--pg-setting must be name=value (letters, digits, _ and .): {item!r}")
        settings[name] = value
    return settings


@contextmanager
def database_settings(target: Target, settings: dict[str, str], deadline: Deadline) -> Iterator[None]:
    """`ALTER DATABASE <bench> SET name = value` for the block (new sessions see it), then RESET."""

    async def apply(reset: bool) -> None:
        conn = await asyncpg.connect(target.url, timeout=30)
        try:
            for name, value in settings.items():
                action = f"RESET {name}" if reset else f"SET {name} = '{value}'"
                await conn.execute(f"ALTER DATABASE {quote_ident(target.name)} {action}")
        finally:
            await conn.close()

    if not settings:
        yield
        return
    deadline.check("applying settings")
    log(f"database-level settings for this run: {settings}")
    asyncio.run(apply(reset=False))
    try:
        yield
    finally:
        asyncio.run(apply(reset=True))


async def forget_bench_admin(target: Target, email: str, deadline: Deadline) -> None:
    """Delete the benchmark's administrator left by an earlier run (its password was random), so
    that `casefile serve` creates it again with this run's password."""
    conn = await connect(target.url, deadline)
    try:
        await conn.execute("DELETE FROM users WHERE lower(email) = lower($1)", email)
    finally:
        await conn.close()


async def sample_case_numbers(target: Target, count: int, deadline: Deadline) -> list[str]:
    conn = await connect(target.url, deadline)
    try:
        total = await conn.fetchval("SELECT count(*) FROM cases")
        percent = min(100.0, 100.0 * 20 * count / max(total, 1))
        rows = await conn.fetch(
            f"SELECT case_number FROM cases TABLESAMPLE BERNOULLI ({percent:.4f}) REPEATABLE (42) "
            "ORDER BY md5(case_number) LIMIT $1",
            count,
        )
        return [r[0] for r in rows]
    finally:
        await conn.close()


# ---------------------------------------------------------------------------------------------
# Report
# ---------------------------------------------------------------------------------------------


def results_table(summaries: list[dict[str, Any]]) -> str:
    header = (
        f"{'kind':<14} {'example':<32} {'n':>4} {'total (median)':>15} {'total range':>19} "
        f"{'p50 ms':>8} {'p95 ms':>8} {'max ms':>8} {'other':>6}  <{TARGET_MS:.0f}ms p95"
    )
    lines = [header, "-" * len(header)]
    for s in summaries:
        verdict = "yes" if s["p95_ms"] < TARGET_MS else "NO"
        total_range = f"{s['total_min']:,}-{s['total_max']:,}"
        cpu = "?" if s["other_cpu_percent"] is None else f"{s['other_cpu_percent']:.0f}%"
        lines.append(
            f"{s['kind']:<14} {s['example'][:32]:<32} {s['requests']:>4} {s['total_median']:>15,} "
            f"{total_range:>19} {s['p50_ms']:>8.1f} {s['p95_ms']:>8.1f} {s['max_ms']:>8.1f} "
            f"{cpu:>6}  {verdict}"
        )
    return "\n".join(lines)


def print_plans(explains: list[dict[str, Any]], kinds: set[str]) -> None:
    for entry in explains:
        if entry["kind"] not in kinds:
            continue
        for label, lines in entry["plans"].items():
            print(f"\n--- EXPLAIN (ANALYZE, BUFFERS): {entry['kind']} [{entry['query']}] {label} ---")
            print("\n".join(lines))


def parse_args(argv: list[str] | None = None) -> argparse.Namespace:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0] if __doc__ else None)
    parser.add_argument("--database-url", default=DEFAULT_URL, help=f"default {DEFAULT_URL}")
    parser.add_argument("--rows", type=int, default=1_000_000, help="cases to load (default 1,000,000)")
    reuse = parser.add_mutually_exclusive_group()
    reuse.add_argument("--reuse", action="store_true", help="use the existing database (load if empty)")
    reuse.add_argument(
        "--recreate", action="store_true", help="drop the database first (name must contain 'bench')"
    )
    parser.add_argument(
        "--reload", action="store_true", help="with --reuse: replace rows of a different count"
    )
    parser.add_argument("--requests", type=int, default=60, help="timed requests per query kind (>= 50)")
    parser.add_argument("--warmup", type=int, default=5, help="untimed requests per kind first")
    parser.add_argument("--batch-rows", type=int, default=50_000, help="rows per INSERT ... SELECT")
    parser.add_argument("--deadline-minutes", type=float, default=30.0, help="bound on the whole run")
    parser.add_argument("--seed", type=int, default=20261122, help="seed for choosing the queries")
    parser.add_argument(
        "--wait-idle",
        type=float,
        default=0.0,
        metavar="SECONDS",
        help=f"wait up to this long before timing for an idle machine (<= {IDLE_BUSY_PERCENT:.0f}%% CPU)",
    )
    parser.add_argument(
        "--retries",
        type=int,
        default=0,
        help=f"time a kind again, up to this many times, while others used > {CONTENDED_PERCENT:.0f}%% CPU",
    )
    parser.add_argument("--kinds", default="", help="comma-separated query kinds to run, in that order")
    parser.add_argument("--deep-page", type=int, default=DEEP_PAGE, help="the page of the deep kinds")
    parser.add_argument(
        "--pg-setting",
        action="append",
        default=[],
        metavar="NAME=VALUE",
        help="a PostgreSQL setting for the server's sessions during the run (ALTER DATABASE ... SET, "
        "reset afterwards), e.g. plan_cache_mode=force_custom_plan; repeatable",
    )
    args = smoke.parse_args(
        parser,
        argv,
        database_url=SMOKE_URL,
        rows=1000,
        recreate=True,
        reuse=False,
        requests=1,
        warmup=0,
        batch_rows=1000,
        deep_page=3,
        deadline_minutes=3.0,
    )
    if args.rows < 1000:
        parser.error("--rows must be at least 1000")
    if args.requests < 1:
        parser.error("--requests must be positive")
    return args


def main(argv: list[str] | None = None) -> int:
    args = parse_args(argv)
    target = Target.parse(args.database_url)
    deadline = Deadline(args.deadline_minutes * 60)
    deadline.arm()
    started_at = datetime.now(UTC)
    try:
        return run(args, target, deadline, started_at)
    except BenchError as exc:
        print(f"\nbenchmark failed: {exc}", file=sys.stderr)
        return 1
    finally:
        Deadline.disarm()


def run(args: argparse.Namespace, target: Target, deadline: Deadline, started_at: datetime) -> int:
    settings = parse_settings(args.pg_setting)
    with tempfile.TemporaryDirectory(prefix="casefile-bench-") as tmp:
        data_dir = Path(tmp)
        asyncio.run(prepare_database(target, reuse=args.reuse, recreate=args.recreate, deadline=deadline))
        run_migrations(target, data_dir, deadline)
        load = asyncio.run(
            load_cases(target, args.rows, reload=args.reload, batch_rows=args.batch_rows, deadline=deadline)
        )
        facts = asyncio.run(database_facts(target, deadline))
        if facts["database_settings"]:
            log(f"WARNING: {target.name} has database-level settings: {facts['database_settings']}")
        log(
            f"{facts['rows']:,} cases; table {facts['table_size']}, indexes {facts['indexes_size']}; "
            f"PostgreSQL {facts['server_version']}"
        )
        rng = random.Random(args.seed)
        case_numbers = asyncio.run(sample_case_numbers(target, args.requests + args.warmup, deadline))
        kinds = build_kinds(case_numbers, rng, args.deep_page)
        if args.kinds:
            # In the order given: under plan_cache_mode=auto, what ran before can change the plans.
            by_name = {k.name: k for k in kinds}
            wanted = [name.strip() for name in args.kinds.split(",") if name.strip()]
            unknown = [name for name in wanted if name not in by_name]
            if unknown:
                raise BenchError(f"unknown kinds {unknown}; known: {', '.join(by_name)}")
            kinds = [by_name[name] for name in wanted]

        results: list[KindResult] = []
        with (
            database_settings(target, settings, deadline),
            running_server(target, data_dir, deadline) as server,
            httpx.Client(base_url=server.base_url, trust_env=False, timeout=60) as client,
        ):
            client.headers["Authorization"] = f"Bearer {login(client, server)}"
            kinds = resolve_cursors(client, kinds, deadline)
            idle_check = check_machine_idle(args.wait_idle, deadline)
            mine = Mine(frozenset({os.getpid(), server.process.pid}), target.name)
            for kind in kinds:
                results.append(run_kind_with_retries(client, kind, args, deadline, mine))

        summaries = [r.summary() for r in results]
        log("EXPLAIN (ANALYZE, BUFFERS) of the listing SQL, one query per kind")
        # The EXPLAIN's SQL (listing_sql) has no keyset condition: cursor kinds are left out.
        chosen = [
            (k.name, k.params[min(args.warmup, len(k.params) - 1)])
            for k in kinds
            if not any("cursor" in p for p in k.params)
        ]
        with database_settings(target, settings, deadline):
            explains = asyncio.run(explain_all(target, chosen, deadline))

        print("\n" + results_table(summaries))
        slow = {s["kind"] for s in summaries if s["p95_ms"] >= TARGET_MS}
        print_plans(explains, {"rare_word", "common_word"} | slow)
        report = {
            "benchmark": "search_cases",
            "started_at": started_at.isoformat(),
            "finished_at": datetime.now(UTC).isoformat(),
            "machine": {
                "cpus": os.cpu_count(),
                "platform": platform.platform(),
                "python": platform.python_version(),
            },
            "database": facts,
            "cpu_busy_percent_before_timing": idle_check,
            "load": load,
            "options": {k: v for k, v in vars(args).items() if k != "database_url"},
            "pg_settings_for_run": settings,
            "target_ms": TARGET_MS,
            "results": summaries,
            "latencies_ms": {r.name: [round(x, 2) for x in r.latencies_ms] for r in results},
            "explain": explains,
        }
        RESULTS_DIR.mkdir(parents=True, exist_ok=True)
        path = RESULTS_DIR / f"search_cases-{started_at.strftime('%Y%m%dT%H%M%SZ')}.json"
        path.write_text(json.dumps(report, indent=2, default=str) + "\n")
        print(f"\nresults written to {path.relative_to(ROOT)}")
        if slow:
            print(f"p95 at or above {TARGET_MS:.0f} ms: {', '.join(sorted(slow))}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
