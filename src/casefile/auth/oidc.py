"""OpenID Connect single sign-on: discovery, the provider's keys, the authorization-code flow
with PKCE, and checking the provider's tokens.

One `OidcClient` per process (held by `Runtime`). What a sign-in in progress needs to remember
(state, PKCE verifier, nonce) travels in an encrypted cookie, not in process memory, so the
callback may reach any API process. JOSE is done by joserfc (signatures, key sets, claims);
HTTP by httpx with time-outs. See docs/decisions/0005-single-sign-on.md.
"""

from __future__ import annotations

import asyncio
import base64
import hashlib
import json
import logging
import secrets
import time
from collections.abc import Awaitable, Callable
from dataclasses import asdict, dataclass
from typing import Any, Generic, TypeVar
from urllib.parse import quote, urlencode

import httpx
from joserfc import jwt
from joserfc.errors import JoseError
from joserfc.jwk import Key
from joserfc.jws import JWSRegistry

from casefile.auth.oidc_tokens import ASYMMETRIC_ALGORITHMS, pick_key, public_keys, unverified, verified_email
from casefile.errors import ProviderUnavailable, invalid_token, provider_answered, sso_failed
from casefile.settings import Settings

log = logging.getLogger(__name__)

# Key sets and discovery are fetched at most this often, whatever the reason (cache expiry, an
# unknown `kid` after a key rotation): tokens with made-up key ids cannot make us hammer the
# provider, and a rotation is picked up within this time.
MIN_REFETCH_SECONDS = 10.0
# Clock skew tolerated on exp / nbf / iat.
LEEWAY_SECONDS = 30
# What a sign-in may take from /authorize to /callback (also the cookie's lifetime).
FLOW_SECONDS = 600
FLOW_COOKIE = "casefile_oidc_flow"
# Userinfo answers (for access tokens without an email claim) are kept this long per token.
USERINFO_CACHE_SECONDS = 60.0
USERINFO_CACHE_SIZE = 1000
HTTP_TIMEOUT = httpx.Timeout(10.0, connect=5.0)


@dataclass(frozen=True)
class ProviderMetadata:
    """The parts of the discovery document Casefile uses."""

    issuer: str
    authorization_endpoint: str
    token_endpoint: str
    jwks_uri: str
    userinfo_endpoint: str | None
    token_auth_methods: tuple[str, ...]


@dataclass(frozen=True)
class Identity:
    """Who the provider says signed in."""

    subject: str
    email: str
    name: str | None
    expires_at: float


@dataclass(frozen=True)
class Flow:
    """A sign-in in progress: sealed into the flow cookie by /authorize, opened by /callback."""

    state: str
    code_verifier: str
    nonce: str
    redirect_uri: str
    expires_at: float

    def seal(self, seal: Callable[[str], str]) -> str:
        return seal(json.dumps(asdict(self), separators=(",", ":")))

    @classmethod
    def open(cls, sealed: str | None, unseal: Callable[[str], str]) -> Flow | None:
        """The flow in the cookie, or None if it is missing, forged, damaged or expired."""
        if not sealed:
            return None
        try:
            flow = cls(**json.loads(unseal(sealed)))
        except (RuntimeError, ValueError, TypeError, UnicodeError):
            return None
        return flow if flow.expires_at > time.time() else None


T = TypeVar("T")


class _Cached(Generic[T]):
    """One value fetched from the provider, shared by the process's requests. At most one fetch
    runs at a time and at most one starts per MIN_REFETCH_SECONDS; when a refetch fails, the
    previous value is used until the next attempt is due."""

    def __init__(self, clock: Callable[[], float]) -> None:
        self._clock = clock
        self._lock = asyncio.Lock()
        self._value: T | None = None
        self._fetched_at = 0.0
        self._attempted_at: float | None = None

    async def get(self, fetch: Callable[[], Awaitable[T]], *, max_age: float, force: bool = False) -> T:
        async with self._lock:
            now = self._clock()
            if self._value is not None and not force and now - self._fetched_at < max_age:
                return self._value
            if self._attempted_at is not None and now - self._attempted_at < MIN_REFETCH_SECONDS:
                if self._value is not None:
                    return self._value
                raise ProviderUnavailable()
            self._attempted_at = now
            try:
                value = await fetch()
            except ProviderUnavailable:
                if self._value is None:
                    raise
                log.warning("single sign-on: refetch failed, keeping the previous answer", exc_info=True)
                return self._value
            self._value, self._fetched_at = value, now
            return value


def _s256(verifier: str) -> str:
    """RFC 7636 S256 code challenge."""
    digest = hashlib.sha256(verifier.encode("ascii")).digest()
    return base64.urlsafe_b64encode(digest).rstrip(b"=").decode("ascii")


def provider_error(value: object) -> str | None:
    """An OAuth error code as the provider sent it, if it looks like one (RFC 6749 §4.1.2.1 allows
    printable ASCII without quote and backslash; we keep less), for repeating in our answer."""
    if not isinstance(value, str) or not value or len(value) > 64:
        return None
    return value if all(c.isascii() and (c.isalnum() or c in "_.-") for c in value) else None


class OidcClient:
    """The configured OpenID provider, as seen from one Casefile process."""

    def __init__(self, settings: Settings, *, clock: Callable[[], float] = time.monotonic) -> None:
        assert settings.oidc_issuer and settings.oidc_client_id and settings.oidc_client_secret
        self.issuer = settings.oidc_issuer
        self.client_id = settings.oidc_client_id
        self._client_secret = settings.oidc_client_secret
        self.audience = settings.oidc_audience or settings.oidc_client_id
        scopes = settings.oidc_scopes.split()
        self.scopes = " ".join(scopes if "openid" in scopes else ["openid", *scopes])
        self.redirect_uri = settings.oidc_redirect_uri
        self._cache_seconds = settings.oidc_jwks_cache_seconds
        self._http = httpx.AsyncClient(timeout=HTTP_TIMEOUT, follow_redirects=False)
        self._metadata: _Cached[ProviderMetadata] = _Cached(clock)
        self._jwks: _Cached[list[Key]] = _Cached(clock)
        self._clock = clock
        self._userinfo: dict[str, tuple[float, dict[str, Any]]] = {}

    @classmethod
    def from_settings(cls, settings: Settings) -> OidcClient | None:
        """The client when single sign-on is configured (issuer, client id and secret), else None."""
        if settings.oidc_issuer and settings.oidc_client_id and settings.oidc_client_secret:
            if not settings.oidc_redirect_uri:
                # Derived from the request's Host header, which the client chooses: safe only with
                # a provider that matches redirect URIs exactly (as it should).
                log.warning("single sign-on: set CASEFILE_OIDC_REDIRECT_URI in production")
            return cls(settings)
        return None

    async def aclose(self) -> None:
        await self._http.aclose()

    # --- talking to the provider ---------------------------------------------------------------

    async def _get_json(self, url: str, what: str, headers: dict[str, str] | None = None) -> Any:
        try:
            response = await self._http.get(url, headers={"Accept": "application/json", **(headers or {})})
        except httpx.HTTPError as exc:
            log.warning("single sign-on: %s at %s failed: %r", what, url, exc)
            raise ProviderUnavailable() from exc
        if response.status_code != 200:
            log.warning("single sign-on: %s at %s answered %s", what, url, response.status_code)
            raise provider_answered(what, response.status_code)
        try:
            return response.json()
        except ValueError as exc:
            raise ProviderUnavailable(f"The single sign-on provider's {what} is not JSON") from exc

    async def metadata(self) -> ProviderMetadata:
        return await self._metadata.get(self._discover, max_age=max(self._cache_seconds, 3600))

    async def _discover(self) -> ProviderMetadata:
        url = self.issuer.rstrip("/") + "/.well-known/openid-configuration"
        doc = await self._get_json(url, "discovery document")
        if not isinstance(doc, dict):
            raise ProviderUnavailable("The single sign-on provider's discovery document is not an object")
        # OpenID Connect Discovery §4.3: the document must name the issuer we asked (a trailing
        # slash in the setting is forgiven); tokens are then checked against its exact spelling.
        issuer = doc.get("issuer")
        if not isinstance(issuer, str) or issuer.rstrip("/") != self.issuer.rstrip("/"):
            log.error("single sign-on: discovery names issuer %r, configured is %r", issuer, self.issuer)
            raise ProviderUnavailable("The single sign-on provider's discovery document names another issuer")
        missing = [k for k in ("authorization_endpoint", "token_endpoint", "jwks_uri") if not doc.get(k)]
        if missing:
            raise ProviderUnavailable(f"The single sign-on provider's discovery document lacks {missing[0]}")
        methods = doc.get("token_endpoint_auth_methods_supported") or ["client_secret_basic"]
        return ProviderMetadata(
            issuer=issuer,
            authorization_endpoint=str(doc["authorization_endpoint"]),
            token_endpoint=str(doc["token_endpoint"]),
            jwks_uri=str(doc["jwks_uri"]),
            userinfo_endpoint=str(doc["userinfo_endpoint"]) if doc.get("userinfo_endpoint") else None,
            token_auth_methods=tuple(str(m) for m in methods),
        )

    async def _signing_key(self, kid: str | None, alg: str) -> Key | None:
        metadata = await self.metadata()

        async def fetch() -> list[Key]:
            return public_keys(await self._get_json(metadata.jwks_uri, "key set (JWKS)"))

        key = pick_key(await self._jwks.get(fetch, max_age=self._cache_seconds), kid, alg)
        if key is None:
            # Perhaps the provider rotated its keys since we fetched them: look again (throttled).
            key = pick_key(await self._jwks.get(fetch, max_age=self._cache_seconds, force=True), kid, alg)
        return key

    # --- tokens ----------------------------------------------------------------------------------

    def may_have_issued(self, token: str) -> bool:
        """Whether the token claims to come from the provider (nothing checked yet). Tokens that
        do not are refused without asking the provider anything."""
        parts = unverified(token)
        return parts is not None and str(parts[1].get("iss", "")).rstrip("/") == self.issuer.rstrip("/")

    async def _verify(self, token: str, audience: str) -> dict[str, Any] | None:
        """The claims of a JWT signed by one of the provider's keys, issued by it for `audience`
        and current; None otherwise."""
        parts = unverified(token)
        if parts is None:
            return None
        header, _ = parts
        alg, kid = header.get("alg"), header.get("kid")
        if alg not in ASYMMETRIC_ALGORITHMS or not (kid is None or isinstance(kid, str)):
            return None
        key = await self._signing_key(kid, alg)
        if key is None:
            return None
        issuer = (await self.metadata()).issuer
        registry = jwt.JWTClaimsRegistry(
            leeway=LEEWAY_SECONDS,
            iss={"essential": True, "value": issuer},
            aud={"essential": True, "value": audience},
            sub={"essential": True},
            exp={"essential": True},
        )
        try:
            # strict_check_header off: providers add header fields of their own (x5t, ...).
            jws_registry = JWSRegistry(algorithms=[alg], strict_check_header=False)
            decoded = jwt.decode(token, key, algorithms=[alg], registry=jws_registry)
            registry.validate(decoded.claims)
        except (JoseError, ValueError, TypeError):
            return None
        return decoded.claims

    async def verify_access_token(self, token: str) -> Identity:
        """The identity behind one of the provider's JWT access tokens; 401 AUTH_001 if it is not
        valid for this API, 503 if the provider is needed and does not answer."""
        claims = await self._verify(token, self.audience)
        if claims is None:
            raise invalid_token()
        email = verified_email(claims) if "email" in claims else await self._userinfo_email(token, claims)
        if email is None:
            raise invalid_token()
        return Identity(
            subject=str(claims["sub"]),
            email=email,
            name=claims.get("name") if isinstance(claims.get("name"), str) else None,
            expires_at=float(claims["exp"]),
        )

    async def _userinfo_email(self, token: str, claims: dict[str, Any]) -> str | None:
        """The email of an access token that carries none, from the userinfo endpoint (kept for
        a minute per token, so a client's burst of requests asks once)."""
        metadata = await self.metadata()
        if metadata.userinfo_endpoint is None:
            return None
        now = self._clock()
        cache_key = hashlib.sha256(token.encode()).hexdigest()
        cached = self._userinfo.get(cache_key)
        if cached is None or cached[0] <= now:
            info = await self._fetch_userinfo(metadata.userinfo_endpoint, token)
            if len(self._userinfo) >= USERINFO_CACHE_SIZE:
                self._userinfo = {k: v for k, v in self._userinfo.items() if v[0] > now}
                if len(self._userinfo) >= USERINFO_CACHE_SIZE:
                    self._userinfo.clear()
            cached = (now + USERINFO_CACHE_SECONDS, info)
            self._userinfo[cache_key] = cached
        info = cached[1]
        # OpenID Connect Core §5.3.2: the answer is about the token's subject, or it is ignored.
        return verified_email(info) if info.get("sub") == claims.get("sub") else None

    async def _fetch_userinfo(self, url: str, access_token: str) -> dict[str, Any]:
        try:
            response = await self._http.get(
                url, headers={"Authorization": f"Bearer {access_token}", "Accept": "application/json"}
            )
        except httpx.HTTPError as exc:
            log.warning("single sign-on: userinfo at %s failed: %r", url, exc)
            raise ProviderUnavailable() from exc
        if response.status_code in (401, 403):
            return {}  # the provider does not accept this token there: no email from it
        if response.status_code != 200:
            raise provider_answered("userinfo", response.status_code)
        try:
            info = response.json()
        except ValueError as exc:
            raise ProviderUnavailable("The single sign-on provider's userinfo answer is not JSON") from exc
        return info if isinstance(info, dict) else {}

    # --- the authorization-code flow -------------------------------------------------------------

    async def begin(self, redirect_uri: str) -> tuple[str, Flow]:
        """The provider's authorization URL to send the browser to, and the flow to remember."""
        metadata = await self.metadata()
        flow = Flow(
            state=secrets.token_urlsafe(32),
            code_verifier=secrets.token_urlsafe(64),  # 86 characters: within RFC 7636's 43-128
            nonce=secrets.token_urlsafe(32),
            redirect_uri=redirect_uri,
            expires_at=time.time() + FLOW_SECONDS,
        )
        query = urlencode(
            {
                "response_type": "code",
                "client_id": self.client_id,
                "redirect_uri": redirect_uri,
                "scope": self.scopes,
                "state": flow.state,
                "nonce": flow.nonce,
                "code_challenge": _s256(flow.code_verifier),
                "code_challenge_method": "S256",
            }
        )
        separator = "&" if "?" in metadata.authorization_endpoint else "?"
        return f"{metadata.authorization_endpoint}{separator}{query}", flow

    async def finish(self, flow: Flow, code: str) -> Identity:
        """Exchange the authorization code and check the ID token it brings."""
        metadata = await self.metadata()
        form = {
            "grant_type": "authorization_code",
            "code": code,
            "redirect_uri": flow.redirect_uri,
            "code_verifier": flow.code_verifier,
        }
        headers = {"Accept": "application/json"}
        secret = self._client_secret.get_secret_value()
        if "client_secret_basic" in metadata.token_auth_methods or (
            "client_secret_post" not in metadata.token_auth_methods
        ):
            # RFC 6749 §2.3.1: both parts form-encoded before the Basic encoding.
            pair = f"{quote(self.client_id, safe='')}:{quote(secret, safe='')}"
            headers["Authorization"] = "Basic " + base64.b64encode(pair.encode()).decode("ascii")
        else:
            form |= {"client_id": self.client_id, "client_secret": secret}
        try:
            response = await self._http.post(metadata.token_endpoint, data=form, headers=headers)
        except httpx.HTTPError as exc:
            log.warning("single sign-on: token request to %s failed: %r", metadata.token_endpoint, exc)
            raise ProviderUnavailable() from exc
        if response.status_code >= 500:
            raise provider_answered("token endpoint", response.status_code)
        try:
            answer = response.json()
        except ValueError:
            answer = None
        if response.status_code != 200:
            sent = answer.get("error") if isinstance(answer, dict) else None
            error = provider_error(sent) or f"HTTP {response.status_code}"
            # invalid_client means our secret is wrong: the operator needs to see it.
            log.warning("single sign-on: the token endpoint refused the code: %s", error)
            raise sso_failed(f"the provider refused the authorization code ({error})")
        if not isinstance(answer, dict):
            raise ProviderUnavailable("The single sign-on provider's token answer is not JSON")
        id_token = answer.get("id_token")
        claims = await self._verify(id_token, self.client_id) if isinstance(id_token, str) else None
        if claims is None:
            raise sso_failed("the provider's ID token is missing or not valid")
        if not secrets.compare_digest(str(claims.get("nonce", "")), flow.nonce):
            raise sso_failed("the ID token's nonce does not match")
        audiences = claims["aud"] if isinstance(claims["aud"], list) else [claims["aud"]]
        if len(audiences) > 1 and claims.get("azp") != self.client_id:
            raise sso_failed("the ID token was issued to another client")
        email = verified_email(claims) if "email" in claims else None
        access_token = answer.get("access_token")
        if email is None and "email" not in claims and isinstance(access_token, str):
            email = await self._userinfo_email(access_token, claims)
        if email is None:
            raise sso_failed("the provider gave no verified email address")
        return Identity(
            subject=str(claims["sub"]),
            email=email,
            name=claims.get("name") if isinstance(claims.get("name"), str) else None,
            expires_at=float(claims["exp"]),
        )
