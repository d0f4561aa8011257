"""`meta.pagination.total`: exact up to 10,000 matches, the lower bound 10,000 above
(`total_exact: false`). On a session whose transaction is rolled back after each test."""

from __future__ import annotations

import json

import pytest
from sqlalchemy import delete, insert
from sqlalchemy.ext.asyncio import AsyncSession

from casefile.envelope import paginated
from casefile.groups.models import Group
from casefile.groups.service import GROUP_LIST
from casefile.listing import TOTAL_CAP, ListQuery, fetch_page
from tests.support.factories import unique

pytestmark = pytest.mark.anyio


def query(page: int = 1, limit: int = 20) -> ListQuery:
    return ListQuery(
        page=page, limit=limit, sort="created_at", order="desc", search_words=None, fields=None, filters={}
    )


async def add_groups(session: AsyncSession, prefix: str, count: int) -> None:
    rows = [{"id": f"grp_{prefix}{i:06d}", "name": f"{prefix}-{i}"} for i in range(count)]
    await session.execute(insert(Group), rows)


async def test_totals_are_exact_up_to_the_cap(db_session: AsyncSession) -> None:
    prefix = unique("cap")
    mine = Group.name.like(f"{prefix}-%")
    await add_groups(db_session, prefix, TOTAL_CAP + 1)

    above = await fetch_page(db_session, GROUP_LIST, query(), conditions=[mine])
    assert (above.total, above.total_exact, len(above.rows)) == (TOTAL_CAP, False, 20)
    assert above.pages(20) == TOTAL_CAP // 20 and above.next_cursor is not None
    # A page beyond the lower bound still answers: the rows are there.
    beyond = await fetch_page(
        db_session, GROUP_LIST, query(page=TOTAL_CAP // 100 + 1, limit=100), conditions=[mine]
    )
    assert len(beyond.rows) == 1 and beyond.total_exact is False and beyond.next_cursor is None

    await db_session.execute(delete(Group).where(Group.id == f"grp_{prefix}{0:06d}"))
    at_cap = await fetch_page(db_session, GROUP_LIST, query(), conditions=[mine])
    assert (at_cap.total, at_cap.total_exact) == (TOTAL_CAP, True)

    await db_session.execute(delete(Group).where(Group.id == f"grp_{prefix}{1:06d}"))
    below = await fetch_page(db_session, GROUP_LIST, query(page=5), conditions=[mine])
    assert (below.total, below.total_exact) == (TOTAL_CAP - 1, True)


async def test_a_short_list_is_counted_without_a_count(db_session: AsyncSession) -> None:
    """The last page by offset gives its total itself; past the end the count still says it."""
    prefix = unique("short")
    mine = Group.name.like(f"{prefix}-%")
    await add_groups(db_session, prefix, 7)
    pages = [
        await fetch_page(db_session, GROUP_LIST, query(page=p, limit=3), conditions=[mine])
        for p in (1, 2, 3, 4)
    ]
    assert [(len(p.rows), p.total, p.total_exact) for p in pages] == [(3, 7, True)] * 2 + [
        (1, 7, True),
        (0, 7, True),
    ]
    assert [p.next_cursor is not None for p in pages] == [True, True, False, False]


def test_the_meta_says_so_only_when_it_applies() -> None:
    def pagination(**kw: object) -> dict:
        return json.loads(paginated([], page=1, limit=20, **kw).body)["meta"]["pagination"]  # type: ignore[arg-type]

    assert pagination(total=7) == {"page": 1, "limit": 20, "total": 7, "pages": 1}
    assert pagination(total=TOTAL_CAP, total_exact=False, next_cursor="abc") == {
        "page": 1,
        "limit": 20,
        "total": TOTAL_CAP,
        "pages": TOTAL_CAP // 20,
        "total_exact": False,
        "next_cursor": "abc",
    }
