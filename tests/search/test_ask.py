"""POST /cases/{id}/ask: extractive answers from the case's own documents, with citations whose
offsets slice the page text exactly, and an honest "no answer" when nothing supports one."""

from __future__ import annotations

import secrets
from collections.abc import Iterator
from typing import Any

import httpx
import pytest

from tests.support.assertions import api_error, auth_error, details, ok
from tests.support.factories import new_case
from tests.support.indexing import Doc, add_document
from tests.support.servers import Api


@pytest.fixture
def admin(search_api: Api) -> Iterator[httpx.Client]:
    with search_api.admin() as client:
        yield client


LEASE = [
    "RESIDENTIAL LEASE\n\nThis lease is made between Harbor Road Holdings LLC (Landlord) and Maria "
    "Chen (Tenant) for the apartment at 14 Harbor Road, Unit 3B.\n\nThe term begins on March 1, 2024 "
    "and ends on February 28, 2026. Monthly rent is $2,450, due on the first day of each month.",
    "PETS AND DEPOSITS\n\nThe tenant may keep one cat. No dogs are permitted in the unit.\n\nA "
    "security deposit of $4,900 is held by the landlord in a separate account. The deposit is "
    "returned within 21 days after the tenant moves out, less the cost of repairing damage.",
]
OTHER_LEASE = [
    "COMMERCIAL LEASE\n\nThe term of this lease ends on December 31, 2030. Monthly rent is $19,000 "
    "and the tenant pays its share of the building's operating costs."
]
DISMISSAL = [
    "The employee was dismissed two days after she reported safety violations on the loading dock "
    "to the state regulator. The company says the termination was for repeated lateness."
]


def ask(client: httpx.Client, case_id: str, question: str) -> dict[str, Any]:
    return dict(ok(client.post(f"/cases/{case_id}/ask", json={"question": question})))


def assert_cited_exactly(answer: dict[str, Any], docs: dict[str, Doc]) -> None:
    """Every sentence and passage is verbatim: its offsets slice its page's text to its text."""
    for sentence in answer["answer"]["sentences"]:
        page = docs[sentence["document_id"]].pages[sentence["page"] - 1]
        assert page[sentence["start"] : sentence["end"]] == sentence["text"]
    for passage in answer["passages"]:
        page = docs[passage["document_id"]].pages[passage["page"] - 1]
        assert page[passage["start"] : passage["end"]] == passage["text"]
        assert passage["document_title"] == docs[passage["document_id"]].title


@pytest.fixture
def lease_case(search_api: Api, admin: httpx.Client) -> tuple[dict[str, Any], Doc]:
    case = new_case(admin)
    return case, add_document(search_api, admin, case["id"], "Residential lease", LEASE)


def test_answers_with_verbatim_cited_sentences(search_api: Api, admin: httpx.Client, lease_case) -> None:
    case, lease = lease_case
    answer = ask(admin, case["id"], "When does the lease end?")
    assert answer["grounded"] is True and answer["message"] is None
    assert answer["question"] == "When does the lease end?"
    sentences = answer["answer"]["sentences"]
    assert 1 <= len(sentences) <= 3
    assert sentences[0]["text"] == "The term begins on March 1, 2024 and ends on February 28, 2026."
    assert sentences[0]["document_id"] == lease.id and sentences[0]["page"] == 1
    assert answer["answer"]["text"] == " ".join(s["text"] for s in sentences)
    assert answer["passages"] and answer["passages"][0]["score"] > 0
    assert_cited_exactly(answer, {lease.id: lease})

    answer = ask(admin, case["id"], "How much is the security deposit?")
    assert answer["grounded"] is True
    first = answer["answer"]["sentences"][0]
    assert "$4,900" in first["text"] and first["page"] == 2
    assert_cited_exactly(answer, {lease.id: lease})

    # A paraphrase sharing no key word with the text: "animals" / "pets" -> "cat", "dogs".
    answer = ask(admin, case["id"], "Which animals is the renter allowed to have?")
    assert answer["grounded"] is True
    assert any("cat" in s["text"] for s in answer["answer"]["sentences"])
    assert_cited_exactly(answer, {lease.id: lease})


def test_refuses_questions_the_documents_do_not_answer(admin: httpx.Client, lease_case) -> None:
    case, _ = lease_case
    for question in ("What is the capital of France?", "Did the court grant the motion to compel discovery?"):
        answer = ask(admin, case["id"], question)
        assert answer["grounded"] is False, answer
        assert answer["answer"] == {"text": None, "sentences": []}
        assert answer["passages"] == []
        assert "supports an answer" in answer["message"]


def test_answers_only_from_the_case_s_own_documents(search_api: Api, admin: httpx.Client, lease_case) -> None:
    case, lease = lease_case
    other = new_case(admin)
    other_lease = add_document(search_api, admin, other["id"], "Commercial lease", OTHER_LEASE)
    dismissal = add_document(search_api, admin, other["id"], "Dismissal notes", DISMISSAL)

    answer = ask(admin, case["id"], "When does the lease end?")
    cited = {s["document_id"] for s in answer["answer"]["sentences"]} | {
        p["document_id"] for p in answer["passages"]
    }
    assert cited == {lease.id}
    assert "2030" not in answer["answer"]["text"]

    # What only the other case's documents answer is not answered here...
    answer = ask(admin, case["id"], "Why was the employee dismissed?")
    assert answer["grounded"] is False and answer["passages"] == []
    # ...but it is there.
    answer = ask(admin, other["id"], "Why was the employee dismissed?")
    assert answer["grounded"] is True
    assert {s["document_id"] for s in answer["answer"]["sentences"]} == {dismissal.id}
    assert_cited_exactly(answer, {other_lease.id: other_lease, dismissal.id: dismissal})


def test_case_without_processed_documents(admin: httpx.Client) -> None:
    case = new_case(admin)
    answer = ask(admin, case["id"], "When does the lease end?")
    assert answer["grounded"] is False and answer["answer"]["text"] is None
    assert "no processed documents" in answer["message"]


def test_unknown_case_validation_and_permissions(search_api: Api, admin: httpx.Client, lease_case) -> None:
    case, _ = lease_case
    api_error(
        admin.post(f"/cases/case_{secrets.token_hex(8)}/ask", json={"question": "When?"}), 404, "NOT_FOUND"
    )
    for body in (
        {},
        {"question": "ab"},
        {"question": "x" * 1001},
        {"question": "   "},
        {"question": "Why?", "x": 1},
    ):
        error = api_error(admin.post(f"/cases/{case['id']}/ask", json=body), 422, "VALIDATION_ERROR")
        assert details(error), error

    _, viewer_token = search_api.make_user("viewer")
    with search_api.client(token=viewer_token) as viewer:
        assert ask(viewer, case["id"], "When does the lease end?")["grounded"] is True
    for permissions in (["read:cases"], ["read:documents"]):
        key = search_api.make_key(permissions)["key"]
        with search_api.client(api_key=key) as client:
            response = client.post(f"/cases/{case['id']}/ask", json={"question": "When does the lease end?"})
            auth_error(response, 403, "AUTH_010")
    key = search_api.make_key(["read:cases", "read:documents"])["key"]
    with search_api.client(api_key=key) as client:
        assert ask(client, case["id"], "When does the lease end?")["grounded"] is True
