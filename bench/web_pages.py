"""Server time of the web app's main pages on SQLite with many matters (issue 28: a matter list
page of 20 rows and a matter page under 50 ms of server time with 10,000 matters).

The app is served in this process by uvicorn on loopback; a signed-in client (the sign-in form,
its session cookie) asks each page `--rounds` times over one kept-alive connection, after a
warm-up. "Server time" is the app's own measure of each request: the duration in its request log
line (casefile.metrics), read from the log records, so the client's and the network's share is
left out. Pages: My day, the matters list (20 rows, default sort; and a search), a matter's
overview and its tasks tab; and for comparison the API's `GET /cases` and `GET /tasks` (the same
services, answered as JSON).

Data: N firm-access matters (default 10,000), the first 200 with 3 tasks each assigned to the
signed-in administrator (so My day has rows).

Run: `.venv/bin/python bench/web_pages.py [--cases 10000] [--rounds 100]`. Prints a table.
"""

from __future__ import annotations

import argparse
import asyncio
import logging
import re
import socket
import statistics
import tempfile
import threading
import time
from datetime import UTC, date, datetime, timedelta
from pathlib import Path

import httpx
import uvicorn
from sqlalchemy import insert, select

from casefile.app import create_app
from casefile.db import Database
from casefile.migrate import upgrade
from casefile.models import Case, Task, User
from casefile.settings import Settings
from casefile.users.service import ensure_admin

EMAIL, PASSWORD = "bench-admin@casefile.test", "Bench-Passw0rd-for-pages"


async def seed(settings: Settings, cases: int) -> str:
    db = Database(settings)
    now = datetime(2026, 1, 1, tzinfo=UTC)
    async with db.transaction() as session:
        await ensure_admin(session, email=EMAIL, password=PASSWORD)
    async with db.transaction() as session:
        admin_id = await session.scalar(select(User.id).where(User.email == EMAIL))
        assert admin_id is not None
        ids = [f"case_bench{i:07d}" for i in range(cases)]
        for start in range(0, cases, 5000):
            rows = [
                {
                    "id": c,
                    "title": f"Matter {i} of Client {i % 997}",
                    "case_number": f"2026-{i:06d}",
                    "client_name": f"Client {i % 997}",
                    "status": "active",
                    "priority": "medium",
                    "access": "firm",
                    "created_at": now + timedelta(seconds=i),
                    "updated_at": now,
                }
                for i, c in enumerate(ids[start : start + 5000], start)
            ]
            await session.execute(insert(Case), rows)
        due = date.today()
        tasks = [
            {
                "case_id": c,
                "title": f"Task {k} on {c}",
                "assignee_id": admin_id,
                "due_date": due + timedelta(days=k * 5 - 3),
                "due_sort": datetime.combine(due + timedelta(days=k * 5 - 3), datetime.min.time(), UTC),
                "priority": "medium",
                "status": "open",
                "reminders": [],
                "created_at": now,
                "updated_at": now,
            }
            for c in ids[:200]
            for k in range(3)
        ]
        await session.execute(insert(Task), tasks)
    await db.dispose()
    return ids[0]


class Durations(logging.Handler):
    """The request log lines' durations (casefile.metrics logs `duration_ms` per request)."""

    def __init__(self) -> None:
        super().__init__()
        self.values: list[float] = []

    def emit(self, record: logging.LogRecord) -> None:
        duration = getattr(record, "duration_ms", None)
        if isinstance(duration, int | float):
            self.values.append(float(duration))


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--cases", type=int, default=10_000)
    parser.add_argument("--rounds", type=int, default=100)
    args = parser.parse_args()
    data_dir = Path(tempfile.mkdtemp(prefix="casefile-bench-web-"))
    settings = Settings(
        _env_file=None,
        data_dir=data_dir,
        rate_limit_user="1000000/hour",
        rate_limit_login="1000/minute",
        ai_enabled=False,
        worker_enabled=False,
    )
    upgrade(settings)
    first_case = asyncio.run(seed(settings, args.cases))
    durations = Durations()
    logging.getLogger("casefile").addHandler(durations)
    logging.getLogger("casefile").setLevel(logging.INFO)
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        port = s.getsockname()[1]
    server = uvicorn.Server(
        uvicorn.Config(create_app(settings), host="127.0.0.1", port=port, log_level="warning")
    )
    thread = threading.Thread(target=server.run, daemon=True)
    thread.start()
    while not server.started:
        time.sleep(0.05)
    pages = {
        "My day": "/app",
        "Matters, 20 rows": "/app/matters",
        "Matters, search": "/app/matters?search=client+42",
        "Matter overview": f"/app/matters/{first_case}",
        "Matter tasks": f"/app/matters/{first_case}/tasks",
        # The API's own list, for comparison: the same service and queries, answered as JSON.
        "API GET /cases": "/api/v1/cases?limit=20",
        "API GET /tasks (me)": "/api/v1/tasks?assignee_id=me&status=open&limit=100&sort=due_at&order=asc",
    }
    results = []
    with httpx.Client(base_url=f"http://127.0.0.1:{port}") as client:
        form = client.get("/app/sign-in").text
        token = re.search(r'name="form_token" value="([^"]+)"', form)
        assert token is not None
        client.post("/app/sign-in", data={"email": EMAIL, "password": PASSWORD, "form_token": token.group(1)})
        login = client.post("/api/v1/auth/login", json={"email": EMAIL, "password": PASSWORD})
        bearer = {"Authorization": "Bearer " + login.json()["data"]["token"]}
        for name, path in pages.items():
            # The pages with the session cookie; the API with a token (it never takes the cookie).
            headers = bearer if path.startswith("/api/") else {}
            for _ in range(10):
                assert client.get(path, headers=headers).status_code == 200
            durations.values.clear()
            wall = []
            for _ in range(args.rounds):
                started = time.perf_counter()
                assert client.get(path, headers=headers).status_code == 200
                wall.append((time.perf_counter() - started) * 1000)
            server_ms = list(durations.values)
            results.append((name, server_ms, wall))
    server.should_exit = True
    thread.join(timeout=10)
    print(f"SQLite, {args.cases} matters, {args.rounds} requests per page (ms)")
    print(f"{'page':<20} {'server p50':>10} {'server p95':>10} {'client p50':>10}")
    for name, server_ms, wall in results:
        if server_ms:
            p50, p95 = statistics.median(server_ms), statistics.quantiles(server_ms, n=20)[18]
        else:
            p50 = p95 = float("nan")
        print(f"{name:<20} {p50:>10.1f} {p95:>10.1f} {statistics.median(wall):>10.1f}")


if __name__ == "__main__":
    main()
