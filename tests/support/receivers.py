"""A webhook receiver over real HTTP on loopback, answering as the test scripts it."""

from __future__ import annotations

import http.server
import json
import threading
import time
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass, field
from typing import Any

from tests.support.waiting import wait_until


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
    ("hang", seconds), or ("body", size) for a 200 with a large body, or ("redirect", url), or
    ("retry-after", status, value) for that status with that `Retry-After`."""

    url: str = ""
    script: list[Any] = field(default_factory=lambda: [200])
    requests: list[Received] = field(default_factory=list)
    # Requests whose body ended before its Content-Length (the sender died mid-send): a real
    # receiver cannot verify them and answers nothing, so they are counted here, not received.
    cut: int = 0
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
            declared = int(self.headers.get("Content-Length") or 0)
            body = self.rfile.read(declared)
            if len(body) < declared:
                with receiver.lock:
                    receiver.cut += 1
                return
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
            elif isinstance(step, tuple) and step[0] == "retry-after":
                self.send_response(step[1])
                self.send_header("Retry-After", str(step[2]))
                self.send_header("Content-Length", "0")
                self.end_headers()
                return
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
