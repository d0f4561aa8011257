"""Who may read a conflict check (docs/api-conventions.md#conflict-checks), and look-alike letters
(Unicode TR39 skeletons) in every name comparison."""

from __future__ import annotations

from datetime import UTC, datetime
from pathlib import Path

import httpx
import pytest
from alembic import command
from alembic.script import ScriptDirectory

from casefile.migrate import alembic_config, upgrade
from casefile.nlp.name_keys import name_key
from tests.support.assertions import api_error, ok
from tests.support.factories import new_case, unique
from tests.support.servers import Api, make_settings, run_sql

from .test_conflicts import check, contact, party


def _listed(client: httpx.Client, check_id: str) -> bool:
    return check_id in {c["id"] for c in ok(client.get("/conflict-checks", params={"limit": 100}))}


def test_a_check_without_a_case_is_its_runners_and_the_administrators(api: Api, admin: httpx.Client) -> None:
    runner, runner_token = api.make_user("attorney")
    _, colleague_token = api.make_user("attorney")
    prospective = f"Project Falcon Target GmbH {unique()}"
    with api.client(token=runner_token) as mine, api.client(token=colleague_token) as colleague:
        result = check(mine, prospective)
        assert result["created_by"] == runner["id"]
        assert ok(mine.get(f"/conflict-checks/{result['id']}"))["names"] == [prospective]
        assert _listed(mine, result["id"])

        # Another user of the firm: the check does not exist for them, as one that never did.
        hidden = api_error(colleague.get(f"/conflict-checks/{result['id']}"), 404, "NOT_FOUND")
        missing = api_error(colleague.get("/conflict-checks/cc_01m8es0bnj92z7a9538xb428hg"), 404, "NOT_FOUND")
        assert hidden["message"] == missing["message"] == "Conflict check not found"
        assert not _listed(colleague, result["id"])
        filtered = ok(colleague.get("/conflict-checks", params={"created_by": runner["id"]}))
        assert filtered == []

    # Administrators see every check.
    assert ok(admin.get(f"/conflict-checks/{result['id']}"))["names"] == [prospective]
    assert _listed(admin, result["id"])

    # An API key the runner made reads the runner's checks, and the runner reads the key's.
    key = api.make_key(["read:conflicts"])
    api.sql("UPDATE api_keys SET created_by = :user WHERE id = :key", user=runner["id"], key=key["id"])
    with api.client(api_key=key["key"]) as keyed, api.client(token=runner_token) as mine:
        assert ok(keyed.get(f"/conflict-checks/{result['id']}"))["id"] == result["id"]
        by_key = check(keyed, unique("Keyed "))
        assert ok(mine.get(f"/conflict-checks/{by_key['id']}"))["id"] == by_key["id"]


def test_a_check_for_a_case_is_read_by_those_who_see_the_case(api: Api, admin: httpx.Client) -> None:
    _, colleague_token = api.make_user("attorney")
    firm_case = new_case(admin, client_name=None)
    restricted = new_case(admin, client_name=None, access="restricted")
    on_firm = check(admin, unique("Firm matter party "), case_id=firm_case["id"])
    on_restricted = check(admin, unique("Restricted matter party "), case_id=restricted["id"])
    with api.client(token=colleague_token) as colleague:
        assert ok(colleague.get(f"/conflict-checks/{on_firm['id']}"))["id"] == on_firm["id"]
        api_error(colleague.get(f"/conflict-checks/{on_restricted['id']}"), 404, "NOT_FOUND")
        assert _listed(colleague, on_firm["id"]) and not _listed(colleague, on_restricted["id"])


@pytest.mark.parametrize(
    "stored",
    [
        "\u0410\u0441m\u0435",  # "Acme" with Cyrillic A, c and e
        "\u0391cme",  # Greek capital alpha
        "Ac\u200bme",  # a zero-width space
        "\uff21\uff23\uff2d\uff25",  # full-width
        "\U0001d400cme",  # mathematical bold capital A
    ],
)
def test_look_alike_letters_match(admin: httpx.Client, stored: str) -> None:
    tag = unique("tag")
    written = contact(admin, f"{stored} Industries {tag}")
    case = new_case(admin, client_name=None)
    party(admin, case["id"], written["id"], "adverse_party")
    result = check(admin, f"Acme Industries {tag}")
    hits = {(h["source"], h["contact_id"]) for h in result["hits"] if h["score"] == 1.0}
    assert ("contact", written["id"]) in hits and ("party", written["id"]) in hits

    # And the other way round: a check written with look-alikes finds the Latin name.
    latin = contact(admin, f"Acme Holdings {tag}")
    found = check(admin, f"{stored} Holdings {tag}")
    assert latin["id"] in {h["contact_id"] for h in found["hits"] if h["score"] == 1.0}


def test_look_alikes_in_a_client_name_match(admin: httpx.Client) -> None:
    tag = unique("tag")
    case = new_case(admin, client_name=f"\u0420\u0430ypal Trading {tag}")  # Cyrillic capital Er and small a
    result = check(admin, f"Paypal Trading {tag}")
    assert case["id"] in {h["case_id"] for h in result["hits"] if h["score"] == 1.0}


def test_skeleton_keys() -> None:
    assert name_key("\u0410\u0441m\u0435 Corp.") == name_key("ACME Corporation") == "acme"
    assert name_key("Pa\u0443pal") == name_key("Paypal")  # Cyrillic small u
    assert name_key("M\u00fcller GmbH") == "muller"  # accents still go
    assert name_key("Smith") != name_key("Smyth")  # real differences stay
    assert name_key("INITECH, L.L.C.") == name_key("Initech LLC") == "initech"  # case still does not count


def test_migration_0018_folds_the_stored_keys(database: tuple[Path, str | None]) -> None:
    """Keys stored before 0018 (without the fold) are recomputed; a contact written in look-alike
    letters is found by its Latin spelling after the upgrade."""
    settings = make_settings(*database)
    settings.ensure_data_dir()
    config = alembic_config(settings)
    before = ScriptDirectory.from_config(config).get_revision("0018").down_revision  # wherever it is chained
    command.upgrade(config, str(before))
    now = datetime.now(UTC).replace(tzinfo=None)
    run_sql(
        settings,
        "INSERT INTO contacts (id, kind, name, aliases, emails, phones, addresses, identifiers, tags,"
        " created_at, updated_at) VALUES ('con_old', 'organization', :name, '[]', '[]', '[]', '[]',"
        " '{}', '[]', :now, :now)",
        name="\u0410\u0441m\u0435 Corp.",
        now=now,
    )
    old_key = "\u0430\u0441m\u0435"  # what the previous rules made of it: Cyrillic letters kept
    run_sql(
        settings,
        "INSERT INTO contact_names (contact_id, source, name, key, key_length)"
        " VALUES ('con_old', 'contact', :name, :key, :length)",
        name="\u0410\u0441m\u0435 Corp.",
        key=old_key,
        length=len(old_key),
    )
    upgrade(settings)
    assert run_sql(settings, "SELECT key, key_length FROM contact_names WHERE contact_id = 'con_old'") == [
        ("acme", 4)
    ]
