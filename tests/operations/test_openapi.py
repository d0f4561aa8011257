"""The OpenAPI document tells the truth (docs/api-conventions.md#openapi), and /docs and /redoc work
without the internet."""

from __future__ import annotations

import json
import re

import httpx

from tests.support import plain
from tests.support.assertions import api_error, auth_error, details, ok
from tests.support.servers import Api


def document(api: Api) -> dict:
    return plain.get(api.root + "/openapi.json").json()


def operation(doc: dict, method: str, path: str) -> dict:
    return doc["paths"]["/api/v1" + path][method]


def test_security_is_declared_per_operation(api: Api) -> None:
    doc = document(api)
    schemes = doc["components"]["securitySchemes"]
    assert schemes["bearerAuth"] == {**schemes["bearerAuth"], "type": "http", "scheme": "bearer"}
    assert schemes["apiKeyAuth"]["in"] == "header" and schemes["apiKeyAuth"]["name"] == "X-API-Key"
    assert operation(doc, "get", "/cases")["security"] == [{"bearerAuth": []}, {"apiKeyAuth": []}]
    # API keys never reach /admin or /users/me: only the bearer scheme is offered there.
    assert operation(doc, "get", "/admin/webhooks")["security"] == [{"bearerAuth": []}]
    assert operation(doc, "get", "/users/me")["security"] == [{"bearerAuth": []}]
    for public in (("post", "/auth/login"), ("post", "/auth/refresh"), ("get", "/auth/oauth/authorize")):
        assert "security" not in operation(doc, *public)
    assert "security" not in doc["paths"]["/healthz"]["get"]


def test_every_operation_lists_the_errors_it_can_give(api: Api) -> None:
    doc = document(api)
    text = json.dumps(doc)
    assert "HTTPValidationError" not in text and 'ValidationError"' not in text
    get_case = operation(doc, "get", "/cases/{case_id}")["responses"]
    assert {"401", "403", "404", "422", "429"} <= set(get_case)
    assert get_case["401"]["content"]["application/json"]["schema"] == {
        "$ref": "#/components/schemas/AuthError"
    }
    assert get_case["404"]["content"]["application/json"]["schema"] == {
        "$ref": "#/components/schemas/ApiError"
    }
    assert get_case["404"]["content"]["application/json"]["example"]["error"]["code"] == "NOT_FOUND"
    create = operation(doc, "post", "/cases")["responses"]
    # 404: the body may name a matter template that is not there.
    assert {"404", "409", "413", "415", "422"} <= set(create)
    # A body naming a row by id may name one that is not there (or not visible): 404 too.
    assert "404" in operation(doc, "post", "/conflict-checks")["responses"]
    login = operation(doc, "post", "/auth/login")["responses"]
    assert {"401", "422", "429"} <= set(login) and "403" not in login
    assert set(doc["paths"]["/healthz"]["get"]["responses"]) == {"200", "400", "422", "500"}
    download = operation(doc, "get", "/documents/{document_id}/content")["responses"]
    assert download["200"]["content"]["application/pdf"]["schema"] == {"type": "string", "format": "binary"}
    assert "application/json" not in download["200"]["content"]
    assert download["416"]["content"]["application/json"]["schema"]["$ref"].endswith("/ApiError")
    assert "MethodNotAllowed" in doc["components"]["responses"] and "405" in doc["info"]["description"]


def test_documented_errors_match_what_the_service_answers(api: Api) -> None:
    """Two of the documented answers, sent for real: the shapes are the schemas'."""
    doc = document(api)
    auth_schema = doc["components"]["schemas"]["AuthError"]
    r = plain.get(api.base + "/cases/case_x")
    body = auth_error(r, 401, "AUTH_002")
    assert set(body) == set(auth_schema["required"])
    with api.admin() as admin:
        r = admin.get("/cases/case_missing")
    assert r.status_code == 404
    envelope = doc["components"]["schemas"]["ApiError"]
    assert set(r.json()) == set(envelope["required"])
    assert r.json()["error"]["code"] in envelope["properties"]["error"]["properties"]["code"]["enum"]


def test_request_schemas_are_exact(api: Api) -> None:
    schemas = document(api)["components"]["schemas"]
    create = schemas["CaseOpen"]  # CaseCreate, and a matter template to open it from
    assert "title" in create["required"] and create["properties"]["title"]["type"] == "string"
    assert {"template_id", "template_version", "trigger_dates", "custom_fields", "tags"} <= set(
        create["properties"]
    )
    assert create["properties"]["status"]["enum"] == [
        "intake",
        "active",
        "pending",
        "on_hold",
        "closed",
        "archived",
    ]
    assert set(create["properties"]["priority"]["enum"]) == {"low", "medium", "high", "urgent"}


def test_docs_and_redoc_load_everything_from_this_server(api: Api) -> None:
    for page in ("/docs", "/redoc"):
        html = plain.get(api.root + page).text
        urls = re.findall(r"""(?:src|href)=["']([^"']+)["']""", html) + re.findall(
            r"""url: ?['"]([^'"]+)['"]""", html
        )
        assert urls, html
        for url in urls:
            assert url.startswith("/"), (page, url)  # nothing from another host
            assert plain.get(api.root + url).status_code == 200, url
        assert "cdn" not in html.lower() and "fonts.googleapis" not in html


def test_openapi_command_prints_the_served_document(api: Api) -> None:
    from casefile.app import create_app

    assert create_app(api.settings).openapi() == document(api)


def test_names_are_published_as_enums_and_ai_is_typed(api: Api) -> None:
    schemas = document(api)["components"]["schemas"]
    permissions = schemas["ApiKeyCreate"]["properties"]["permissions"]["items"]["enum"]
    assert {"read:cases", "write:*", "*:documents", "*:*"} <= set(permissions)
    events = schemas["WebhookCreate"]["properties"]["events"]["items"]["enum"]
    assert {"*", "case.*", "case.created", "ai.processing_failed"} <= set(events)
    assert "case.created" in schemas["TestDelivery"]["properties"]["event_type"]["enum"]
    assert set(schemas["UserCreate"]["properties"]["role"]["enum"]) == {
        "admin",
        "attorney",
        "paralegal",
        "viewer",
    }
    doc_ai = schemas["DocumentOut"]["properties"]["ai"]["anyOf"][0]
    assert {"summary", "entities", "language", "page_count"} <= set(doc_ai["properties"])
    case_ai = schemas["CaseOut"]["properties"]["ai"]["anyOf"][0]
    assert {"summary", "key_dates", "document_count"} <= set(case_ai["properties"])


def test_json_types_are_not_coerced(admin: httpx.Client) -> None:
    """What the schema calls a boolean, an integer or a date-time is exactly that (422 otherwise)."""
    r = admin.patch("/admin/config", json={"ai": {"enabled": 0}})
    assert "ai.enabled" in details(api_error(r, 422, "VALIDATION_ERROR"))
    r = admin.patch("/admin/config", json={"maintenance": {"scheduled_start": 0}})
    assert "maintenance.scheduled_start" in details(api_error(r, 422, "VALIDATION_ERROR"))
    body = {"name": "k", "permissions": ["read:cases"], "expires_at": 4102444800}
    assert "expires_at" in details(
        api_error(admin.post("/admin/api-keys", json=body), 422, "VALIDATION_ERROR")
    )
    hook = {"name": "h", "url": "https://example.com/h", "events": ["*"], "secret": "s" * 20}
    r = admin.post("/admin/webhooks", json={**hook, "retry_policy": {"max_attempts": "3"}})
    assert "retry_policy.max_attempts" in details(api_error(r, 422, "VALIDATION_ERROR"))
    r = admin.post("/admin/webhooks", json={**hook, "active": "true"})
    assert "active" in details(api_error(r, 422, "VALIDATION_ERROR"))
    r = admin.post("/admin/webhooks", json={**hook, "retry_policy": {"max_attempts": 3.5}})
    assert "retry_policy.max_attempts" in details(api_error(r, 422, "VALIDATION_ERROR"))


def test_a_number_with_no_fraction_is_an_integer(admin: httpx.Client) -> None:
    """JSON Schema's "integer" is any number without a fraction: 7.0 is taken as 7."""
    hook = {"name": "h", "url": "https://example.com/h", "events": ["*"], "secret": "s" * 20}
    made = ok(admin.post("/admin/webhooks", json={**hook, "retry_policy": {"max_attempts": 7.0}}), 201)
    assert made["retry_policy"]["max_attempts"] == 7
