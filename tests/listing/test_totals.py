"""`meta.pagination.total`: exact up to 10,000 matches, the lower bound 10,000 above
(`total_exact: false`). On a session whose transaction is rolled back after each test."""

from __future__ import annotations

import json
from datetime import UTC, datetime, timedelta

import pytest
from sqlalchemy import delete, insert, update
from sqlalchemy.ext.asyncio import AsyncSession

from casefile.access.matter import visible_to
from casefile.auth.permissions import ROLE_PERMISSIONS, Principal
from casefile.cases.repository import CASE_LIST
from casefile.envelope import paginated
from casefile.groups.service import GROUP_LIST
from casefile.listing import TOTAL_CAP, ListQuery, fetch_page
from casefile.models import Case, CaseWall, Group
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


ADMIN = Principal(kind="user", id="user_totals_admin", role="admin", permissions=ROLE_PERMISSIONS["admin"])
ATTORNEY = Principal(
    kind="user", id="user_totals_attorney", role="attorney", permissions=ROLE_PERMISSIONS["attorney"]
)


def case_query(words: list[str], status: str) -> ListQuery:
    return ListQuery(
        page=1,
        limit=20,
        sort="created_at",
        order="desc",
        search_words=words,
        fields=None,
        filters={"status": [status]},
    )


async def add_cases(
    session: AsyncSession, title: str, status: str, count: int, **values: object
) -> list[str]:
    """`count` cases titled `title …`, one second apart (the first the newest)."""
    start = datetime.now(UTC)
    ids = [f"case_{unique()}" for _ in range(count)]
    rows = [
        {
            "id": case_id,
            "title": f"{title} matter",
            "case_number": case_id,
            "status": status,
            "priority": "low",
            "access": "firm",
            "created_at": start - timedelta(seconds=i),
            "updated_at": start,
            **values,
        }
        for i, case_id in enumerate(ids)
    ]
    await session.execute(insert(Case), rows)
    return ids


async def test_a_search_with_a_status_counts_exactly_up_to_the_cap(db_session: AsyncSession) -> None:
    """The search and the status filter together (one GIN index over both on PostgreSQL,
    migration 0016): what counts is every visible case with the word and the status, exactly up
    to the cap, and the page is the newest of them."""
    word = unique("capstat")
    matching = await add_cases(db_session, word, "intake", TOTAL_CAP + 1)
    # Not counted: the word with another status, the status without the word, a trashed match.
    await add_cases(db_session, word, "closed", 25)
    await add_cases(db_session, unique("otherword"), "intake", 25)
    await add_cases(db_session, word, "intake", 3, deleted_at=datetime.now(UTC))

    async def listed(principal: Principal, words: list[str]) -> tuple[int, bool, list[str]]:
        page = await fetch_page(
            db_session, CASE_LIST, case_query(words, "intake"), conditions=[visible_to(principal)]
        )
        return page.total, page.total_exact, [case.id for case in page.rows]

    newest = matching[:20]
    for words in ([word], [word[:-4]], [word, "matter"]):  # a whole word, a prefix, two words
        assert await listed(ADMIN, words) == (TOTAL_CAP, False, newest)

    # One match fewer (walled off from the administrator): exactly the cap, and exact.
    db_session.add(CaseWall(case_id=matching[0], subject_type="user", subject_id=ADMIN.id))
    await db_session.flush()
    assert await listed(ADMIN, [word]) == (TOTAL_CAP, True, matching[1:21])
    assert await listed(ADMIN, [word[:-4]]) == (TOTAL_CAP, True, matching[1:21])

    # Restricted cases an attorney is not assigned to are not counted for them.
    restricted = matching[100:110]
    await db_session.execute(update(Case).where(Case.id.in_(restricted)).values(access="restricted"))
    assert await listed(ATTORNEY, [word]) == (TOTAL_CAP + 1 - 10, True, newest)
    await db_session.execute(delete(Case).where(Case.id.in_(matching[1:3])))
    assert await listed(ADMIN, [word]) == (TOTAL_CAP - 2, True, matching[3:23])
