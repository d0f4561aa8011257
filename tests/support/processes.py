"""`casefile serve` and `casefile worker` as child processes, on a test's settings."""

from __future__ import annotations

import os
import signal
import ssl
import subprocess
import sys
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any

import httpx

from casefile.settings import Settings
from tests.support import plain
from tests.support.servers import ADMIN_EMAIL, ADMIN_PASSWORD, free_port, shared_settings
from tests.support.waiting import wait_until

CASEFILE = str(Path(sys.executable).with_name("casefile"))


def settings_env(settings: Settings, **extra: Any) -> dict[str, str]:
    env = {k: v for k, v in os.environ.items() if not k.startswith("CASEFILE_")}
    for name in (
        "data_dir",
        "database_url",
        "admin_email",
        "webhook_allow_private_urls",
        "webhook_timeout_seconds",
        "worker_enabled",
        "worker_poll_seconds",
        "worker_lease_margin_seconds",
        "redis_url",
        "redis_key_prefix",
        "rate_limit_user",
        "rate_limit_api_key",
        "rate_limit_admin",
        "rate_limit_login",
        "ai_enabled",
        "ai_workers",
        "ai_job_timeout_seconds",
        "db_pool_size",
        "storage_url",
        "storage_endpoint",
        "storage_region",
        "storage_access_key_id",
    ):
        value = getattr(settings, name)
        if value is not None:
            env[f"CASEFILE_{name.upper()}"] = str(value)
    if settings.storage_secret_access_key is not None:
        env["CASEFILE_STORAGE_SECRET_ACCESS_KEY"] = settings.storage_secret_access_key.get_secret_value()
    if settings.admin_password is not None:
        env["CASEFILE_ADMIN_PASSWORD"] = settings.admin_password.get_secret_value()
    env["CASEFILE_SECRET_KEY"] = settings.encryption_key  # the same key as the in-process servers
    env["CASEFILE_JWT_SECRET"] = settings.jwt_key
    env.update({f"CASEFILE_{k.upper()}": str(v) for k, v in extra.items()})
    return env


class Process:
    """`casefile serve` or `casefile worker` as a child process, on the given settings."""

    def __init__(
        self,
        command: str,
        settings: Settings,
        log: Path,
        *,
        options: tuple[str, ...] = (),
        host: str = "127.0.0.1",
        tls: ssl.SSLContext | None = None,
        **extra: Any,
    ) -> None:
        """`options` are more command-line options; with `tls` (the client's trust), the server
        is reached over HTTPS."""
        self.port = free_port() if command == "serve" else None
        self.host = host
        self.tls = tls
        self.scheme = "https" if tls else "http"
        args = [CASEFILE, command] + (["--host", host, "--port", str(self.port)] if self.port else [])
        args += list(options)
        self.log = log
        with log.open("ab") as output:  # the child keeps its own copy of the descriptor
            self.proc = subprocess.Popen(
                args, env=settings_env(settings, **extra), stdout=output, stderr=subprocess.STDOUT
            )
        if self.port:
            # Two minutes: a start takes 30-60 s on a loaded two-core machine (imports, migrations).
            wait_until(self._healthy, timeout=120, interval=0.2)

    @property
    def root(self) -> str:
        return f"{self.scheme}://{self.host}:{self.port}"

    @property
    def base(self) -> str:
        return f"{self.root}/api/v1"

    def _healthy(self) -> bool:
        if self.proc.poll() is not None:
            raise RuntimeError(f"casefile exited: {self.log.read_text()[-3000:]}")
        try:
            return plain.get(f"{self.root}/healthz", timeout=1, verify=self.tls or True).status_code == 200
        except httpx.HTTPError:
            return False

    def kill(self) -> None:
        self.proc.send_signal(signal.SIGKILL)
        self.proc.wait(timeout=10)

    def stop(self) -> None:
        if self.proc.poll() is None:
            self.proc.terminate()
            try:
                self.proc.wait(timeout=30)
            except subprocess.TimeoutExpired:
                self.kill()


@contextmanager
def several_api_processes(
    database: tuple[Path, str | None], tmp_path: Path, workers: int = 4
) -> Iterator[tuple[str, str]]:
    """`casefile serve --workers N` on the test's fresh database (PostgreSQL: processes share it)
    with Redis, its worker off: the API's base URL and an administrator's token."""
    settings = shared_settings(database)
    server = Process("serve", settings, tmp_path / "serve.log", options=("--workers", str(workers)))
    try:
        with httpx.Client(base_url=server.base) as c:
            answer = c.post("/auth/login", json={"email": ADMIN_EMAIL, "password": ADMIN_PASSWORD})
            assert answer.status_code == 200, answer.text
        yield server.base, answer.json()["data"]["token"]
    finally:
        server.stop()
