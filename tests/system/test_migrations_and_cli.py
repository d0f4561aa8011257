"""Migrations (match the models, idempotent, safe in parallel) and the command line."""

from __future__ import annotations

import asyncio
import json
import os
import secrets
import subprocess
import sys
import warnings
from datetime import datetime
from pathlib import Path

import asyncpg
import pytest
from alembic import command
from alembic.autogenerate import compare_metadata
from alembic.runtime.migration import MigrationContext
from sqlalchemy.engine import make_url

from casefile.db import make_engine
from casefile.migrate import alembic_config, upgrade
from casefile.models import Base
from casefile.settings import Settings
from tests.support.servers import POSTGRES_URL, _pg_admin, fresh_database, fresh_running_database_url, run_sql

CASEFILE = str(Path(sys.executable).with_name("casefile"))


def _env(settings: Settings) -> dict[str, str]:
    env = {k: v for k, v in os.environ.items() if not k.startswith("CASEFILE_")}
    env["CASEFILE_DATA_DIR"] = str(settings.data_dir)
    if settings.database_url:
        env["CASEFILE_DATABASE_URL"] = settings.database_url
    return env


@pytest.fixture
def blank(backend: str, tmp_path: Path):
    with fresh_running_database_url(backend, tmp_path) as settings:
        yield settings


def _schema_differences(settings: Settings) -> list[object]:
    def compare(connection) -> list[object]:
        context = MigrationContext.configure(connection, opts={"compare_type": True})
        with warnings.catch_warnings():
            # SQLite cannot reflect expression indexes (lower(email), lower(title)); PostgreSQL
            # can, and there they are compared too.
            warnings.filterwarnings("ignore", "Skipped unsupported reflection of expression-based index")
            warnings.filterwarnings("ignore", ".*expression-based index.*", UserWarning)
            return list(compare_metadata(context, Base.metadata))

    async def run() -> list[object]:
        engine = make_engine(settings, pooled=False)
        try:
            async with engine.connect() as conn:
                return await conn.run_sync(compare)
        finally:
            await engine.dispose()

    # Search structures live outside the models on purpose (FTS5 tables, the generated tsvector,
    # the lexicon of case words); the old audit chain's head row stays for a previous release's
    # processes during a rolling upgrade (migration 0017 expands; a later release contracts).
    ignored = (
        "audit_chain_head",
        "cases_fts",
        "case_words",
        "passages_fts",
        "search_vector",
        "ix_cases_search_vector",
        "ix_passages_search_vector",
        "alembic_version",
    )
    return [d for d in asyncio.run(run()) if not any(name in repr(d) for name in ignored)]


def test_migrations_build_exactly_the_models(blank: Settings) -> None:
    upgrade(blank)
    assert _schema_differences(blank) == []


def test_the_revisions_read_from_the_files_are_alembics() -> None:
    """`upgrade` sees a database at head without loading Alembic: from the files' own lines."""
    from alembic.script import ScriptDirectory

    from casefile.migrate import MIGRATIONS, _revision_graph

    script = ScriptDirectory(str(MIGRATIONS))
    assert _revision_graph() == (
        frozenset(revision.revision for revision in script.walk_revisions()),
        script.get_current_head(),
    )


def test_migrate_is_idempotent_and_safe_in_parallel(blank: Settings) -> None:
    runs = [
        subprocess.Popen(
            [CASEFILE, "migrate"], env=_env(blank), stdout=subprocess.PIPE, stderr=subprocess.STDOUT
        )
        for _ in range(3)
    ]
    for run in runs:
        out, _ = run.communicate(timeout=120)
        assert run.returncode == 0, out.decode()
    upgrade(blank)  # and once more: nothing to do
    assert _schema_differences(blank) == []


def test_create_admin_command_and_login(blank: Settings) -> None:
    args = [
        CASEFILE,
        "users",
        "create-admin",
        "--email",
        "boss@casefile.test",
        "--password",
        "Boss-Passw0rd-123",
    ]
    first = subprocess.run(args, env=_env(blank), capture_output=True, text=True, timeout=120, check=False)
    assert first.returncode == 0 and "created administrator" in first.stdout, first.stderr
    again = subprocess.run(args, env=_env(blank), capture_output=True, text=True, timeout=120, check=False)
    assert again.returncode == 1 and "already exists" in again.stderr
    assert "casefile users reset-password boss@casefile.test" in again.stderr
    weak = subprocess.run(
        [CASEFILE, "users", "create-admin", "--email", "w@casefile.test", "--password", "short"],
        env=_env(blank),
        capture_output=True,
        text=True,
        timeout=120,
        check=False,
    )
    assert weak.returncode != 0 and "password" in weak.stderr.lower()


@pytest.mark.slow  # `casefile` as a child process
def test_openapi_command_prints_the_document(tmp_path: Path) -> None:
    env = {k: v for k, v in os.environ.items() if not k.startswith("CASEFILE_")}
    env["CASEFILE_DATA_DIR"] = str(tmp_path)
    out = subprocess.run(
        [CASEFILE, "openapi"], env=env, capture_output=True, text=True, timeout=60, check=True
    )
    spec = json.loads(out.stdout)
    assert spec["info"]["title"] == "Casefile" and "/api/v1/cases/{case_id}" in spec["paths"]


def test_0008_names_the_user_behind_an_api_key_upload(blank: Settings) -> None:
    from alembic import command

    from casefile.migrate import alembic_config
    from tests.support.servers import run_sql

    blank.ensure_data_dir()
    command.upgrade(alembic_config(blank), "0006")
    now = datetime(2026, 11, 1)  # stored as naive UTC
    run_sql(
        blank,
        "INSERT INTO api_keys (id, name, prefix, key_hash, permissions, created_by, created_at)"
        " VALUES ('key_1', 'k', 'p', 'h', '[]', 'user_1', :now),"
        " ('key_2', 'k', 'p2', 'h2', '[]', NULL, :now)",
        before=(
            "INSERT INTO users (id, email, name, role, active, created_at, updated_at)"
            " VALUES ('user_1', 'a@b.test', 'A', 'admin', true, '2026-11-01', '2026-11-01')",
            "INSERT INTO cases (id, title, case_number, status, priority, created_at, updated_at)"
            " VALUES ('case_1', 't', 'n', 'active', 'low', '2026-11-01', '2026-11-01')",
        ),
        now=now,
    )
    for document_id, uploaded_by in (("doc_1", "key_1"), ("doc_2", "user_1"), ("doc_3", "key_2")):
        run_sql(
            blank,
            "INSERT INTO documents (id, case_id, title, tags, file_name, file_size, file_type, sha256,"
            " uploaded_by, uploaded_at, updated_at, processing_status)"
            " VALUES (:id, 'case_1', 't', '[]', 'f', 1, 'text/plain', 's', :by, :now, :now, 'skipped')",
            id=document_id,
            by=uploaded_by,
            now=now,
        )
    upgrade(blank)
    rows = run_sql(blank, "SELECT id, uploaded_by, uploaded_via_key FROM documents ORDER BY id")
    assert [tuple(r) for r in rows] == [
        ("doc_1", "user_1", "key_1"),
        ("doc_2", "user_1", None),
        ("doc_3", None, "key_2"),  # a key whose creator is gone: no user to name
    ]


GIN_INDEXES_OF_CASES = (
    "SELECT indexname, indexdef FROM pg_indexes WHERE tablename = 'cases' AND indexdef LIKE '%USING gin%'"
)


def _gin_indexes(settings: Settings) -> dict[str, str]:
    return {
        name: definition.split(" USING ")[1] for name, definition in run_sql(settings, GIN_INDEXES_OF_CASES)
    }


def test_0016_one_gin_index_over_status_and_search(blank: Settings) -> None:
    """PostgreSQL: btree_gin is installed and one GIN index over (status, search_vector) replaces
    the one over search_vector alone; a downgrade puts that one back. SQLite: nothing to do."""
    upgrade(blank)
    if blank.is_sqlite:
        assert _schema_differences(blank) == []
        return
    assert _gin_indexes(blank) == {"ix_cases_status_search_vector": "gin (status, search_vector)"}
    assert run_sql(blank, "SELECT 1 FROM pg_extension WHERE extname = 'btree_gin'") == [(1,)]
    command.downgrade(alembic_config(blank), "0015")
    assert _gin_indexes(blank) == {"ix_cases_search_vector": "gin (search_vector)"}
    upgrade(blank)
    assert _gin_indexes(blank) == {"ix_cases_status_search_vector": "gin (status, search_vector)"}


def test_0016_without_btree_gin_keeps_the_search_index(
    backend: str, tmp_path: Path, caplog: pytest.LogCaptureFixture
) -> None:
    """A role that may not create extensions (no CREATE on the database) migrates all the same:
    a warning says why and what to run, and the one-column search index stays."""
    if backend == "sqlite":
        pytest.skip("PostgreSQL only")
    role = f"casefile_noext_{secrets.token_hex(4)}"
    asyncio.run(_pg_admin(f'CREATE ROLE "{role}" LOGIN'))
    try:
        with fresh_database(backend, tmp_path) as url:
            assert url is not None
            admin_url = make_url(POSTGRES_URL).set(database=make_url(url).database)

            async def grant() -> None:
                conn = await asyncpg.connect(admin_url.render_as_string(hide_password=False))
                try:
                    await conn.execute(f'GRANT CREATE ON SCHEMA public TO "{role}"')
                finally:
                    await conn.close()

            asyncio.run(grant())
            settings = Settings(
                _env_file=None,
                data_dir=tmp_path / "data",
                database_url=make_url(url).set(username=role).render_as_string(hide_password=False),
            )
            with caplog.at_level("WARNING", logger="alembic.runtime.migration"):
                upgrade(settings)
            assert _gin_indexes(settings) == {"ix_cases_search_vector": "gin (search_vector)"}
            warned = [
                r.getMessage() for r in caplog.records if "ix_cases_status_search_vector" in r.getMessage()
            ]
            assert len(warned) == 1 and "CREATE EXTENSION btree_gin failed" in warned[0]
            assert "CREATE EXTENSION btree_gin;" in warned[0]
            upgrade(settings)  # at head: nothing more to do
    finally:
        asyncio.run(_pg_admin(f'DROP ROLE IF EXISTS "{role}"'))


def test_0026_gives_each_case_value_its_cases_created_at(blank: Settings) -> None:
    blank.ensure_data_dir()
    command.upgrade(alembic_config(blank), "0025")
    created = datetime(2026, 3, 4, 5, 6, 7)  # stored as naive UTC
    for statement in (
        "INSERT INTO cases (id, title, case_number, status, priority, created_at, updated_at)"
        " VALUES ('case_1', 't', 'n', 'active', 'low', :created, :created)",
        "INSERT INTO contacts (id, kind, name, aliases, emails, phones, addresses, identifiers, tags,"
        " created_at, updated_at)"
        " VALUES ('contact_1', 'person', 'c', '[]', '[]', '[]', '[]', '{}', '[]', :created, :created)",
        "INSERT INTO custom_fields (id, entity, name, label, field_type, required, required_for_statuses,"
        " choices, position, created_at, updated_at)"
        " VALUES ('cf_1', 'case', 'f', 'F', 'text', false, '[]', '[]', 0, :created, :created)",
        "INSERT INTO custom_field_values (field_id, case_id, contact_id, value_text)"
        " VALUES ('cf_1', 'case_1', NULL, 'a'), ('cf_1', NULL, 'contact_1', 'b')",
    ):
        run_sql(blank, statement, created=created)
    upgrade(blank)
    rows = run_sql(
        blank, "SELECT case_id, contact_id, case_created_at FROM custom_field_values ORDER BY value_text"
    )
    # SQLite hands the stored text back through plain SQL; PostgreSQL a datetime.
    stamps = [(r[0], r[1], datetime.fromisoformat(str(r[2])) if r[2] else None) for r in rows]
    assert stamps == [("case_1", None, created), (None, "contact_1", None)]
