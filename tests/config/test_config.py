"""Runtime configuration (docs/api-conventions.md#configuration): read, validated changes, effect without a
restart in every process, and the maintenance event."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import httpx
import pytest

from tests.support.assertions import api_error, auth_error, details, ok
from tests.support.expected import UPLOAD_TYPES
from tests.support.factories import new_case, upload
from tests.support.processes import Process
from tests.support.servers import Api, make_settings, serving

PDF = b"%PDF-1.4\n1 0 obj << /Type /Catalog >> endobj\ntrailer << /Root 1 0 R >>\n%%EOF\n"


@pytest.fixture
def fresh(make_server) -> Api:
    """A server of its own: these tests change process-wide configuration."""
    return make_server(max_upload_bytes=4096, ai_enabled=True)


def get_config(client: httpx.Client) -> dict[str, Any]:
    return dict(ok(client.get("/admin/config")))


def patch_config(client: httpx.Client, body: dict[str, Any]) -> dict[str, Any]:
    return dict(ok(client.patch("/admin/config", json=body)))


def test_defaults_come_from_the_settings(fresh: Api) -> None:
    with fresh.admin() as admin:
        config = get_config(admin)
    assert config == {
        "maintenance": {"scheduled_start": None, "scheduled_end": None, "message": None},
        "uploads": {"max_size_bytes": 4096, "allowed_types": UPLOAD_TYPES},
        "ai": {"enabled": True},
        "webhooks": {
            "default_retry_policy": {"max_attempts": 5, "backoff_multiplier": 2.0, "initial_delay": 60}
        },
        "retention": {"trash_days": 30},
        "updated_at": None,
        "updated_by": None,
    }


def test_upload_limits_change_at_once_and_null_restores_the_default(fresh: Api) -> None:
    with fresh.admin() as admin:
        case_id = new_case(admin)["id"]
        ok(upload(admin, case_id, b"a" * 3000), 201)

        changed = patch_config(admin, {"uploads": {"max_size_bytes": 1000}})
        assert changed["uploads"]["max_size_bytes"] == 1000
        assert changed["uploads"]["allowed_types"] == UPLOAD_TYPES  # untouched
        assert changed["updated_by"] == fresh.login()["user"]["id"]
        api_error(upload(admin, case_id, b"a" * 3000), 413, "PAYLOAD_TOO_LARGE")
        ok(upload(admin, case_id, b"a" * 900), 201)

        patch_config(admin, {"uploads": {"allowed_types": ["application/pdf"]}})
        api_error(upload(admin, case_id, b"plain words"), 415, "UNSUPPORTED_MEDIA_TYPE")
        ok(upload(admin, case_id, PDF, name="brief.pdf"), 201)

        restored = patch_config(admin, {"uploads": {"max_size_bytes": None, "allowed_types": None}})
        assert restored["uploads"] == {"max_size_bytes": 4096, "allowed_types": UPLOAD_TYPES}
        ok(upload(admin, case_id, b"a" * 3000), 201)
        assert get_config(admin)["uploads"] == restored["uploads"]


@pytest.mark.parametrize(
    ("body", "field"),
    [
        ({"uploads": {"max_size_bytes": 0}}, "uploads.max_size_bytes"),
        ({"uploads": {"allowed_types": ["application/x-msdownload"]}}, "uploads.allowed_types"),
        ({"uploads": {"allowed_types": []}}, "uploads.allowed_types"),
        ({"ai": {"enabled": "sometimes"}}, "ai.enabled"),
        ({"retention": {"trash_days": 0}}, "retention.trash_days"),
        ({"ai": {"colour": "blue"}}, "ai.colour"),
        ({"storage": {}}, "storage"),
        (
            {"webhooks": {"default_retry_policy": {"max_attempts": 0}}},
            "webhooks.default_retry_policy.max_attempts",
        ),
        ({"maintenance": {"scheduled_start": "2027-01-01T10:00:00"}}, "maintenance.scheduled_start"),
        ({"maintenance": {"scheduled_start": "2027-01-01T10:00:00Z"}}, "maintenance"),
        (
            {
                "maintenance": {
                    "scheduled_start": "2027-01-01T10:00:00Z",
                    "scheduled_end": "2027-01-01T09:00:00Z",
                }
            },
            "maintenance",
        ),
        ({"maintenance": {"message": "x" * 1001}}, "maintenance.message"),
    ],
)
def test_invalid_changes_are_422_and_change_nothing(
    admin: httpx.Client, body: dict[str, Any], field: str
) -> None:
    # The shared server: a refused change changes nothing, which is what this test checks.
    before = get_config(admin)
    error = api_error(admin.patch("/admin/config", json=body), 422, "VALIDATION_ERROR")
    assert field in details(error), error
    assert get_config(admin) == before


def test_default_retry_policy_applies_to_new_webhooks(fresh: Api) -> None:
    with fresh.admin() as admin:
        changed = patch_config(admin, {"webhooks": {"default_retry_policy": {"max_attempts": 2}}})
        assert changed["webhooks"]["default_retry_policy"] == {
            "max_attempts": 2,
            "backoff_multiplier": 2.0,
            "initial_delay": 60,
        }
        hook = {"name": "h", "url": "http://127.0.0.1:9/x", "events": ["case.created"], "secret": "s" * 20}
        created = ok(admin.post("/admin/webhooks", json=hook), 201)
        assert created["retry_policy"]["max_attempts"] == 2
        explicit = ok(admin.post("/admin/webhooks", json={**hook, "retry_policy": {"max_attempts": 4}}), 201)
        assert explicit["retry_policy"]["max_attempts"] == 4


def test_a_maintenance_window_emits_its_event_once(fresh: Api) -> None:
    window = {
        "scheduled_start": "2027-03-01T22:00:00Z",
        "scheduled_end": "2027-03-02T02:00:00Z",
        "message": "Database upgrade",
    }
    with fresh.admin() as admin:
        assert patch_config(admin, {"maintenance": window})["maintenance"] == window
        patch_config(admin, {"maintenance": window})  # the same window again: nothing new to announce
        patch_config(admin, {"ai": {"enabled": False}})
        admin_id = fresh.login()["user"]["id"]
        assert fresh.events("system.maintenance_scheduled") == [{**window, "scheduled_by": admin_id}]
        cleared = patch_config(admin, {"maintenance": {"scheduled_start": None, "scheduled_end": None}})
        assert cleared["maintenance"] == {
            "scheduled_start": None,
            "scheduled_end": None,
            "message": "Database upgrade",
        }
        assert cleared["ai"] == {"enabled": False}
        assert len(fresh.events("system.maintenance_scheduled")) == 1


def test_only_administrators_reach_the_configuration(fresh: Api) -> None:
    _, token = fresh.make_user("attorney")
    with fresh.client(token=token) as attorney:
        auth_error(attorney.get("/admin/config"), 403, "AUTH_011")
        auth_error(attorney.patch("/admin/config", json={"ai": {"enabled": False}}), 403, "AUTH_011")
    key = fresh.make_key(["*:*"])["key"]
    with fresh.client(api_key=key) as service:
        auth_error(service.patch("/admin/config", json={"ai": {"enabled": False}}), 403, "AUTH_011")
    with fresh.admin() as admin:
        assert get_config(admin)["ai"] == {"enabled": True}


def test_a_change_takes_effect_in_every_process_without_a_restart(database, tmp_path: Path) -> None:
    data_dir, url = database
    settings = make_settings(data_dir, url, worker_enabled=False)
    with serving(settings) as here:
        other = Process("serve", settings, tmp_path / "other.log")
        try:
            with httpx.Client(
                base_url=other.base, headers={"Authorization": f"Bearer {here.admin_token}"}
            ) as there:
                case_id = new_case(there)["id"]
                ok(upload(there, case_id, b"b" * 2000), 201)
                with here.admin() as admin:
                    patch_config(admin, {"uploads": {"max_size_bytes": 1500}})
                api_error(upload(there, case_id, b"b" * 2000), 413, "PAYLOAD_TOO_LARGE")
                assert get_config(there)["uploads"]["max_size_bytes"] == 1500
        finally:
            other.stop()
