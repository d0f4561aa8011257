"""HTTPS (docs/api-conventions.md#https): TLS with a certificate the test makes, HSTS, proxy headers, and
CASEFILE_REQUIRE_HTTPS, each through a real `casefile serve` process. Transport does not depend on
the database, so these run on the embedded default only."""

from __future__ import annotations

import socket
import ssl
from collections.abc import Iterator
from pathlib import Path

import httpx
import pytest
import trustme

from tests.support import plain
from tests.support.assertions import auth_error, ok
from tests.support.processes import Process
from tests.support.servers import ADMIN_EMAIL, ADMIN_PASSWORD, make_settings

HSTS = "max-age=31536000; includeSubDomains"
OUTSIDE = "203.0.113.7"  # a documentation address, standing for a client on the internet


@pytest.fixture
def serve(tmp_path: Path) -> Iterator[object]:
    started: list[Process] = []

    def start(
        *options: str, host: str = "127.0.0.1", tls: ssl.SSLContext | None = None, **extra: object
    ) -> Process:
        settings = make_settings(tmp_path / f"data-{len(started)}", None, worker_enabled=False)
        process = Process(
            "serve",
            settings,
            tmp_path / f"serve-{len(started)}.log",
            options=options,
            host=host,
            tls=tls,
            **extra,
        )
        started.append(process)
        return process

    yield start
    for process in started:
        process.stop()


def login(client: httpx.Client) -> httpx.Response:
    return client.post("/auth/login", json={"email": ADMIN_EMAIL, "password": ADMIN_PASSWORD})


def test_serves_tls_with_hsts(serve, tmp_path: Path) -> None:
    ca = trustme.CA()
    cert = ca.issue_cert("127.0.0.1", "localhost")
    cert_file, key_file = tmp_path / "cert.pem", tmp_path / "key.pem"
    cert.cert_chain_pems[0].write_to_path(cert_file)
    cert.private_key_pem.write_to_path(key_file)
    trust = ssl.create_default_context()
    ca.configure_trust(trust)

    server = serve("--ssl-certfile", str(cert_file), "--ssl-keyfile", str(key_file), tls=trust)
    assert server.base.startswith("https://")
    with httpx.Client(base_url=server.base, verify=trust) as client:
        r = login(client)
        ok(r)
        assert r.headers["strict-transport-security"] == HSTS
        assert client.get("/cases").headers["strict-transport-security"] == HSTS  # errors too
    # A client that does not trust the certificate is refused by TLS itself.
    with pytest.raises(httpx.ConnectError):
        plain.get(server.root + "/healthz")


def test_plain_http_has_no_hsts(serve) -> None:
    server = serve()
    with httpx.Client(base_url=server.base) as client:
        assert "strict-transport-security" not in login(client).headers


def test_require_https_behind_a_proxy(serve) -> None:
    server = serve("--proxy-headers", require_https=True)
    via_proxy_http = {"X-Forwarded-For": OUTSIDE, "X-Forwarded-Proto": "http"}
    via_proxy_https = {"X-Forwarded-For": OUTSIDE, "X-Forwarded-Proto": "https"}
    with httpx.Client(base_url=server.base) as client:
        refused = client.post(
            "/auth/login", json={"email": ADMIN_EMAIL, "password": ADMIN_PASSWORD}, headers=via_proxy_http
        )
        body = auth_error(refused, 403, "AUTH_020")
        assert "https" in body["error_description"].lower()
        # The health check answers whatever the scheme: load balancers probe it over plain HTTP.
        assert plain.get(server.root + "/healthz", headers=via_proxy_http).status_code == 200
        # Forwarded as HTTPS by the trusted proxy: served, with HSTS.
        accepted = client.post(
            "/auth/login", json={"email": ADMIN_EMAIL, "password": ADMIN_PASSWORD}, headers=via_proxy_https
        )
        ok(accepted)
        assert accepted.headers["strict-transport-security"] == HSTS
        # The proxy's own loopback requests (no forwarded headers) are not refused.
        ok(login(client))


def outside_address() -> str:
    """This machine's address on its network (not loopback): no packet is sent to find it."""
    with socket.socket(socket.AF_INET, socket.SOCK_DGRAM) as probe:
        probe.connect(("198.51.100.1", 9))
        address = str(probe.getsockname()[0])
    assert not address.startswith("127."), "the tests need a network address besides loopback"
    return address


def test_require_https_refuses_plain_http_from_another_address(serve) -> None:
    address = outside_address()
    server = serve(host="0.0.0.0", require_https=True)  # reachable from off loopback
    outside = f"http://{address}:{server.port}"
    # Without --proxy-headers, a client's claim to be forwarded over HTTPS is not believed.
    refused = plain.post(
        outside + "/api/v1/auth/login",
        json={"email": ADMIN_EMAIL, "password": ADMIN_PASSWORD},
        headers={"X-Forwarded-Proto": "https"},
    )
    auth_error(refused, 403, "AUTH_020")
    assert "strict-transport-security" not in refused.headers
    assert plain.get(outside + "/healthz").status_code == 200
    with httpx.Client(base_url=f"http://127.0.0.1:{server.port}/api/v1") as local:
        ok(login(local))
