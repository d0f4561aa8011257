"""A real OpenID provider for the single sign-on tests: panva/oidc-provider (OpenID Certified)
run by node from tests/support/oidc_provider, on loopback, with keys the test generates (so a test can
also sign tokens the provider never issued, with the provider's own key). And a browser, done
with httpx, that goes through the provider's sign-in."""

from __future__ import annotations

import base64
import fcntl
import hashlib
import json
import os
import re
import secrets
import shutil
import subprocess
import time
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any
from urllib.parse import parse_qs, urlsplit

import httpx
import pytest
from joserfc import jwt
from joserfc.jwk import KeySet, RSAKey

from tests.support import plain
from tests.support.servers import free_port

PROVIDER_DIR = Path(__file__).parent / "oidc_provider"
CLIENT_ID = "casefile-sso"
CLIENT_SECRET = "casefile-sso-client-secret-for-tests-0123456789"
RESOURCE = "urn:casefile:api"  # the API's audience
OTHER_RESOURCE = "urn:other:api"  # another API of the same provider

# The provider's test users (see provider.mjs).
PASSWORDS = {
    "alice@sso.test": "alice-password",
    "Bob.Stone@Firm.Test": "bob-password",
    "carol@sso.test": "carol-password",
    "dave@sso.test": "dave-password",
    "erin@sso.test": "erin-password",
    "frank@sso.test": "frank-password",
    "admin@casefile.test": "mallory-password",  # email_verified: false
}


def _tool(name: str) -> str:
    path = shutil.which(name)
    if path is None:
        pytest.fail(
            f"`{name}` is not installed: the single sign-on tests run a real OpenID provider "
            "(tests/support/oidc_provider, node >= 20 and npm)",
            pytrace=False,
        )
    return path


def install_provider() -> None:
    """`npm ci` from the committed lock file when node_modules is missing (as on CI). Under a file
    lock: test processes running side by side (pytest-xdist) install once, the others wait."""
    _tool("node")
    npm = _tool("npm")
    with (PROVIDER_DIR / ".install.lock").open("w") as lock:
        fcntl.flock(lock, fcntl.LOCK_EX)
        _npm_ci(npm)


def _npm_ci(npm: str) -> None:
    if (PROVIDER_DIR / "node_modules" / "oidc-provider" / "package.json").exists():
        return
    result = subprocess.run(
        [npm, "ci", "--no-audit", "--no-fund"],
        cwd=PROVIDER_DIR,
        capture_output=True,
        text=True,
        timeout=600,
        check=False,
    )
    if result.returncode != 0:
        pytest.fail(f"npm ci in {PROVIDER_DIR} failed:\n{result.stdout}\n{result.stderr}", pytrace=False)


def new_key(kid: str) -> RSAKey:
    return RSAKey.generate_key(2048, parameters={"kid": kid, "alg": "RS256", "use": "sig"})


@dataclass
class Provider:
    """One oidc-provider process. Its keys are `keys`; the first one signs."""

    redirect_uris: list[str]
    keys: list[RSAKey] = field(default_factory=lambda: [new_key("key-1")])
    port: int = field(default_factory=free_port)
    process: subprocess.Popen[str] | None = None
    log_path: Path | None = None

    @property
    def issuer(self) -> str:
        return f"http://127.0.0.1:{self.port}"

    def start(self) -> Provider:
        node = _tool("node")
        env = {
            **os.environ,
            "OIDC_CLIENT_ID": CLIENT_ID,
            "OIDC_CLIENT_SECRET": CLIENT_SECRET,
            "OIDC_REDIRECT_URIS": " ".join(self.redirect_uris),
            "OIDC_RESOURCE": RESOURCE,
            "OIDC_JWKS": json.dumps(KeySet(list(self.keys)).as_dict(private=True)),
        }
        self.log_path = Path(os.environ.get("TMPDIR", "/tmp")) / f"oidc-provider-{self.port}.log"
        log = self.log_path.open("w")
        self.process = subprocess.Popen(
            [node, "provider.mjs", str(self.port)],
            cwd=PROVIDER_DIR,
            env=env,
            stdout=log,
            stderr=subprocess.STDOUT,
            text=True,
        )
        log.close()
        deadline = time.monotonic() + 30
        while True:
            if self.process.poll() is not None:
                pytest.fail(f"the OpenID provider exited:\n{self.log()}", pytrace=False)
            try:
                r = plain.get(self.issuer + "/.well-known/openid-configuration", timeout=2)
                if r.status_code == 200 and r.json()["issuer"] == self.issuer:
                    return self
            except httpx.HTTPError:
                pass
            if time.monotonic() > deadline:
                self.stop()
                pytest.fail(f"the OpenID provider did not start:\n{self.log()}", pytrace=False)
            time.sleep(0.1)

    def stop(self) -> None:
        if self.process is not None and self.process.poll() is None:
            self.process.terminate()
            try:
                self.process.wait(timeout=10)
            except subprocess.TimeoutExpired:
                self.process.kill()
                self.process.wait(timeout=10)
        self.process = None

    def restart(self, keys: list[RSAKey]) -> None:
        """Stop, and start again on the same port with another key set (its state is lost)."""
        self.stop()
        self.keys = keys
        self.start()

    def log(self) -> str:
        return self.log_path.read_text() if self.log_path and self.log_path.exists() else ""

    def jwks_requests(self) -> int:
        return int(plain.get(self.issuer + "/_test/stats", timeout=5).json()["jwks_requests"])

    # --- tokens the provider never issued, signed with its own key ------------------------------

    def sign(self, claims: dict[str, Any], key: RSAKey | None = None, **header: Any) -> str:
        key = key or self.keys[0]
        full_header = {"alg": "RS256", "kid": key.kid, "typ": "at+jwt", **header}
        return jwt.encode(full_header, claims, key, algorithms=[full_header["alg"]])

    def claims(self, email: str = "dave@sso.test", **overrides: Any) -> dict[str, Any]:
        now = int(time.time())
        return {
            "iss": self.issuer,
            "sub": "u-forged",
            "aud": RESOURCE,
            "iat": now,
            "exp": now + 600,
            "jti": secrets.token_hex(8),
            "client_id": CLIENT_ID,
            "email": email,
            "email_verified": True,
            **overrides,
        }

    # --- an application obtaining the provider's access token itself -------------------------

    def tokens(self, email: str, *, resource: str | None = None) -> dict[str, Any]:
        """Sign in as `email` with the authorization-code flow and PKCE, as a client application
        would, and return the provider's token answer (access_token is a JWT)."""
        verifier = secrets.token_urlsafe(48)
        challenge = base64.urlsafe_b64encode(hashlib.sha256(verifier.encode()).digest()).rstrip(b"=").decode()
        params = {
            "response_type": "code",
            "client_id": CLIENT_ID,
            "redirect_uri": self.redirect_uris[0],
            "scope": "openid email profile",
            "state": secrets.token_urlsafe(16),
            "nonce": secrets.token_urlsafe(16),
            "code_challenge": challenge,
            "code_challenge_method": "S256",
            **({"resource": resource} if resource else {}),
        }
        with httpx.Client(timeout=30) as browser:
            login_page = browser.get(self.issuer + "/auth", params=params, follow_redirects=True)
            answer = sign_in_at_provider(browser, login_page, email)
        assert answer.status_code in (302, 303), answer.text
        location = answer.headers["location"]
        assert location.startswith(self.redirect_uris[0]), location
        query = parse_qs(urlsplit(location).query)
        assert query["state"] == [params["state"]]
        with httpx.Client(timeout=30) as app:
            r = app.post(
                self.issuer + "/token",
                auth=(CLIENT_ID, CLIENT_SECRET),
                data={
                    "grant_type": "authorization_code",
                    "code": query["code"][0],
                    "redirect_uri": self.redirect_uris[0],
                    "code_verifier": verifier,
                },
            )
        assert r.status_code == 200, r.text
        return dict(r.json())


def sign_in_at_provider(browser: httpx.Client, login_page: httpx.Response, email: str) -> httpx.Response:
    """Fill in the provider's sign-in form as a browser would, and follow the provider's own
    redirects; return the first answer that leaves the provider (the redirect to the client)."""
    assert login_page.status_code == 200, login_page.text
    match = re.search(r'<form method="post" action="([^"]+)"', login_page.text)
    assert match, login_page.text
    provider = login_page.url.netloc
    r = browser.post(login_page.url.join(match.group(1)), data={"email": email, "password": PASSWORDS[email]})
    while r.status_code in (302, 303) and r.url.join(r.headers["location"]).netloc == provider:
        r = browser.get(r.url.join(r.headers["location"]))
    return r


def jwt_parts(token: str) -> tuple[dict[str, Any], dict[str, Any]]:
    def decode(part: str) -> dict[str, Any]:
        return dict(json.loads(base64.urlsafe_b64decode(part + "=" * (-len(part) % 4))))

    header, payload, _ = token.split(".")
    return decode(header), decode(payload)


def unsigned(header: dict[str, Any], claims: dict[str, Any], signature: bytes = b"") -> str:
    def b64(data: bytes) -> str:
        return base64.urlsafe_b64encode(data).rstrip(b"=").decode()

    return ".".join((b64(json.dumps(header).encode()), b64(json.dumps(claims).encode()), b64(signature)))
