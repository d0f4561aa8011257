"""Time drafted from the record: the caller's own audit trail of a day, grouped per matter into
sessions, becomes suggested draft entries (docs/billing.md#suggestions).

Only what the caller did (their `user_id`), only successful actions, only on matters they may
still see now (`access.matter.visible_case_ids`): a matter they were walled off from since leaves
no trace. Billing's own actions (time, invoices, trust) are not work to bill."""

from __future__ import annotations

import datetime as dt
from collections import defaultdict
from datetime import UTC, datetime, time, timedelta
from typing import Any

from sqlalchemy import select
from sqlalchemy.ext.asyncio import AsyncSession

from casefile.access.matter import visible_case_ids
from casefile.auth.permissions import Principal
from casefile.billing import rules
from casefile.models import AuditEntry, Case
from casefile.schemas import OutModel
from casefile.settings import Settings

SESSION_GAP = timedelta(minutes=15)  # a pause longer than this ends a working session
_NOT_WORK = ("time_entry.", "expense.", "invoice.", "trust.", "billing.", "user.", "audit.")
_PHRASES = (  # (action prefix, what the description says), the first that matches
    ("document.upload", "uploaded {n} document{s}"),
    ("document.", "reviewed {n} document{s}"),
    ("note.", "wrote {n} note{s}"),
    ("task.", "worked on {n} task{s}"),
    ("deadline.", "computed {n} deadline{s}"),
    ("search.", "researched ({n} search{es})"),
    ("ai.", "asked questions of the file ({n})"),
    ("party.", "worked on {n} part{ies}"),
    ("contact.", "worked on {n} contact{s}"),
    ("case.", "reviewed the matter"),
)


class SuggestionOut(OutModel):
    case_id: str
    case_title: str
    date: dt.date
    seconds: int
    sessions: list[dict[str, str]]
    description: str
    actions: int


def _phrase(action: str) -> str:
    for prefix, phrase in _PHRASES:
        if action.startswith(prefix):
            return phrase
    return "{n} other action{s}"


def _describe(rows: list[AuditEntry]) -> str:
    targets: dict[str, set[str]] = defaultdict(set)
    for row in rows:
        targets[_phrase(row.action)].add(row.resource_id or row.id)
    parts = []
    for phrase, ids in targets.items():
        n = len(ids)
        parts.append(
            phrase.format(
                n=n, s="" if n == 1 else "s", es="" if n == 1 else "es", ies="y" if n == 1 else "ies"
            )
        )
    text = "; ".join(parts)
    return text[:1].upper() + text[1:]


def _sessions(times: list[datetime], increment: timedelta) -> list[tuple[datetime, datetime]]:
    """Runs of actions no more than `SESSION_GAP` apart; each lasts until its last action plus
    one increment (the last action took some time too)."""
    spans: list[tuple[datetime, datetime]] = []
    for at in sorted(times):
        if spans and at - spans[-1][1] <= SESSION_GAP:
            spans[-1] = (spans[-1][0], at)
        else:
            spans.append((at, at))
    return [(start, end + increment) for start, end in spans]


async def suggest(
    session: AsyncSession, settings: Settings, principal: Principal, day: dt.date
) -> list[dict[str, Any]]:
    if principal.user_id is None or day >= dt.date.max:  # the day after the last is none
        return []
    start = datetime.combine(day, time(0), tzinfo=UTC)
    statement = (
        select(AuditEntry)
        .where(
            AuditEntry.user_id == principal.user_id,
            AuditEntry.at >= start,
            AuditEntry.at < start + timedelta(days=1),
            AuditEntry.case_id.is_not(None),
            AuditEntry.outcome == "success",
        )
        .order_by(AuditEntry.at)
    )
    by_case: dict[str, list[AuditEntry]] = defaultdict(list)
    for row in (await session.scalars(statement)).all():
        if not row.action.startswith(_NOT_WORK):
            by_case[str(row.case_id)].append(row)
    visible = await visible_case_ids(session, principal, by_case)
    titles = dict(
        (await session.execute(select(Case.id, Case.title).where(Case.id.in_(sorted(visible))))).all()
    )
    increment = timedelta(minutes=settings.billing_increment_minutes)
    out = []
    for case_id in sorted(visible, key=lambda c: by_case[c][0].at):
        rows = by_case[case_id]
        spans = _sessions([r.at for r in rows], increment)
        seconds = int(sum((end - begin for begin, end in spans), timedelta()).total_seconds())
        out.append(
            SuggestionOut(
                case_id=case_id,
                case_title=titles.get(case_id, ""),
                date=day,
                seconds=rules.billed_seconds(seconds, int(increment.total_seconds())),
                sessions=[{"start": b.isoformat(), "end": e.isoformat()} for b, e in spans],
                description=_describe(rows),
                actions=len(rows),
            ).model_dump(mode="json")
        )
    return out
