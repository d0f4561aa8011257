"""Conflict checks (docs/api-conventions.md#conflict-checks): does the firm know this name already?

A requested name is compared with every contact's name and aliases, and with every case's client
name, after both are reduced to matching keys (`casefile.nlp.name_keys`: case, accents,
punctuation, legal forms and word order do not count). The score is rapidfuzz's `ratio` of the
keys (their words are sorted, so it is `token_sort_ratio` of the names, without sorting again on
every comparison), 0 to 1; a hit scores at least `SCORE_CUTOFF`. Every party of a matching
contact, in every case whatever its status, is a hit on that case. A hit on a case the reader may
not see keeps only its case id, score and source (`redact`).

Speed: the score is an Indel similarity, 2·common/(len a + len b), so a key can only reach the
cut-off if its length is within a window around the requested key's length. The database hands
over only the keys in that window (`contact_names.key_length`, indexed with the key), and
rapidfuzz scores them in C (`process.extract`).
"""

from __future__ import annotations

from typing import Any

from rapidfuzz import fuzz, process
from sqlalchemy import ColumnElement, String, and_, cast, func, literal_column, or_, select, true
from sqlalchemy.ext.asyncio import AsyncSession

from casefile.access.matter import Level, case_for, visible_case_ids, visible_to
from casefile.auth.permissions import Principal
from casefile.conflicts.repository import CONFLICT_CHECK_LIST
from casefile.conflicts.schemas import ConflictCheckOut
from casefile.db import dialect_name, get_or_404
from casefile.errors import NotFound
from casefile.events import payloads
from casefile.events.outbox import emit
from casefile.listing import ListQuery, Page, fetch_page
from casefile.models import ApiKey, Case, ConflictCheck, ContactName, Party
from casefile.nlp.name_keys import name_key

SCORE_CUTOFF = 85  # of 100: "Jon Smith" and "John Smith" (95) match, "Smith" and "Smyth" (80) not
MAX_NAMES_PER_REQUEST = 50  # contact names and client names kept per requested name, best first
SOURCE_ORDER = {"party": 0, "client_name": 1, "contact": 2, "alias": 3}


def length_window(length: int, cutoff: int = SCORE_CUTOFF) -> tuple[int, int]:
    """The lengths a key may have and still score `cutoff` (of 100) against a key of `length`:
    2·length/(length + other) ≥ cutoff/100 on either side. Integer arithmetic, so that the edges
    are exact (a float 17·1.15/0.85 is just under 23)."""
    low = -(-length * cutoff // (200 - cutoff))  # ceiling
    return low, length * (200 - cutoff) // cutoff


def _best(query: str, keys: list[str]) -> list[tuple[int, float]]:
    """(index into `keys`, score 0-100) of the keys that reach the cut-off, best first."""
    found = process.extract(
        query, keys, scorer=fuzz.ratio, score_cutoff=SCORE_CUTOFF, limit=MAX_NAMES_PER_REQUEST
    )
    return [(index, score) for _, score, index in found]


def _hit(name: str, matched: str, score: float, source: str, **where: str | None) -> dict[str, Any]:
    return {
        "name": name,
        "matched": matched,
        "score": round(score / 100, 4),
        "source": source,
        "contact_id": where.get("contact_id"),
        "case_id": where.get("case_id"),
        "role": where.get("role"),
    }


async def _candidates(session: AsyncSession, low: int, high: int) -> tuple[list[str], list[str]]:
    """(ids, keys) of the contact names whose key length is in [low, high], in the same order.
    They can be a hundred thousand: the database joins each column into one text value (a key
    never holds a line break), which is several times faster than as many rows through the driver
    and SQLAlchemy, and Python splits them in C."""
    postgresql = dialect_name(session) == "postgresql"
    newline: ColumnElement[str] = literal_column("E'\\n'") if postgresql else literal_column("char(10)")
    ids, keys = cast(ContactName.id, String), ContactName.key
    aggregate = func.string_agg if postgresql else func.group_concat
    # Both databases feed every aggregate of one (ungrouped) query each row in turn, so the two
    # lists line up. No ORDER BY inside the aggregates: PostgreSQL would sort each one separately.
    columns = [aggregate(ids, newline), aggregate(keys, newline)]
    row = (await session.execute(select(*columns).where(ContactName.key_length.between(low, high)))).one()
    if row[0] is None:
        return [], []
    return row[0].split("\n"), row[1].split("\n")


async def _contact_hits(
    session: AsyncSession,
    name: str,
    key: str,
    candidates: tuple[list[str], list[str]],
    *,
    exclude_contact_id: str | None,
    exclude_party_id: str | None,
) -> list[dict[str, Any]]:
    ids, keys = candidates
    best = _best(key, keys)
    if not best:
        return []
    scores = {int(ids[index]): score for index, score in best}
    found = await session.scalars(select(ContactName).where(ContactName.id.in_(scores)))
    # The best-scoring name of each contact stands for it.
    per_contact: dict[str, tuple[ContactName, float]] = {}
    for row in found:
        held = per_contact.get(row.contact_id)
        if held is None or scores[row.id] > held[1]:
            per_contact[row.contact_id] = (row, scores[row.id])
    hits = [
        _hit(name, row.name, score, row.source, contact_id=row.contact_id)
        for contact_id, (row, score) in per_contact.items()
        if contact_id != exclude_contact_id
    ]
    parties = await session.scalars(select(Party).where(Party.contact_id.in_(per_contact)))
    for party in parties:
        if party.id == exclude_party_id:
            continue
        row, score = per_contact[party.contact_id]
        hits.append(
            _hit(
                name,
                row.name,
                score,
                "party",
                contact_id=party.contact_id,
                case_id=party.case_id,
                role=party.role,
            )
        )
    return hits


async def _client_names(session: AsyncSession) -> list[tuple[str, str]]:
    """(client name, its key) of every distinct client name of a case."""
    client_name = Case.__table__.c.client_name
    connection = await session.connection()
    names = (
        await connection.execute(select(client_name).where(client_name.is_not(None)).distinct())
    ).scalars()
    return [(n, name_key(n)) for n in names if n]


async def _client_name_hits(
    session: AsyncSession, name: str, key: str, client_names: list[tuple[str, str]]
) -> list[dict[str, Any]]:
    best = _best(key, [k for _, k in client_names])
    scores = {client_names[index][0]: score for index, score in best}
    if not scores:
        return []
    cases = await session.execute(select(Case.id, Case.client_name).where(Case.client_name.in_(scores)))
    return [
        _hit(name, client, scores[client], "client_name", case_id=case_id, role="client")
        for case_id, client in cases.all()
        if client is not None
    ]


async def find_hits(
    session: AsyncSession,
    names: list[str],
    *,
    exclude_contact_id: str | None = None,
    exclude_party_id: str | None = None,
) -> list[dict[str, Any]]:
    """Every hit of every name, unredacted: per name, best first. `exclude_…`: the contact and
    party that an automatic check is run for (they would only find themselves)."""
    keys = {name: name_key(name) for name in names}
    # One read of the candidates for every name: the widest window. A key outside a name's own
    # window costs rapidfuzz a length comparison.
    windows = [length_window(len(key)) for key in keys.values()]
    candidates = await _candidates(session, min(w[0] for w in windows), max(w[1] for w in windows))
    client_names = await _client_names(session)
    hits: list[dict[str, Any]] = []
    for name, key in keys.items():
        found = await _contact_hits(
            session,
            name,
            key,
            candidates,
            exclude_contact_id=exclude_contact_id,
            exclude_party_id=exclude_party_id,
        )
        # A case's client name is usually also its client party: one hit for the two.
        clients = {h["case_id"] for h in found if h["source"] == "party" and h["role"] == "client"}
        found += [
            h
            for h in await _client_name_hits(session, name, key, client_names)
            if h["case_id"] not in clients
        ]
        found.sort(
            key=lambda h: (-h["score"], SOURCE_ORDER[h["source"]], h["case_id"] or "", h["contact_id"] or "")
        )
        hits += found
    return hits


def redact(hits: list[dict[str, Any]], visible: set[str]) -> list[dict[str, Any]]:
    """The hits as a reader who may see the cases `visible` sees them: a hit on any other case
    says only that a matter matched (its case id, the score and the source) and which of the
    reader's own names matched it; never the matter's names, contact or role."""
    shown = []
    for hit in hits:
        if hit["case_id"] is None or hit["case_id"] in visible:
            shown.append({**hit, "visible": True})
        else:
            hidden = dict.fromkeys(("matched", "contact_id", "role"))
            shown.append({**hit, **hidden, "visible": False})
    return shown


async def run_check(
    session: AsyncSession,
    actor: Principal,
    names: list[str],
    *,
    case_id: str | None = None,
    exclude_contact_id: str | None = None,
    exclude_party_id: str | None = None,
) -> ConflictCheck:
    hits = await find_hits(
        session, names, exclude_contact_id=exclude_contact_id, exclude_party_id=exclude_party_id
    )
    check = ConflictCheck(case_id=case_id, names=names, hits=hits, created_by=actor.actor_id)
    session.add(check)
    await session.flush()
    await emit(session, "conflict_check.completed", payloads.conflict_check_completed(check))
    return check


async def create_check(
    session: AsyncSession, actor: Principal, names: list[str], case_id: str | None
) -> ConflictCheck:
    if case_id is not None:
        await case_for(session, actor, case_id, Level.READ)
    return await run_check(session, actor, names, case_id=case_id)


async def get_check(session: AsyncSession, principal: Principal, check_id: str) -> ConflictCheck:
    """The check, if the reader may read it (`_readable`); else 404, as for a missing one."""
    found = await session.scalar(
        select(ConflictCheck.id).where(ConflictCheck.id == check_id, _readable(principal))
    )
    if found is None:
        raise NotFound("Conflict check not found")
    return await get_or_404(session, ConflictCheck, check_id, "Conflict check not found")


async def dump_for(session: AsyncSession, principal: Principal, check: ConflictCheck) -> dict[str, Any]:
    """The check as `principal` may see it: hits on cases it may not see redacted."""
    visible = await visible_case_ids(session, principal, {h["case_id"] for h in check.hits if h["case_id"]})
    data = ConflictCheckOut.model_validate(
        {
            **{c: getattr(check, c) for c in ("id", "case_id", "names", "created_by", "created_at")},
            "hits": redact(check.hits, visible),
        }
    )
    return data.model_dump(mode="json")


def _readable(principal: Principal) -> ColumnElement[bool]:
    """The checks `principal` may read (docs/api-conventions.md#conflict-checks): the names asked
    about may be a confidential prospective matter, so a check is its runner's. Readable by
    - whoever ran it: the user, or one of the user's API keys (and a key its own checks);
    - administrators (an administrator's token, or a key made by one);
    - for a check run for a case, whoever may see that case (a case's team reviews its checks).
    A check run for a case is never shown to someone walled off from it, administrators
    included, even its runner: the wall says they must not see the matter."""
    user_id = principal.user_id
    if user_id is None:  # a key whose creator is gone acts as nobody
        return ConflictCheck.created_by == principal.actor_id
    keys = select(ApiKey.id).where(ApiKey.created_by == user_id)
    own = or_(ConflictCheck.created_by.in_({principal.actor_id, user_id}), ConflictCheck.created_by.in_(keys))
    runner = true() if principal.acts_as_admin else own
    # A check's case that no longer exists leaves the check to its runner and administrators.
    case_exists = ConflictCheck.case_id.in_(select(Case.id))
    visible_case = ConflictCheck.case_id.in_(select(Case.id).where(visible_to(principal)))
    return or_(
        and_(ConflictCheck.case_id.is_(None), runner),
        and_(ConflictCheck.case_id.is_not(None), case_exists, visible_case),
        and_(ConflictCheck.case_id.is_not(None), ~case_exists, runner),
    )


async def list_checks(session: AsyncSession, principal: Principal, query: ListQuery) -> Page[ConflictCheck]:
    return await fetch_page(session, CONFLICT_CHECK_LIST, query, conditions=[_readable(principal)])
