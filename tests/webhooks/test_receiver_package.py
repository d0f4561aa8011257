"""The stand-alone receiver package (receiver/): standard library only, and it verifies real
deliveries with both signatures, during a rotation too."""

from __future__ import annotations

import ast
import sys
import time
from pathlib import Path

import httpx
import pytest

from tests.support.assertions import ok
from tests.support.factories import new_case, unique
from tests.support.receivers import Receiver

PACKAGE = Path(__file__).resolve().parents[2] / "receiver"
sys.path.insert(0, str(PACKAGE / "src"))

from casefile_receiver import SignatureError, verify_signature, verify_standard_signature  # noqa: E402


def test_the_package_needs_nothing_but_the_standard_library() -> None:
    source = (PACKAGE / "src" / "casefile_receiver" / "__init__.py").read_text()
    imported = set()
    for node in ast.walk(ast.parse(source)):
        if isinstance(node, ast.Import):
            imported |= {alias.name.split(".")[0] for alias in node.names}
        elif isinstance(node, ast.ImportFrom) and node.module:
            imported.add(node.module.split(".")[0])
    assert imported - {"__future__"} <= sys.stdlib_module_names, imported
    assert "dependencies = []" in (PACKAGE / "pyproject.toml").read_text()


def test_it_verifies_real_deliveries(admin: httpx.Client, hooks: list[str], receiver: Receiver) -> None:
    old = "whsec_" + unique("rcv") * 2
    hook = ok(
        admin.post(
            "/admin/webhooks",
            json={"name": "rcv", "url": receiver.url, "events": ["case.created"], "secret": old},
        ),
        201,
    )
    hooks.append(hook["id"])
    new = ok(admin.post(f"/admin/webhooks/{hook['id']}/rotate-secret", json={}))["secret"]
    new_case(admin)
    got = receiver.wait_for(event="case.created")[0]
    for secret in (old, new, [new, "whsec_other-secret-000000"]):
        assert verify_signature(got.body, got.headers, secret) == int(got.headers["x-service-timestamp"])
        assert verify_standard_signature(got.body, got.headers, secret) == got.json()["id"]
    for verify in (verify_signature, verify_standard_signature):
        with pytest.raises(SignatureError):
            verify(got.body, got.headers, "whsec_not-the-secret-000000")
        with pytest.raises(SignatureError):
            verify(got.body + b"x", got.headers, old)
        with pytest.raises(SignatureError):  # a replay, ten minutes later
            verify(got.body, got.headers, old, now=time.time() + 600)
        with pytest.raises(SignatureError):
            verify(got.body, {}, old)
