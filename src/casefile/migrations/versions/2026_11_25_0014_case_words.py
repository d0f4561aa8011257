"""case_words: the distinct words of the cases' search vectors (PostgreSQL only)

Revision ID: 0014
Revises: 0013
Create Date: 2026-11-25 19:00:00

A case search matches every word as a prefix. GIN answers `word:*` by collecting every row of
every lexeme with that prefix into a bitmap before it can intersect anything; given the whole
words instead (`valuation | value`), it intersects posting lists (docs/research/bench-notes-2026-11.md, "Issue 16: one
lexicon"). This table turns a prefix into those words (a B-tree range on a "C"-collated column).

Kept by triggers on `cases`, so every write path (the API, imports, SQL by hand) adds its words in
its own transaction. Words are only ever added: one that no case holds any more matches no row,
because the search still tests `cases.search_vector` itself. No unique constraint: two
transactions adding the same new word at once would otherwise wait on each other (and could
deadlock); a duplicate is harmless (the lookup is DISTINCT) and only arises from such a race.

SQLite searches through FTS5 (`cases_fts`, with its own prefix indexes) and needs none of this.
"""

from collections.abc import Sequence

from alembic import op

revision: str = "0014"
down_revision: str | None = "0013"
branch_labels: str | Sequence[str] | None = None
depends_on: str | Sequence[str] | None = None


def upgrade() -> None:
    if op.get_bind().dialect.name != "postgresql":
        return
    op.execute('CREATE TABLE case_words (word text COLLATE "C" NOT NULL)')
    # The words of the rows a statement inserted or updated that the table lacks (an index probe
    # each: most words are there already).
    op.execute(
        """
        CREATE FUNCTION case_words_add() RETURNS trigger LANGUAGE plpgsql AS $$
        BEGIN
            INSERT INTO case_words (word)
            SELECT DISTINCT w.word
            FROM changed_cases, unnest(tsvector_to_array(changed_cases.search_vector)) AS w(word)
            WHERE NOT EXISTS (SELECT 1 FROM case_words c WHERE c.word = w.word);
            RETURN NULL;
        END
        $$
        """
    )
    # Per statement, over its rows (a bulk insert looks each distinct word up once).
    for event in ("INSERT", "UPDATE"):
        op.execute(
            f"CREATE TRIGGER case_words_{event.lower()} AFTER {event} ON cases "
            "REFERENCING NEW TABLE AS changed_cases FOR EACH STATEMENT EXECUTE FUNCTION case_words_add()"
        )
    op.execute(
        "INSERT INTO case_words (word) "
        "SELECT DISTINCT w FROM cases, unnest(tsvector_to_array(cases.search_vector)) AS w"
    )
    op.execute("CREATE INDEX ix_case_words_word ON case_words (word)")


def downgrade() -> None:
    if op.get_bind().dialect.name != "postgresql":
        return
    op.execute("DROP TRIGGER case_words_insert ON cases")
    op.execute("DROP TRIGGER case_words_update ON cases")
    op.execute("DROP FUNCTION case_words_add()")
    op.execute("DROP TABLE case_words")
