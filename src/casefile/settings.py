"""All configuration: one Settings object read from CASEFILE_* environment variables or `.env`."""

from __future__ import annotations

import base64
import logging
import os
import re
import secrets
from collections.abc import Callable
from functools import cached_property
from pathlib import Path
from typing import TYPE_CHECKING, Literal

from pydantic import Field, SecretStr, field_validator
from pydantic_settings import BaseSettings, SettingsConfigDict

if TYPE_CHECKING:
    from casefile.storage.s3 import S3Config

log = logging.getLogger("casefile")


POSTGRES_POOL_SIZE = 20
SQLITE_READ_POOL_SIZE = 10

DATABASE_SCHEMES = ("postgresql", "postgres", "postgresql+asyncpg", "sqlite", "sqlite+aiosqlite")
SUPPORTED_DATABASES = (
    "Casefile supports PostgreSQL (postgresql://user:password@host:5432/casefile) and SQLite "
    "(sqlite:////absolute/path/casefile.db, or leave CASEFILE_DATABASE_URL unset for SQLite in the data dir)"
)
MIN_KEY_LENGTH = 32
_BUCKET = re.compile(r"^[a-z0-9][a-z0-9.-]{1,61}[a-z0-9]$")
LOG_LEVELS = ("DEBUG", "INFO", "WARNING", "ERROR", "CRITICAL")


class Settings(BaseSettings):
    model_config = SettingsConfigDict(env_prefix="CASEFILE_", env_file=".env", extra="ignore")

    data_dir: Path = Path("casefile-data")
    database_url: str | None = Field(
        default=None,
        description="SQLAlchemy URL; default is SQLite in the data dir. postgresql:// is accepted.",
    )
    redis_url: str | None = None
    redis_key_prefix: str = Field(
        default="casefile", description="Namespaces this deployment's keys in a shared Redis"
    )

    admin_email: str | None = None
    admin_password: SecretStr | None = None

    jwt_secret: SecretStr | None = Field(
        default=None, description="HS256 key; generated into the data dir if unset"
    )
    jwt_ttl_seconds: int = Field(default=900, ge=30, le=86_400)
    refresh_ttl_seconds: int = Field(default=30 * 86_400, ge=60)
    # The web app's sign-in (docs/web-app.md#sessions): a session cookie ends after this long
    # without a request, and in any case this long after sign-in.
    web_idle_seconds: int = Field(default=30 * 60, ge=60, le=86_400)
    web_session_max_seconds: int = Field(default=12 * 3600, ge=60, le=30 * 86_400)
    jwt_issuer: str = "casefile"
    jwt_audience: str = "casefile-api"

    secret_key: SecretStr | None = Field(
        default=None, description="Encrypts webhook secrets at rest; generated into the data dir if unset"
    )
    audit_signing_key: SecretStr | None = Field(
        default=None,
        description="Signs the audit log's tree heads: base64 of 32 random bytes (an Ed25519 key); "
        "generated into the data dir if unset",
    )
    audit_sequence_interval_seconds: float = Field(
        default=0.25,
        gt=0,
        le=60,
        description="How often the sequencer places new audit entries in the log and signs a tree head",
    )
    audit_head_event_seconds: float = Field(
        default=60,
        ge=0,
        le=86400,
        description="At most one `audit.tree_head` event this often (0: one per signed head)",
    )
    webhook_allow_private_urls: bool = False
    webhook_timeout_seconds: float = Field(default=30, gt=0, le=300)
    webhook_disable_after_seconds: float = Field(
        default=86_400, gt=0, description="A webhook failing for this long is disabled (its circuit)"
    )
    webhook_disable_after_failures: int = Field(
        default=50, ge=1, description="A webhook with this many failed attempts in a row is disabled"
    )
    worker_enabled: bool = Field(default=True, description="Run the delivery worker inside `casefile serve`")
    worker_concurrency: int = Field(default=64, ge=1, le=1000)
    worker_per_webhook_concurrency: int = Field(default=8, ge=1, le=1000)
    worker_poll_seconds: float = Field(default=1.0, gt=0, le=60)
    worker_lease_margin_seconds: float = Field(
        default=30, gt=0, le=3600, description="A claim's lease is the webhook time-out plus this"
    )

    rate_limit_user: str = Field(default="1000/hour", description="Per user, for JWT callers")
    rate_limit_api_key: str = Field(default="5000/hour", description="Per API key")
    rate_limit_admin: str = Field(default="100/hour", description="Per administrator, for /admin/*")
    rate_limit_login: str = Field(
        default="20/minute", description="Per client IP, for /auth/login and /auth/refresh"
    )

    require_https: bool = Field(
        default=False, description="Refuse plain-HTTP requests (except loopback and /healthz)"
    )

    oidc_issuer: str | None = Field(default=None, description="OpenID provider; enables single sign-on")
    oidc_client_id: str | None = None
    oidc_client_secret: SecretStr | None = None
    oidc_audience: str | None = Field(
        default=None, description="Expected `aud` of the provider's access tokens; default: the client id"
    )
    oidc_redirect_uri: str | None = Field(
        default=None, description="The callback URL registered at the provider; default: derived"
    )
    oidc_scopes: str = "openid email profile"
    oidc_provider_name: str | None = Field(
        default=None,
        max_length=60,
        description="The name on the web app's \"Sign in with …\" button; default: the issuer's host",
    )
    oidc_jwks_cache_seconds: float = Field(default=300, ge=0, le=86_400)

    pg_dump_command: str = Field(default="pg_dump", description="Used by `casefile backup` on PostgreSQL")
    pg_restore_command: str = Field(default="pg_restore", description="Used by `casefile restore`")

    ai_enabled: bool = Field(
        default=True, description="Process uploaded documents (the default of `ai.enabled` in /admin/config)"
    )
    ai_workers: int = Field(default=1, ge=1, le=32, description="Processes for AI work, each using one core")
    ai_memory_limit_mb: int = Field(
        default=2048, ge=512, le=1_048_576, description="Address space an AI process may use (RLIMIT_AS)"
    )
    ai_job_timeout_seconds: float = Field(default=600, gt=0, le=86_400, description="Longest one job may run")

    default_case_access: Literal["firm", "restricted"] = Field(
        default="firm", description="The access mode of a new case that does not name one"
    )

    billing_currency: str = Field(default="USD", description="ISO 4217 currency of rates and invoices")
    billing_increment_minutes: int = Field(
        default=6, ge=1, le=60, description="Time entries are billed in this increment, rounded up"
    )
    billing_tax_percent: str = Field(default="0", description="Tax on invoices, a decimal percentage")
    billing_payment_days: int = Field(
        default=30, ge=0, le=365, description="An invoice is due this long after"
    )
    billing_firm_name: str = Field(default="Casefile Law", description="On invoices")
    billing_firm_id: str = Field(default="00-0000000", description="LEDES LAW_FIRM_ID (the firm's tax id)")
    billing_invoice_prefix: str = Field(
        default="INV-", max_length=20, description="Before the invoice number"
    )

    max_json_body_bytes: int = Field(default=1024 * 1024, ge=1024)
    max_upload_bytes: int = Field(default=50 * 1024 * 1024, ge=1, description="Largest accepted document")
    db_pool_size: int | None = Field(
        default=None,
        ge=1,
        le=200,
        description="Connections per process (SQLite: its read engine); default 20 PostgreSQL, 10 SQLite",
    )
    sqlite_pool_size: int = Field(
        default=2, ge=1, le=200, description="Connections of the SQLite write engine (reads use db_pool_size)"
    )
    # Load shedding (casefile.shedding, docs/operations.md#load-shedding): past these, a request
    # is answered 503 OVERLOADED with Retry-After at once instead of queueing for seconds.
    max_concurrent_requests: int = Field(
        default=16, ge=0, description="Requests this process answers at once; the rest queue (0: no limit)"
    )
    max_queued_requests: int = Field(
        default=16, ge=0, description="Requests that may wait for a turn; one more is answered 503 at once"
    )
    max_queue_wait_seconds: float = Field(
        default=5.0, gt=0, le=600, description="A request that waited this long for a turn is answered 503"
    )
    overload_retry_after_seconds: int = Field(
        default=1, ge=1, le=3600, description="The Retry-After of a 503 OVERLOADED answer"
    )
    log_level: str = "INFO"
    log_format: Literal["text", "json"] = Field(
        default="text", description="`json`: one JSON object per log line (docs/operations.md#logs)"
    )
    cors_origins: str = Field(
        default="",
        description="Comma-separated origins (`https://app.example.com`) whose browser pages may call "
        "the API; none by default (CORS off)",
    )
    metrics_token: SecretStr | None = Field(
        default=None, description="When set, `GET /metrics` needs it as a bearer token"
    )
    # Document content (docs/deployment.md#object-storage): files in the data dir unless an
    # S3-compatible bucket is named; the rest are read only with one.
    storage_url: str | None = Field(
        default=None, description="s3://bucket/prefix: content in an S3-compatible store; unset: the data dir"
    )
    storage_endpoint: str | None = Field(
        default=None, description="The store's URL when not AWS (MinIO: http://host:9000)"
    )
    storage_region: str | None = Field(default=None, description="The bucket's region (AWS_REGION if unset)")
    storage_access_key_id: str | None = Field(
        default=None, description="Unset: AWS_* variables, web identity or instance credentials"
    )
    storage_secret_access_key: SecretStr | None = None
    storage_session_token: SecretStr | None = None
    storage_server_side_encryption: Literal["AES256", "aws:kms", "aws:kms:dsse"] | None = Field(
        default=None, description="Asked of the store for every object it writes"
    )
    storage_sse_kms_key_id: str | None = Field(default=None, description="The KMS key of aws:kms encryption")
    storage_part_mb: int = Field(
        default=8,
        ge=5,
        le=512,
        description="Multipart upload part size; memory per upload is about parts x (concurrency + 1)",
    )
    storage_upload_concurrency: int = Field(
        default=4, ge=1, le=32, description="Parts of one upload in flight"
    )

    @field_validator("rate_limit_user", "rate_limit_api_key", "rate_limit_admin", "rate_limit_login")
    @classmethod
    def _rate_limit_notation(cls, value: str) -> str:
        from limits import parse

        try:
            parse(value)
        except ValueError as exc:
            raise ValueError(f"not a rate limit: {value!r} (expected e.g. '1000/hour')") from exc
        return value

    @field_validator("database_url")
    @classmethod
    def _database_url(cls, value: str | None) -> str | None:
        if not value:
            return None
        scheme = value.partition("://")[0] if "://" in value else ""
        if scheme not in DATABASE_SCHEMES:
            what = f"unsupported database {scheme!r}" if scheme else "not a database URL"
            raise ValueError(f"{what}; {SUPPORTED_DATABASES}")
        from sqlalchemy.engine import make_url  # the parser the engine will use
        from sqlalchemy.exc import ArgumentError

        try:
            url = make_url(value)
            url.port  # noqa: B018 (parsing the port is the check)
        except (ArgumentError, ValueError) as exc:
            raise ValueError(f"not a valid database URL ({exc}); {SUPPORTED_DATABASES}") from None
        if scheme.startswith("postgres") and not url.database:
            raise ValueError(f"no database name in the URL; {SUPPORTED_DATABASES}")
        return value

    @field_validator("jwt_secret", "secret_key")
    @classmethod
    def _long_enough(cls, value: SecretStr | None) -> SecretStr | None:
        if value is not None and len(value.get_secret_value()) < MIN_KEY_LENGTH:
            raise ValueError(
                f"too short (at least {MIN_KEY_LENGTH} characters): make one with "
                "`python3 -c 'import secrets; print(secrets.token_urlsafe(48))'`, or unset it to have "
                "one generated into the data dir"
            )
        return value

    @field_validator("redis_url")
    @classmethod
    def _redis_url(cls, value: str | None) -> str | None:
        if value and not value.startswith(("redis://", "rediss://", "unix://")):
            raise ValueError("not a Redis URL: use redis://host:6379/0 (rediss:// for TLS, unix:///path)")
        return value or None

    @field_validator("storage_url")
    @classmethod
    def _storage_url(cls, value: str | None) -> str | None:
        if not value:
            return None
        bucket = value.removeprefix("s3://").partition("/")[0]
        if not value.startswith("s3://") or not _BUCKET.match(bucket):
            raise ValueError(
                "not an object storage URL: use s3://bucket or s3://bucket/prefix (the bucket's "
                "name: 3-63 lower-case letters, digits, dots and hyphens); unset it for files in the data dir"
            )
        return value

    @field_validator("log_level")
    @classmethod
    def _log_level(cls, value: str) -> str:
        if value.upper() not in LOG_LEVELS:
            raise ValueError(f"not a log level: use one of {', '.join(LOG_LEVELS)}")
        return value.upper()

    @property
    def resolved_database_url(self) -> str:
        """The async SQLAlchemy URL, accepting the plain `postgresql://` and `sqlite:///` forms."""
        url = self.database_url
        if not url:
            return f"sqlite+aiosqlite:///{(self.data_dir / 'casefile.db').resolve()}"
        for plain, driver in (
            ("postgresql://", "postgresql+asyncpg://"),
            ("postgres://", "postgresql+asyncpg://"),
            ("sqlite://", "sqlite+aiosqlite://"),
        ):
            if url.startswith(plain):
                return driver + url[len(plain) :]
        return url

    @property
    def cors_origin_list(self) -> list[str]:
        return [origin.strip().rstrip("/") for origin in self.cors_origins.split(",") if origin.strip()]

    @property
    def is_sqlite(self) -> bool:
        return self.resolved_database_url.startswith("sqlite")

    @property
    def pool_size(self) -> int:
        """`db_pool_size`, or its default for the database. Measured at 16 concurrent reads
        (docs/research/bench-notes-2026-11.md, "the pool stopped churning"): PostgreSQL answered 5-19 % more
        with 20 connections than with 10; SQLite's inline reads 3-7 % fewer."""
        if self.db_pool_size is not None:
            return self.db_pool_size
        return SQLITE_READ_POOL_SIZE if self.is_sqlite else POSTGRES_POOL_SIZE

    @cached_property
    def jwt_key(self) -> str:
        """The configured signing key, or one generated once and kept (mode 0600) in the data dir."""
        if self.jwt_secret is not None:
            return self.jwt_secret.get_secret_value()
        return _read_or_create_secret(self.data_dir / "jwt-secret")

    @cached_property
    def encryption_key(self) -> str:
        if self.secret_key is not None:
            return self.secret_key.get_secret_value()
        return _read_or_create_secret(self.data_dir / "secret-key")

    @cached_property
    def audit_signing_seed(self) -> str:
        """The tree heads' Ed25519 key (base64 of 32 bytes): configured, or generated once and kept
        (mode 0600) in the data dir."""
        if self.audit_signing_key is not None:
            return self.audit_signing_key.get_secret_value()
        return _read_or_create_secret(
            self.data_dir / "audit-signing-key",
            lambda: base64.urlsafe_b64encode(secrets.token_bytes(32)).decode("ascii"),
        )

    @property
    def content_dir(self) -> Path:
        return self.data_dir / "content"

    @property
    def s3_storage(self) -> S3Config | None:
        """Where content is stored when it is not the data dir (`storage_url`)."""
        if self.storage_url is None:
            return None
        from casefile.storage.s3 import S3Config  # obstore is loaded only where it is used

        bucket, _, prefix = self.storage_url.removeprefix("s3://").partition("/")
        return S3Config(
            bucket=bucket,
            prefix=prefix.strip("/"),
            endpoint=self.storage_endpoint,
            region=self.storage_region,
            access_key_id=self.storage_access_key_id,
            secret_access_key=_secret(self.storage_secret_access_key),
            session_token=_secret(self.storage_session_token),
            server_side_encryption=self.storage_server_side_encryption,
            sse_kms_key_id=self.storage_sse_kms_key_id,
            part_bytes=self.storage_part_mb * 1024 * 1024,
            concurrency=self.storage_upload_concurrency,
        )

    @property
    def upload_temp_dir(self) -> Path:
        """Uploads in progress: in the data dir, so the finished file is renamed, not copied."""
        return self.data_dir / "tmp"

    def ensure_data_dir(self) -> None:
        make_private_dir(self.data_dir)


# The data dir holds password hashes, document text and keys: only the service's user may read it.
PRIVATE_DIR_MODE = 0o700
PRIVATE_UMASK = 0o077


def _secret(value: SecretStr | None) -> str | None:
    return value.get_secret_value() if value is not None else None


def make_private_dir(path: Path) -> None:
    """Make `path` (the data dir) private, and make this process create everything private from
    now on, whatever umask it was started with: the database and its -wal/-shm files, content,
    keys, temporary files, and the same in its child processes (they inherit the umask).

    The one place that sets the modes: every command and every server opens the data dir
    through `Settings.ensure_data_dir` before it writes to it."""
    os.umask(os.umask(PRIVATE_UMASK) | PRIVATE_UMASK)  # keep any stricter bits already set
    path.mkdir(mode=PRIVATE_DIR_MODE, parents=True, exist_ok=True)
    try:
        path.chmod(PRIVATE_DIR_MODE)  # also a data dir made before this rule
    except PermissionError:  # someone else's directory: we may write in it, not change it
        log.warning("cannot make the data dir %s private (mode 0700): it is not ours", path)


def _read_or_create_secret(path: Path, make: Callable[[], str] = lambda: secrets.token_urlsafe(48)) -> str:
    if path.exists():
        return path.read_text().strip()
    make_private_dir(path.parent)
    value = make()
    # O_EXCL: when two processes start together, exactly one writes and both then read the same key.
    try:
        fd = os.open(path, os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o600)
    except FileExistsError:
        return path.read_text().strip()
    with open(fd, "w") as handle:
        handle.write(value)
    return value
