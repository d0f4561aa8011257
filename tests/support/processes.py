"""Helpers for webhook tests: a scriptable receiver over real HTTP, and casefile subprocesses."""

from __future__ import annotations

import http.server
import json
import os
import signal
import ssl
import subprocess
import sys
import threading
import time
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import httpx

from casefile.settings import Settings
from tests.conftest import free_port

CASEFILE = str(Path(sys.executable).with_name("casefile"))


def wait_until(predicate: Callable[[], Any], timeout: float = 15.0, interval: float = 0.05) -> Any:
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        value = predicate()
        if value:
            return value
        time.sleep(interval)
    raise AssertionError(f"condition not met within {timeout} s")


@dataclass
class Received:
    headers: dict[str, str]
    body: bytes
    at: float

    def json(self) -> Any:
        return json.loads(self.body)


@dataclass
class Receiver:
    """Answers each request by the next step of `script` (the last repeats): a status code, or
    ("hang", seconds), or ("body", size) for a 200 with a large body, or ("redirect", url)."""

    url: str = ""
    script: list[Any] = field(default_factory=lambda: [200])
    requests: list[Received] = field(default_factory=list)
    lock: threading.Lock = field(default_factory=threading.Lock)

    def received(self, event: str | None = None) -> list[Received]:
        with self.lock:
            return [r for r in self.requests if event is None or r.json()["event"] == event]

    def wait_for(self, count: int = 1, event: str | None = None, timeout: float = 15) -> list[Received]:
        return wait_until(lambda: (found := self.received(event)) and len(found) >= count and found, timeout)


@contextmanager
def receiver_server() -> Iterator[Receiver]:
    receiver = Receiver()

    class Handler(http.server.BaseHTTPRequestHandler):
        def do_POST(self) -> None:
            body = self.rfile.read(int(self.headers.get("Content-Length") or 0))
            with receiver.lock:
                receiver.requests.append(
                    Received({k.lower(): v for k, v in self.headers.items()}, body, time.time())
                )
                step = receiver.script[min(len(receiver.requests), len(receiver.script)) - 1]
            payload = b'{"ok": true}'
            if isinstance(step, tuple) and step[0] == "hang":
                time.sleep(step[1])
                step = 200
            elif isinstance(step, tuple) and step[0] == "body":
                payload, step = b"x" * step[1], 200
            elif isinstance(step, tuple) and step[0] == "redirect":
                self.send_response(307)
                self.send_header("Location", step[1])
                self.end_headers()
                return
            try:
                self.send_response(step)
                self.send_header("Content-Type", "application/json")
                self.send_header("Content-Length", str(len(payload)))
                self.end_headers()
                self.wfile.write(payload)
            except (BrokenPipeError, ConnectionResetError):
                pass  # the sender gave up (a time-out test)

        def log_message(self, *args: Any) -> None:
            pass

    httpd = http.server.ThreadingHTTPServer(("127.0.0.1", 0), Handler)
    httpd.daemon_threads = True
    httpd.block_on_close = False  # a handler told to hang must not hold up the test's end
    receiver.url = f"http://127.0.0.1:{httpd.server_address[1]}/hook"
    thread = threading.Thread(target=httpd.serve_forever, daemon=True)
    thread.start()
    try:
        yield receiver
    finally:
        httpd.shutdown()
        httpd.server_close()


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
    ):
        value = getattr(settings, name)
        if value is not None:
            env[f"CASEFILE_{name.upper()}"] = str(value)
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
            wait_until(self._healthy, timeout=60, interval=0.2)

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
            return httpx.get(f"{self.root}/healthz", timeout=1, verify=self.tls or True).status_code == 200
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
