"""The verifiable log from the outside: entries listed at once and placed soon after, signed tree
heads and keys, inclusion and consistency proofs checked with the stand-alone verifier package
(verifier/), who may ask, and `audit.tree_head` deliveries that a firm can keep."""

from __future__ import annotations

import ast
import sys
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import httpx
import pytest

from tests.support.assertions import api_error, auth_error, details, ok
from tests.support.factories import new_case, unique
from tests.support.receivers import Receiver
from tests.support.servers import Api
from tests.support.waiting import wait_until

PACKAGE = Path(__file__).resolve().parents[2] / "verifier"
sys.path.insert(0, str(PACKAGE / "src"))

from casefile_audit_verifier import (  # noqa: E402
    VerificationError,
    entry_hash_matches,
    verify_consistency,
    verify_inclusion,
    verify_tree_head,
)


def placed(admin: httpx.Client, case_id: str) -> list[dict[str, Any]]:
    """The case's entries, once the sequencer has placed every one of them."""

    def all_placed() -> list[dict[str, Any]] | None:
        found = list(ok(admin.get("/admin/audit", params={"case_id": case_id, "limit": 100})))
        return found if found and all(e["sequenced"] for e in found) else None

    return wait_until(all_placed)


def public_key(client: httpx.Client, key_id: str) -> str:
    keys = {k["key_id"]: k for k in ok(client.get("/audit/signing-keys"))}
    assert keys[key_id]["algorithm"] == "Ed25519" and "BEGIN PUBLIC KEY" in keys[key_id]["public_key_pem"]
    return str(keys[key_id]["public_key"])


def test_entries_are_listed_at_once_and_proven_once_placed(api: Api, admin: httpx.Client) -> None:
    case = new_case(admin)
    ok(admin.get(f"/cases/{case['id']}"))
    listed = list(ok(admin.get("/admin/audit", params={"case_id": case["id"]})))
    assert {e["action"] for e in listed} >= {"case.created", "case.read"}  # committed: listed already
    assert all(entry_hash_matches(e) for e in listed)
    entries = placed(admin, case["id"])
    assert all(isinstance(e["seq"], int) and len(e["prev_hash"]) == 64 for e in entries)
    head = ok(admin.get("/audit/tree-heads/latest"))
    key = public_key(admin, head["key_id"])
    verify_tree_head(head, key)
    assert ok(admin.get(f"/audit/tree-heads/{head['tree_size']}")) == head
    read = next(e for e in entries if e["action"] == "case.read")
    proof = ok(admin.get(f"/audit/entries/{read['id']}/inclusion-proof"))
    assert proof["entry"] == {**read} and proof["leaf_index"] == read["seq"] - 1
    verify_inclusion(proof, key)
    with pytest.raises(VerificationError, match="does not hash"):
        verify_inclusion({**proof, "entry": {**proof["entry"], "outcome": "denied"}}, key)
    # A path with a sibling changed proves nothing (reversing it did not change a path of one:
    # the order of the tests decides how big the tree is by now).
    assert proof["audit_path"] and proof["audit_path"][0] != "0" * 64
    with pytest.raises(VerificationError, match="not in the tree"):
        verify_inclusion({**proof, "audit_path": ["0" * 64, *proof["audit_path"][1:]]}, key)
    api_error(
        admin.get(f"/audit/entries/{read['id']}/inclusion-proof", params={"tree_size": 10**12}),
        404,
        "NOT_FOUND",
    )


def test_a_consistency_proof_between_two_heads(api: Api, admin: httpx.Client) -> None:
    first_case = new_case(admin)
    placed(admin, first_case["id"])
    old = ok(admin.get("/audit/tree-heads/latest"))
    later = new_case(admin)
    placed(admin, later["id"])
    new = ok(admin.get("/audit/tree-heads/latest"))
    assert new["tree_size"] > old["tree_size"]
    # An entry of the older head is proven against it as well as against the newer one.
    early = placed(admin, first_case["id"])[0]
    for head in (old, new):
        proof = ok(
            admin.get(
                f"/audit/entries/{early['id']}/inclusion-proof", params={"tree_size": head["tree_size"]}
            )
        )
        assert proof["tree_head"] == head
        verify_inclusion(proof, public_key(admin, head["key_id"]))
    # An entry of the newer head only has no proof in the older tree: 404 naming tree_size.
    recent = max(placed(admin, later["id"]), key=lambda e: e["seq"])
    assert recent["seq"] > old["tree_size"]
    missing = admin.get(
        f"/audit/entries/{recent['id']}/inclusion-proof", params={"tree_size": old["tree_size"]}
    )
    assert "tree_size" in details(api_error(missing, 404, "NOT_FOUND"))
    proof = ok(admin.get("/audit/consistency-proof", params={"first": old["tree_size"]}))
    assert proof["first"] == old and proof["second"]["tree_size"] >= new["tree_size"]
    key = public_key(admin, proof["second"]["key_id"])
    verify_consistency(proof, key)
    forged_root = {**proof["first"], "root_hash": "ab" * 32}
    with pytest.raises(VerificationError):
        verify_consistency({**proof, "first": forged_root})
    same = ok(
        admin.get("/audit/consistency-proof", params={"first": old["tree_size"], "second": old["tree_size"]})
    )
    assert same["consistency_path"] == []
    verify_consistency(same, key)
    api_error(admin.get("/audit/consistency-proof", params={"first": 10**12}), 404, "NOT_FOUND")
    api_error(admin.get("/audit/tree-heads/999999999"), 404, "NOT_FOUND")
    api_error(admin.get("/audit/entries/aud_nothing/inclusion-proof"), 404, "NOT_FOUND")


def test_who_may_read_the_log(api: Api, admin: httpx.Client) -> None:
    _, token = api.make_user("attorney")
    with api.client(token=token) as attorney:
        auth_error(attorney.get("/audit/tree-heads/latest"), 403, "AUTH_010")
    reader = api.make_key(["read:audit"])
    with api.client(api_key=reader["key"]) as key:
        head = ok(key.get("/audit/tree-heads/latest"))
        assert head["tree_size"] >= 0 and ok(key.get("/audit/signing-keys"))
        auth_error(key.get("/admin/audit"), 403, "AUTH_011")  # the trail's list stays administrators'
    other = api.make_key(["read:cases"])
    with api.client(api_key=other["key"]) as key:
        auth_error(key.get("/audit/signing-keys"), 403, "AUTH_010")


def test_without_a_sequencer_entries_wait_and_nothing_else_does(make_server: Any) -> None:
    api = make_server(worker_enabled=False)
    with api.admin() as admin:
        case = new_case(admin)  # answered: no request waits for the log
        entry = ok(admin.get("/admin/audit", params={"case_id": case["id"]}))[0]
        assert entry["sequenced"] is False and entry["seq"] is None and entry["prev_hash"] is None
        assert entry_hash_matches(entry)
        api_error(admin.get(f"/audit/entries/{entry['id']}/inclusion-proof"), 409, "CONFLICT")
        api_error(admin.get("/audit/tree-heads/latest"), 404, "NOT_FOUND")


@pytest.fixture
def hooks(admin: httpx.Client) -> Iterator[list[str]]:
    made: list[str] = []
    yield made
    for hook_id in made:
        admin.delete(f"/admin/webhooks/{hook_id}")


def test_tree_heads_are_delivered_to_keep(admin: httpx.Client, hooks: list[str], receiver: Receiver) -> None:
    hook = ok(
        admin.post(
            "/admin/webhooks",
            json={
                "name": unique("heads"),
                "url": receiver.url,
                "events": ["audit.tree_head"],
                "secret": "whsec-" + unique("k") * 2,
            },
        ),
        201,
    )
    hooks.append(hook["id"])
    case = new_case(admin)
    placed(admin, case["id"])
    delivered = receiver.wait_for(event="audit.tree_head")[0].json()["data"]
    verify_tree_head(delivered, public_key(admin, delivered["key_id"]))
    assert set(delivered) == {"tree_size", "root_hash", "timestamp", "signed_at", "key_id", "signature"}
    kept = ok(admin.get(f"/audit/tree-heads/{delivered['tree_size']}"))
    assert kept == delivered


def test_the_verifier_needs_only_cryptography() -> None:
    source = (PACKAGE / "src" / "casefile_audit_verifier" / "__init__.py").read_text()
    imported = set()
    for node in ast.walk(ast.parse(source)):
        if isinstance(node, ast.Import):
            imported |= {alias.name.split(".")[0] for alias in node.names}
        elif isinstance(node, ast.ImportFrom) and node.module:
            imported.add(node.module.split(".")[0])
    assert imported - {"__future__", "cryptography"} <= sys.stdlib_module_names, imported
    assert 'dependencies = ["cryptography>=42"]' in (PACKAGE / "pyproject.toml").read_text()
