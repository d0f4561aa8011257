"""GET /search: cases and document passages, full text fused with semantic similarity.

Passages are put in the way the pipeline does (`replace_passages`), with vectors from the
real embedder, on a server of this module's own with AI processing turned off, so that the
background pipeline never replaces them behind a test's back.
"""

from __future__ import annotations

import html
import random
import secrets
from collections.abc import Iterator
from typing import Any

import httpx
import pytest

from tests.support.assertions import api_error, auth_error, details, ok
from tests.support.factories import new_case
from tests.support.indexing import add_document, index_document
from tests.support.servers import Api


@pytest.fixture
def admin(search_api: Api) -> Iterator[httpx.Client]:
    with search_api.admin() as client:
        yield client


def search(client: httpx.Client, q: str, **params: Any) -> tuple[list[dict[str, Any]], dict[str, Any]]:
    r = client.get("/search", params={"q": q, **params})
    data = ok(r)
    return data, r.json()["meta"]["pagination"]


def hit_ids(hits: list[dict[str, Any]]) -> list[str]:
    return [h["id"] for h in hits]


def text_hits(hits: list[dict[str, Any]]) -> list[str]:
    """The ids of hits that matched the words. (A made-up word such as `oldterm3af2c1` also has
    an embedding, and may bring weak semantic neighbours above the floor: not what these tests
    are about.)"""
    return [h["id"] for h in hits if "text" in h["matched"]]


def plain(snippet_text: str) -> str:
    """The snippet's text as in the source: marks and ellipses removed, entities decoded."""
    text = snippet_text.replace("<mark>", "").replace("</mark>", "")
    return html.unescape(text.removeprefix("… ").removesuffix(" …"))


LEASE_PAGES = [
    "COMMERCIAL LEASE\n\nThe premises at 12 Harbor Road are let for five years at a monthly rent "
    "of $4,000, payable on the first day of each month.",
    "DEFAULT\n\nThe lessee defaulted on rent for March, April and May and did not cure the arrears "
    "within the ten-day notice period. The landlord therefore served notice to quit and asked the "
    "court to restore possession of the premises.",
]
PATENT_PAGES = [
    "The claimed invention is a semiconductor wafer with a doped gallium nitride layer. Prior art "
    "references disclose silicon substrates but not the claimed lattice structure."
]


def test_finds_cases_and_document_passages(search_api: Api, admin: httpx.Client) -> None:
    word = f"zephyrine{secrets.token_hex(3)}"
    case = new_case(admin, title=f"Matter of {word.capitalize()} Shipping", description="Cargo claim")
    other = new_case(admin)
    doc = add_document(
        search_api,
        admin,
        other["id"],
        "Bill of lading",
        [
            "Cover page.",
            f"Second page.\n\nThe cargo was consigned to {word.capitalize()} Shipping at Rotterdam.",
        ],
    )

    hits, _ = search(admin, word)
    assert {(h["kind"], h["id"]) for h in hits if "text" in h["matched"]} == {
        ("case", case["id"]),
        ("document", doc.id),
    }
    assert hits[0]["id"] in (case["id"], doc.id) and hits[1]["id"] in (case["id"], doc.id)
    case_hit = next(h for h in hits if h["kind"] == "case")
    assert case_hit["title"] == case["title"]
    assert case_hit["snippet"]["field"] == "title"
    assert f"<mark>{word.capitalize()}</mark>" in case_hit["snippet"]["text"]
    assert case_hit["matched"] == ["text"]
    doc_hit = next(h for h in hits if h["kind"] == "document")
    assert doc_hit["case_id"] == other["id"] and doc_hit["title"] == "Bill of lading"
    assert "text" in doc_hit["matched"]
    assert doc_hit["score"] > 0
    snippet = doc_hit["snippet"]
    assert snippet["page"] == 2
    assert f"<mark>{word.capitalize()}</mark>" in snippet["text"]
    # The offsets locate the shown window in the page's text.
    assert doc.pages[1][snippet["start"] : snippet["end"]] == plain(snippet["text"])


def test_passage_words_match_by_stem_and_document_titles_match(search_api: Api, admin: httpx.Client) -> None:
    tag = f"qx{secrets.token_hex(3)}"
    case = new_case(admin)
    by_text = add_document(
        search_api, admin, case["id"], "Memo", [f"Reference {tag}. The buyer made late payments twice."]
    )
    by_title = add_document(search_api, admin, case["id"], f"Invoice {tag} annex", ["Amounts are in euro."])

    hits, _ = search(admin, f"{tag} payment", kind="document")
    assert hit_ids(hits)[0] == by_text.id  # both words ("payments" by its stem) beat one
    assert "<mark>payments</mark>" in hits[0]["snippet"]["text"]
    assert by_title.id not in text_hits(hits)  # a title must hold every word
    hits, _ = search(admin, tag, kind="document")
    assert set(text_hits(hits)) == {by_text.id, by_title.id}
    title_hit = next(h for h in hits if h["id"] == by_title.id)
    assert title_hit["matched"] == ["text"]
    assert title_hit["snippet"]["page"] == 1  # no passage matched: the first passage is shown


def test_pagination_and_total(make_server) -> None:
    # A server of its own: on the shared one, another test's document can be a semantic neighbour
    # of the made-up word (its embedding is arbitrary) and change the total.
    search_api = make_server(ai_enabled=False)
    with search_api.admin() as admin:
        word = f"paginor{secrets.token_hex(3)}"
        case = new_case(admin)
        docs = {
            add_document(
                search_api, admin, case["id"], f"Exhibit {i}", [f"Exhibit {i} mentions {word} once."]
            ).id
            for i in range(5)
        }
        assert text_hits(search(admin, word, kind="document", limit=100)[0]) == hit_ids(
            search(admin, word, kind="document", limit=100)[0]
        ), "no semantic neighbour of this made-up word passes the similarity floor"
        seen: list[str] = []
        for page in (1, 2, 3):
            hits, pagination = search(admin, word, kind="document", limit=2, page=page)
            assert pagination == {"page": page, "limit": 2, "total": 5, "pages": 3}
            assert len(hits) == (2 if page < 3 else 1)
            seen += hit_ids(hits)
        assert sorted(seen) == sorted(docs)  # every hit once, none twice
        scores = [h["score"] for h in search(admin, word, kind="document", limit=10)[0]]
        assert scores == sorted(scores, reverse=True)
        hits, pagination = search(admin, word, kind="document", limit=2, page=4)
        assert hits == [] and pagination["total"] == 5


def test_kind_filter(search_api: Api, admin: httpx.Client) -> None:
    word = f"kindly{secrets.token_hex(3)}"
    case = new_case(admin, description=f"Dispute about {word}")
    doc = add_document(search_api, admin, case["id"], "Letter", [f"Our client disputes the {word} charge."])
    assert hit_ids(search(admin, word, kind="case")[0]) == [case["id"]]
    assert text_hits(search(admin, word, kind="document")[0]) == [doc.id]
    assert {h["kind"] for h in search(admin, word, kind="document")[0]} == {"document"}
    assert set(text_hits(search(admin, word)[0])) == {case["id"], doc.id}


def test_permissions(search_api: Api, admin: httpx.Client) -> None:
    word = f"permitto{secrets.token_hex(3)}"
    case = new_case(admin, title=f"{word} v. State")
    doc = add_document(search_api, admin, case["id"], "Brief", [f"The {word} brief argues the point."])

    _, viewer_token = search_api.make_user("viewer")
    with search_api.client(token=viewer_token) as viewer:
        assert set(text_hits(search(viewer, word)[0])) == {case["id"], doc.id}

    cases_only = search_api.make_key(["read:cases"])["key"]
    with search_api.client(api_key=cases_only) as client:
        hits, _ = search(client, word)
        assert hit_ids(hits) == [case["id"]]  # cases only: no document, not even a semantic one
        auth_error(client.get("/search", params={"q": word, "kind": "document"}), 403, "AUTH_010")

    documents_only = search_api.make_key(["read:documents"])["key"]
    with search_api.client(api_key=documents_only) as client:
        hits, _ = search(client, word)
        assert text_hits(hits) == [doc.id] and {h["kind"] for h in hits} == {"document"}

    neither = search_api.make_key(["read:webhooks", "write:cases"])["key"]
    with search_api.client(api_key=neither) as client:
        auth_error(client.get("/search", params={"q": word}), 403, "AUTH_010")
    with search_api.client() as anonymous:
        auth_error(anonymous.get("/search", params={"q": word}), 401, "AUTH_002")


def test_validation(admin: httpx.Client) -> None:
    assert "q" in details(api_error(admin.get("/search"), 422, "VALIDATION_ERROR"))
    for params in ({"q": ""}, {"q": "x" * 501}, {"q": "   "}):
        assert "q" in details(api_error(admin.get("/search", params=params), 422, "VALIDATION_ERROR"))
    for name, value in (("kind", "user"), ("limit", "101"), ("limit", "0"), ("page", "0")):
        error = api_error(admin.get("/search", params={"q": "lease", name: value}), 422, "VALIDATION_ERROR")
        assert name in details(error)
    ok(admin.get("/search", params={"q": "x" * 500}))


def test_snippets_are_highlighted_and_escaped(search_api: Api, admin: httpx.Client) -> None:
    word = f"escapade{secrets.token_hex(3)}"
    case = new_case(admin, description=f'<img src=x onerror="alert(1)"> {word} & more')
    page = f'Exhibit <script>alert("x")</script> shows the {word} clause & "quoted" terms <b>bold</b>.'
    doc = add_document(search_api, admin, case["id"], "Exhibit", [page])

    hits = [h for h in search(admin, word)[0] if "text" in h["matched"]]
    assert {h["id"] for h in hits} == {case["id"], doc.id}
    for hit in hits:
        text = hit["snippet"]["text"]
        assert f"<mark>{word}</mark>" in text
        without_marks = text.replace("<mark>", "").replace("</mark>", "")
        assert "<" not in without_marks and ">" not in without_marks and '"' not in without_marks
    doc_snippet = next(h for h in hits if h["kind"] == "document")["snippet"]
    assert "&lt;script&gt;" in doc_snippet["text"] and "&amp;" in doc_snippet["text"]
    assert plain(doc_snippet["text"]) == page[doc_snippet["start"] : doc_snippet["end"]]


def test_long_passage_snippet_is_a_window_around_the_words(search_api: Api, admin: httpx.Client) -> None:
    word = f"windowed{secrets.token_hex(3)}"
    filler = "The parties exchanged correspondence about scheduling and logistics. " * 12
    page = f"{filler}Then the {word} notice arrived. {filler}"
    case = new_case(admin)
    doc = add_document(search_api, admin, case["id"], "Long memo", [page])
    snippet = next(h for h in search(admin, word)[0] if h["id"] == doc.id)["snippet"]
    assert snippet["text"].startswith("… ") and snippet["text"].endswith(" …")
    assert f"<mark>{word}</mark>" in snippet["text"]
    assert len(plain(snippet["text"])) <= 240
    assert page[snippet["start"] : snippet["end"]] == plain(snippet["text"])


def test_semantic_hit_for_words_the_text_does_not_contain(search_api: Api, admin: httpx.Client) -> None:
    case = new_case(admin)
    lease = add_document(search_api, admin, case["id"], "Harbor Road lease", LEASE_PAGES)
    patent = add_document(search_api, admin, case["id"], "Patent claims", PATENT_PAGES)
    query = "tenant eviction nonpayment"
    text = " ".join(LEASE_PAGES).lower()
    assert not any(word in text for word in query.split())

    hits, _ = search(admin, query, kind="document")
    lease_hit = next(h for h in hits if h["id"] == lease.id)
    assert lease_hit["matched"] == ["semantic"]
    assert lease_hit["snippet"]["page"] == 2  # the passage about the default
    assert lease_hit["snippet"]["text"].startswith("The lessee defaulted")
    assert patent.id not in hit_ids(hits)  # an unrelated document stays out


def test_reprocessing_replaces_passages(search_api: Api, admin: httpx.Client) -> None:
    old_word, new_word = f"oldterm{secrets.token_hex(3)}", f"newterm{secrets.token_hex(3)}"
    case = new_case(admin)
    old_page = f"The salvage crew raised the sunken cargo vessel {old_word} from the harbor floor."
    doc = add_document(search_api, admin, case["id"], "Report", [old_page])
    assert text_hits(search(admin, old_word)[0]) == [doc.id]
    assert doc.id in hit_ids(search(admin, "shipwreck recovery at sea")[0])  # the index holds it now

    index_document(search_api, doc.id, case["id"], [f"The employee alleges wrongful termination {new_word}."])
    assert doc.id not in hit_ids(search(admin, old_word)[0])
    assert doc.id not in hit_ids(search(admin, "shipwreck recovery at sea")[0])  # no stale vector
    hits, _ = search(admin, new_word)
    assert text_hits(hits) == [doc.id] and hits[0]["id"] == doc.id
    assert "wrongful termination" in hits[0]["snippet"]["text"]
    rows = search_api.sql("SELECT count(*) FROM passages WHERE document_id = :d", d=doc.id)
    assert rows[0][0] == 1


def test_deleted_document_disappears(search_api: Api, admin: httpx.Client) -> None:
    word = f"gonner{secrets.token_hex(3)}"
    case = new_case(admin)
    doc = add_document(
        search_api,
        admin,
        case["id"],
        "Affidavit",
        [f"The tugboat towed the burning oil tanker {word} back into port."],
    )
    assert text_hits(search(admin, word)[0]) == [doc.id]
    assert doc.id in hit_ids(search(admin, "fire aboard a ship in the harbour")[0])

    ok(admin.delete(f"/documents/{doc.id}"))
    assert doc.id not in hit_ids(search(admin, word)[0])
    assert doc.id not in hit_ids(search(admin, "fire aboard a ship in the harbour")[0])
    passages = "SELECT count(*) FROM passages WHERE document_id = :d"
    assert search_api.sql(passages, d=doc.id)[0][0] > 0  # in the trash: kept until purged
    # Restored, it is found again, by meaning too (its passages stayed in the vector index).
    ok(admin.post(f"/admin/trash/{doc.id}/restore"))
    assert text_hits(search(admin, word)[0]) == [doc.id]
    assert doc.id in hit_ids(search(admin, "fire aboard a ship in the harbour")[0])
    ok(admin.delete(f"/documents/{doc.id}"))
    ok(admin.delete(f"/admin/trash/{doc.id}"))
    assert doc.id not in hit_ids(search(admin, "fire aboard a ship in the harbour")[0])
    assert search_api.sql(passages, d=doc.id)[0][0] == 0


def test_deleted_case_takes_its_hits_along(search_api: Api, admin: httpx.Client) -> None:
    word = f"casegone{secrets.token_hex(3)}"
    case = new_case(admin, title=f"In re {word}")
    doc = add_document(search_api, admin, case["id"], "Petition", [f"The {word} petition for relief."])
    assert set(text_hits(search(admin, word)[0])) == {case["id"], doc.id}
    ok(admin.delete(f"/cases/{case['id']}"))
    assert not {case["id"], doc.id} & set(hit_ids(search(admin, word)[0]))


def test_unversioned_alias(search_api: Api) -> None:
    with httpx.Client(
        base_url=search_api.root + "/api", headers={"Authorization": f"Bearer {search_api.admin_token}"}
    ) as c:
        ok(c.get("/search", params={"q": "lease"}))


def test_the_snippet_window_is_the_one_with_most_matches() -> None:
    """The linear scan picks the same window as counting every window would."""
    from casefile.search.snippets import _densest_window

    rng = random.Random(7)
    for _ in range(300):
        spans, position = [], 0
        for _ in range(rng.randint(1, 40)):
            position += rng.randint(0, 30)
            length = rng.randint(1, 8)
            spans.append((position, position + length))
            position += length
        size = rng.randint(5, 80)
        counts = [sum(1 for s in spans[i:] if s[1] <= spans[i][0] + size) for i in range(len(spans))]
        assert _densest_window(spans, size) == counts.index(max(counts))
