"""Streaming upload of a large document: server memory and throughput against a plain file copy.

What it does, in order (see docs/research/bench-notes-2026-11.md for how to run it and what the figures mean):

1. writes a text file of `--size` bytes (default 1 GiB: printable ASCII lines, generated in 1 MiB
   blocks, never held in memory) into a fresh temporary directory, computing its SHA-256, and
   fsyncs it so that its write-back cannot overlap the measurements;
2. starts the real API server (`casefile serve`, one process, embedded SQLite) on a free loopback
   port, with a fresh data directory next to that file (same filesystem) and
   `CASEFILE_MAX_UPLOAD_BYTES` just above the file size; logs in and creates a case;
3. samples the server's resident memory (VmRSS from `/proc/<pid>/status`, for the server and any
   process it starts) every `--interval-ms` (default 50 ms) in a thread, for the whole session;
   before each upload the kernel's peak counter (VmHWM) is reset through `/proc/<pid>/clear_refs`
   so that a spike shorter than the sampling interval is still seen;
4. uploads the file with httpx, the multipart body produced by a generator (boundary, part
   headers, 1 MiB file chunks, closing boundary) with an explicit Content-Type and Content-Length,
   so the client never holds the file either; times it end to end (first byte sent to the 201
   response, which the server only sends after its fsync and commit); checks the returned
   `sha256` and `file_size`, the stored file and that no temporary file is left; then deletes
   the document (its stored content goes with it) so that the next run is not deduplicated.
   It also counts the CPU time the server used for the upload (/proc/<pid>/stat), and the CPU
   that other processes and the hypervisor (steal) took meanwhile, which flags disturbed runs;
5. times `shutil.copyfile` of the same file into the data directory plus an fsync: the speed of
   the disk for the same work, and the ratio upload / copy;
6. repeats steps 4-5 `--repeat` times, prints a table and writes everything as JSON to
   `bench/results/upload_document-<timestamp>.json`.

A small warm-up upload (`--warmup-bytes`, default 1 MiB) runs first, so that the baseline
includes what any first upload allocates once (code paths, database connection, worker thread)
and the growth measured is what an upload's size costs.

The whole run is bounded by a global deadline (`--deadline-minutes`, default 20), stops the server
on every exit path and removes its temporary directory. All traffic stays on the loopback
interface. Only the standard library and the project's own dependencies (httpx) are used.
"""

from __future__ import annotations

import argparse
import hashlib
import json
import os
import platform
import resource
import secrets
import shutil
import signal
import socket
import statistics
import subprocess
import sys
import tempfile
import threading
import time
from collections.abc import Callable, Iterator
from contextlib import contextmanager, suppress
from dataclasses import asdict, dataclass, field
from datetime import UTC, datetime
from importlib.metadata import PackageNotFoundError, version
from pathlib import Path
from types import FrameType
from typing import Any

import httpx
import smoke

ROOT = Path(__file__).resolve().parent.parent
RESULTS_DIR = ROOT / "bench" / "results"
API = "/api/v1"
HOST = "127.0.0.1"
MIB = 1024 * 1024
MB = 1_000_000
CHUNK = MIB
GROWTH_TARGET_MIB = 64.0
ADMIN_EMAIL = "bench-admin@bench.test"
SENTENCES = (
    "The lessee shall keep the premises in good repair and return them in the same condition.",
    "Notice under this agreement is given in writing to the address stated in the schedule.",
    "The court granted the motion in part and set the hearing for the first available date.",
    "Exhibit 14: correspondence between counsel regarding the production of documents.",
    "Witness statement of the claimant, signed and dated, with the annexed photographs.",
    "Neither party may assign its rights without the prior written consent of the other.",
    "Costs are reserved; the parties shall file submissions within fourteen days.",
)


class BenchError(Exception):
    """The benchmark cannot go on; the message says why."""


class DeadlineExceeded(BenchError):
    pass


class Deadline:
    """One global deadline. SIGALRM interrupts whatever runs when it passes."""

    def __init__(self, seconds: float) -> None:
        self.seconds = seconds
        self.end = time.monotonic() + seconds

    def remaining(self) -> float:
        return self.end - time.monotonic()

    def check(self, what: str) -> float:
        left = self.remaining()
        if left <= 0:
            raise DeadlineExceeded(f"global deadline of {self.seconds / 60:.3g} min passed before {what}")
        return left

    def arm(self) -> None:
        def on_alarm(_signum: int, _frame: FrameType | None) -> None:
            raise DeadlineExceeded(f"global deadline of {self.seconds / 60:.3g} min passed")

        def on_term(signum: int, _frame: FrameType | None) -> None:
            raise BenchError(f"stopped by signal {signum}")

        signal.signal(signal.SIGALRM, on_alarm)
        signal.signal(signal.SIGTERM, on_term)
        signal.setitimer(signal.ITIMER_REAL, self.seconds)

    @staticmethod
    def disarm() -> None:
        signal.setitimer(signal.ITIMER_REAL, 0)


def log(message: str) -> None:
    print(f"[{datetime.now().strftime('%H:%M:%S')}] {message}", flush=True)


def mib(n_bytes: float) -> float:
    return n_bytes / MIB


# ---------------------------------------------------------------------------------------------
# The test file
# ---------------------------------------------------------------------------------------------


def text_block(seed: str) -> bytes:
    """About 1 MiB of printable ASCII lines (numbered, so the block is not one repeated line)."""
    lines: list[str] = []
    size = 0
    number = 0
    while size < CHUNK:
        line = f"{seed} {number:07d} {SENTENCES[number % len(SENTENCES)]}\n"
        lines.append(line)
        size += len(line)
        number += 1
    return "".join(lines).encode("ascii")[:CHUNK]


def write_text_file(path: Path, size: int, seed: str) -> str:
    """Write `size` bytes of text to `path` (fsync'ed); return its SHA-256."""
    block = text_block(seed)
    digest = hashlib.sha256()
    with path.open("wb") as handle:
        left = size
        while left > 0:
            piece = block if left >= len(block) else block[:left]
            handle.write(piece)
            digest.update(piece)
            left -= len(piece)
        handle.flush()
        os.fsync(handle.fileno())
    return digest.hexdigest()


def fsync_path(path: Path) -> None:
    fd = os.open(path, os.O_RDONLY)
    try:
        os.fsync(fd)
    finally:
        os.close(fd)


# ---------------------------------------------------------------------------------------------
# Resident memory of the server, from /proc
# ---------------------------------------------------------------------------------------------


def proc_status_kib(pid: int, key: str) -> int | None:
    """A `kB` line of /proc/<pid>/status (VmRSS, VmHWM), in KiB; None if the process is gone."""
    try:
        with open(f"/proc/{pid}/status") as handle:
            for line in handle:
                if line.startswith(key + ":"):
                    return int(line.split()[1])
    except (OSError, ValueError, IndexError):
        return None
    return None


def descendants(pid: int) -> list[int]:
    """`pid` and every process below it (parent links from /proc/<n>/stat)."""
    children: dict[int, list[int]] = {}
    for entry in os.scandir("/proc"):
        if not entry.name.isdigit():
            continue
        try:
            with open(f"/proc/{entry.name}/stat") as handle:
                stat = handle.read()
        except OSError:
            continue
        # The command name (field 2) may contain spaces and parentheses: split after the last ')'.
        fields = stat.rsplit(")", 1)[-1].split()
        if len(fields) > 1 and fields[1].isdigit():
            children.setdefault(int(fields[1]), []).append(int(entry.name))
    found = [pid]
    index = 0
    while index < len(found):
        found.extend(children.get(found[index], []))
        index += 1
    return found


def reset_peak(pids: list[int]) -> bool:
    """Reset the kernel's peak-RSS counter (VmHWM) of each process; False if it was refused."""
    done = True
    for pid in pids:
        try:
            with open(f"/proc/{pid}/clear_refs", "w") as handle:
                handle.write("5")
        except OSError:
            done = False
    return done


CLOCK_TICKS = os.sysconf("SC_CLK_TCK")


def process_cpu_seconds(pids: list[int]) -> float:
    """User + system CPU time used so far by these processes (fields 14 and 15 of /proc/<pid>/stat)."""
    ticks = 0
    for pid in pids:
        try:
            with open(f"/proc/{pid}/stat") as handle:
                fields = handle.read().rsplit(")", 1)[-1].split()
            ticks += int(fields[11]) + int(fields[12])
        except (OSError, ValueError, IndexError):
            continue
    return ticks / CLOCK_TICKS


def machine_cpu_seconds() -> tuple[float, float]:
    """(busy, steal) CPU time of all CPUs since boot, from /proc/stat: busy is everything but idle,
    iowait and steal; steal is the time the hypervisor gave this machine's CPUs to someone else."""
    with open("/proc/stat") as handle:
        values = [int(v) for v in handle.readline().split()[1:9]]
    user, nice, system, _idle, _iowait, irq, softirq, steal = values
    return (user + nice + system + irq + softirq) / CLOCK_TICKS, steal / CLOCK_TICKS


@dataclass
class CpuMeter:
    """CPU used between start() and stop(): by the server, by this process and by everything else."""

    server_pids: list[int]
    wall: float = 0.0
    server: float = 0.0
    client: float = 0.0
    others: float = 0.0
    steal: float = 0.0
    _marks: tuple[float, float, float, float, float] = (0.0, 0.0, 0.0, 0.0, 0.0)

    def start(self) -> None:
        own = os.times()
        self._marks = (
            time.monotonic(),
            process_cpu_seconds(self.server_pids),
            own.user + own.system,
            *machine_cpu_seconds(),
        )

    def stop(self) -> None:
        own = os.times()
        wall0, server0, client0, busy0, steal0 = self._marks
        busy, steal = machine_cpu_seconds()
        self.wall = time.monotonic() - wall0
        self.server = process_cpu_seconds(self.server_pids) - server0
        self.client = own.user + own.system - client0
        self.others = max(0.0, busy - busy0 - self.server - self.client)
        self.steal = steal - steal0

    def share(self, seconds: float) -> float:
        """`seconds` of CPU as a share of the machine's CPU capacity over the measured wall time."""
        return seconds / (self.wall * (os.cpu_count() or 1)) if self.wall else 0.0


class RssSampler(threading.Thread):
    """Samples the summed VmRSS of a process tree every `interval` seconds until stopped."""

    def __init__(self, pid: int, interval: float) -> None:
        super().__init__(name="rss-sampler", daemon=True)
        self.pid = pid
        self.interval = interval
        self.samples: list[tuple[float, int]] = []  # (monotonic time, bytes)
        self.pids = [pid]
        self.max_processes = 1
        self._stop_event = threading.Event()

    def run(self) -> None:
        next_scan = 0.0
        while not self._stop_event.is_set():
            now = time.monotonic()
            if now >= next_scan:  # the process tree changes rarely (never, with one worker)
                self.pids = descendants(self.pid)
                self.max_processes = max(self.max_processes, len(self.pids))
                next_scan = now + 1.0
            total = 0
            for pid in self.pids:
                total += proc_status_kib(pid, "VmRSS") or 0
            if total:
                self.samples.append((now, total * 1024))
            self._stop_event.wait(self.interval)

    def stop(self) -> None:
        self._stop_event.set()
        self.join(timeout=5)

    def between(self, start: float, end: float) -> list[int]:
        return [rss for at, rss in list(self.samples) if start <= at <= end]

    def current(self) -> int:
        return sum((proc_status_kib(pid, "VmRSS") or 0) * 1024 for pid in self.pids)

    def peak_counter(self) -> int:
        return sum((proc_status_kib(pid, "VmHWM") or 0) * 1024 for pid in self.pids)


# ---------------------------------------------------------------------------------------------
# The server and the HTTP client
# ---------------------------------------------------------------------------------------------


def free_port() -> int:
    with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as sock:
        sock.bind((HOST, 0))
        return int(sock.getsockname()[1])


def casefile_executable() -> Path:
    candidate = Path(sys.executable).parent / "casefile"
    if not candidate.exists():
        raise BenchError(f"{candidate} not found: run with the project's virtualenv (.venv/bin/python)")
    return candidate


@dataclass
class Server:
    process: subprocess.Popen[bytes]
    base_url: str
    data_dir: Path
    log_path: Path
    email: str
    password: str
    # Where the content is when not in the data dir (bench/upload_document_s3.py: a bucket): the
    # stored size of a SHA-256, None when it is not stored.
    stored: Callable[[str], int | None] | None = None

    def stored_size(self, sha256: str) -> int | None:
        if self.stored is not None:
            return self.stored(sha256)
        path = self.content_path(sha256)
        return path.stat().st_size if path.is_file() else None

    def log_tail(self, lines: int = 40) -> str:
        try:
            return "\n".join(self.log_path.read_text(errors="replace").splitlines()[-lines:])
        except OSError:
            return "(no server log)"

    def content_path(self, sha256: str) -> Path:
        return self.data_dir / "content" / sha256[:2] / sha256[2:4] / sha256

    def leftover_temp_files(self) -> list[str]:
        temp = self.data_dir / "tmp"
        # Not `download-*.part`: with content in a bucket, AI processing reads a copy of the
        # document there while it runs (and removes it after).
        return sorted(p.name for p in temp.glob("upload-*")) if temp.exists() else []


@contextmanager
def running_server(
    work_dir: Path,
    max_upload_bytes: int,
    deadline: Deadline,
    extra_env: dict[str, str] | None = None,
    stored: Callable[[str], int | None] | None = None,
) -> Iterator[Server]:
    """`casefile serve` on a free loopback port with a fresh data dir; always stopped on exit.
    `extra_env`: more settings (`CASEFILE_…`) for the server; `stored`: the stored size of a
    content key, where content is not in the data dir (an object store)."""
    data_dir = work_dir / "data"
    data_dir.mkdir()
    port = free_port()
    password = secrets.token_urlsafe(18)
    # Nothing inherited: no CASEFILE_DATABASE_URL pointing elsewhere; cwd has no `.env`.
    env = {k: v for k, v in os.environ.items() if not k.startswith("CASEFILE_")}
    env.update(
        {
            "CASEFILE_DATA_DIR": str(data_dir),
            "CASEFILE_MAX_UPLOAD_BYTES": str(max_upload_bytes),
            "CASEFILE_ADMIN_EMAIL": ADMIN_EMAIL,
            "CASEFILE_ADMIN_PASSWORD": password,
            "CASEFILE_JWT_TTL_SECONDS": "7200",
            **(extra_env or {}),
        }
    )
    log_path = work_dir / "server.log"
    command = [str(casefile_executable()), "serve", "--host", HOST, "--port", str(port)]
    log(f"starting casefile serve --host {HOST} --port {port} (data dir {data_dir})")
    with log_path.open("wb") as log_file:
        process = subprocess.Popen(
            command, env=env, cwd=work_dir, stdout=log_file, stderr=subprocess.STDOUT, start_new_session=True
        )
    server = Server(process, f"http://{HOST}:{port}", data_dir, log_path, ADMIN_EMAIL, password, stored)
    try:
        wait_until_healthy(server, deadline)
        yield server
    except BenchError:
        log(f"server log (last lines):\n{server.log_tail()}")
        raise
    finally:
        stop_server(process)


def wait_until_healthy(server: Server, deadline: Deadline) -> None:
    give_up = time.monotonic() + min(120.0, deadline.check("starting the server"))
    with httpx.Client(base_url=server.base_url, trust_env=False, timeout=5) as client:
        while time.monotonic() < give_up:
            if server.process.poll() is not None:
                raise BenchError(f"the server exited ({server.process.returncode}):\n{server.log_tail()}")
            with suppress(httpx.TransportError):
                if client.get("/healthz").status_code == 200:
                    return
            time.sleep(0.2)
    raise BenchError(f"the server did not answer /healthz in time:\n{server.log_tail()}")


def stop_server(process: subprocess.Popen[bytes]) -> None:
    if process.poll() is not None:
        return
    log(f"stopping the server (pid {process.pid})")
    process.terminate()
    try:
        process.wait(timeout=20)
    except subprocess.TimeoutExpired:
        process.kill()
        process.wait(timeout=10)


def expect(response: httpx.Response, status: int, what: str) -> dict[str, Any]:
    if response.status_code != status:
        raise BenchError(f"{what}: expected {status}, got {response.status_code} {response.text[:500]}")
    body: dict[str, Any] = response.json()
    return body


def login(client: httpx.Client, server: Server) -> str:
    body = expect(
        client.post(f"{API}/auth/login", json={"email": server.email, "password": server.password}),
        200,
        "login",
    )
    token: str = body["data"]["token"]
    return token


def create_case(client: httpx.Client) -> str:
    body = expect(client.post(f"{API}/cases", json={"title": "bench: large upload"}), 201, "create case")
    case_id: str = body["data"]["id"]
    return case_id


@dataclass
class SendTimes:
    """When the body generator handed out its first chunk and when the last one had been taken."""

    first: float = 0.0
    last: float = 0.0


class MultipartFile:
    """A multipart/form-data body (a `title` field and the `file` part) streamed from disk."""

    def __init__(self, path: Path, file_name: str, title: str) -> None:
        self.path = path
        self.size = path.stat().st_size
        self.boundary = f"casefile-bench-{secrets.token_hex(16)}"
        self.head = (
            f"--{self.boundary}\r\n"
            'Content-Disposition: form-data; name="title"\r\n\r\n'
            f"{title}\r\n"
            f"--{self.boundary}\r\n"
            f'Content-Disposition: form-data; name="file"; filename="{file_name}"\r\n'
            "Content-Type: text/plain\r\n\r\n"
        ).encode()
        self.tail = f"\r\n--{self.boundary}--\r\n".encode()
        self.times = SendTimes()

    @property
    def headers(self) -> dict[str, str]:
        return {
            "Content-Type": f"multipart/form-data; boundary={self.boundary}",
            "Content-Length": str(len(self.head) + self.size + len(self.tail)),
        }

    def chunks(self) -> Iterator[bytes]:
        self.times.first = time.monotonic()
        yield self.head
        with self.path.open("rb", buffering=0) as handle:
            while chunk := handle.read(CHUNK):
                yield chunk
        yield self.tail
        self.times.last = time.monotonic()  # resumed once the client has sent the tail


def http_timeout(deadline: Deadline) -> httpx.Timeout:
    # The 201 comes after the server's fsync of the whole file: allow a slow disk some minutes.
    return httpx.Timeout(10.0, read=max(10.0, min(600.0, deadline.remaining())), write=60.0)


# ---------------------------------------------------------------------------------------------
# One run: upload, check, delete; then the plain copy
# ---------------------------------------------------------------------------------------------


@dataclass
class Run:
    run: int
    bytes: int
    upload_s: float
    body_sent_s: float
    response_after_body_s: float
    upload_mib_s: float
    upload_mb_s: float
    copy_s: float
    copy_mib_s: float
    copy_mb_s: float
    ratio: float
    server_cpu_s: float
    server_cpu_share: float
    client_cpu_s: float
    others_cpu_share: float
    steal_share: float
    loadavg_1m_before: float
    baseline_rss_mib: float
    peak_rss_sampled_mib: float
    peak_rss_hwm_mib: float | None
    peak_rss_mib: float
    growth_mib: float
    rss_after_mib: float
    samples_during_upload: int
    growth_ok: bool
    rss_timeline_mib: list[tuple[float, float]] = field(default_factory=list)


def upload(
    client: httpx.Client, server: Server, case_id: str, path: Path, expected_sha256: str, deadline: Deadline
) -> tuple[dict[str, Any], float, SendTimes]:
    """POST the file; return the created document, the wall time and the send times."""
    deadline.check("an upload")
    body = MultipartFile(path, path.name, f"bench {path.name}")
    started = time.monotonic()
    response = client.post(
        f"{API}/cases/{case_id}/documents",
        content=body.chunks(),
        headers=body.headers,
        timeout=http_timeout(deadline),
    )
    elapsed = time.monotonic() - started
    document: dict[str, Any] = expect(response, 201, f"upload of {path.name}")["data"]
    size = path.stat().st_size
    if document.get("sha256") != expected_sha256:
        raise BenchError(f"sha256 mismatch: sent {expected_sha256}, server says {document.get('sha256')}")
    if document.get("file_size") != size:
        raise BenchError(f"file_size mismatch: sent {size}, server says {document.get('file_size')}")
    if server.stored_size(expected_sha256) != size:
        raise BenchError(f"the stored content {expected_sha256} is missing or has the wrong size")
    if leftovers := server.leftover_temp_files():
        raise BenchError(f"temporary files left in the data dir: {leftovers}")
    return document, elapsed, body.times


def delete_document(client: httpx.Client, server: Server, document: dict[str, Any]) -> None:
    """Delete the document, purge it from the trash, and wait until its content file is gone (so
    repeats store anew). A deleted document stays in the trash, content and all, until purged."""
    expect(client.delete(f"{API}/documents/{document['id']}"), 200, "delete document")
    expect(client.delete(f"{API}/admin/trash/{document['id']}"), 200, "purge document")
    give_up = time.monotonic() + 30
    while server.stored_size(document["sha256"]) is not None:
        if time.monotonic() > give_up:
            raise BenchError(
                f"the content {document['sha256']} was not removed after the document was deleted"
            )
        time.sleep(0.05)


def timed_copy(source: Path, data_dir: Path) -> float:
    """copyfile into the data dir + fsync (what storing the bytes costs without HTTP)."""
    target = data_dir / f"copy-{secrets.token_hex(6)}.bin"
    try:
        started = time.monotonic()
        shutil.copyfile(source, target)
        fsync_path(target)
        return time.monotonic() - started
    finally:
        target.unlink(missing_ok=True)


def measure_run(
    number: int,
    client: httpx.Client,
    server: Server,
    sampler: RssSampler,
    case_id: str,
    source: Path,
    sha256: str,
    settle: float,
    deadline: Deadline,
) -> Run:
    size = source.stat().st_size
    # Baseline: the server idle for `settle` seconds just before the upload.
    quiet_from = time.monotonic()
    time.sleep(settle)
    baseline_samples = sampler.between(quiet_from, time.monotonic()) or [sampler.current()]
    baseline = statistics.median(baseline_samples)
    hwm_reset = reset_peak(sampler.pids)
    load_before = os.getloadavg()[0]

    log(f"run {number}: uploading {mib(size):.0f} MiB")
    cpu = CpuMeter(sampler.pids)
    cpu.start()
    document, elapsed, times = upload(client, server, case_id, source, sha256, deadline)
    cpu.stop()
    ended = time.monotonic()
    hwm = sampler.peak_counter() if hwm_reset else None
    during = sampler.between(times.first, ended)
    peak_sampled = max([*during, int(baseline)])
    peak = max(peak_sampled, hwm or 0)
    time.sleep(settle)
    after = statistics.median(sampler.between(ended + settle / 2, time.monotonic()) or [sampler.current()])
    timeline = [
        (round(at - times.first, 3), round(mib(rss), 2))
        for at, rss in list(sampler.samples)
        if quiet_from <= at <= ended + settle
    ]
    delete_document(client, server, document)

    deadline.check("the copy")
    log(f"run {number}: copying the same file into the data dir (+ fsync)")
    copy_s = timed_copy(source, server.data_dir)

    growth = mib(peak - baseline)
    run = Run(
        run=number,
        bytes=size,
        upload_s=round(elapsed, 3),
        body_sent_s=round(times.last - times.first, 3),
        response_after_body_s=round(ended - times.last, 3),
        upload_mib_s=round(mib(size) / elapsed, 1),
        upload_mb_s=round(size / MB / elapsed, 1),
        copy_s=round(copy_s, 3),
        copy_mib_s=round(mib(size) / copy_s, 1),
        copy_mb_s=round(size / MB / copy_s, 1),
        ratio=round(copy_s / elapsed, 3),
        server_cpu_s=round(cpu.server, 2),
        server_cpu_share=round(cpu.server / elapsed, 2),
        client_cpu_s=round(cpu.client, 2),
        others_cpu_share=round(cpu.share(cpu.others), 2),
        steal_share=round(cpu.share(cpu.steal), 2),
        loadavg_1m_before=round(load_before, 2),
        baseline_rss_mib=round(mib(baseline), 1),
        peak_rss_sampled_mib=round(mib(peak_sampled), 1),
        peak_rss_hwm_mib=round(mib(hwm), 1) if hwm is not None else None,
        peak_rss_mib=round(mib(peak), 1),
        growth_mib=round(growth, 1),
        rss_after_mib=round(mib(after), 1),
        samples_during_upload=len(during),
        growth_ok=growth < GROWTH_TARGET_MIB,
        rss_timeline_mib=timeline,
    )
    log(
        f"run {number}: upload {run.upload_s:.2f} s = {run.upload_mb_s:.0f} MB/s; copy {run.copy_s:.2f} s"
        f" = {run.copy_mb_s:.0f} MB/s; RSS {run.baseline_rss_mib:.1f} -> {run.peak_rss_mib:.1f} MiB"
        f" (+{run.growth_mib:.1f}); server CPU {run.server_cpu_s:.1f} s"
    )
    if run.others_cpu_share + run.steal_share > 0.1:
        log(
            f"run {number}: WARNING other processes used {run.others_cpu_share:.0%} of the machine's CPU"
            f" (and the hypervisor took {run.steal_share:.0%}) during the upload:"
            " the throughput figures are disturbed"
        )
    return run


# ---------------------------------------------------------------------------------------------
# Reporting
# ---------------------------------------------------------------------------------------------


def machine_facts(work_dir: Path) -> dict[str, Any]:
    facts: dict[str, Any] = {
        "cpus": os.cpu_count(),
        "platform": platform.platform(),
        "python": platform.python_version(),
        "database": "SQLite (embedded default)",
    }
    with suppress(PackageNotFoundError):
        facts["casefile"] = version("casefile")
    with suppress(OSError):
        for line in Path("/proc/cpuinfo").read_text().splitlines():
            if line.startswith("model name"):
                facts["cpu_model"] = line.split(":", 1)[1].strip()
                break
    with suppress(OSError):
        for line in Path("/proc/meminfo").read_text().splitlines():
            if line.startswith("MemTotal:"):
                facts["memory_mib"] = int(line.split()[1]) // 1024
                break
    facts["filesystem"] = filesystem_of(work_dir)
    return facts


def filesystem_of(path: Path) -> dict[str, Any]:
    """Mount point, type and device of the filesystem holding `path` (longest /proc/mounts match)."""
    resolved = str(path.resolve())
    best: dict[str, Any] = {}
    with suppress(OSError):
        for line in Path("/proc/mounts").read_text().splitlines():
            device, mount_point, fs_type = line.split()[:3]
            inside = resolved == mount_point or resolved.startswith(mount_point.rstrip("/") + "/")
            if inside and len(mount_point) >= len(best.get("mount_point", "")):
                best = {"mount_point": mount_point, "type": fs_type, "device": device}
    usage = shutil.disk_usage(path)
    best["free_gib"] = round(usage.free / 1024**3, 1)
    return best


def summarize(runs: list[Run]) -> dict[str, Any]:
    return {
        "upload_mb_s_median": round(statistics.median(r.upload_mb_s for r in runs), 1),
        "upload_mib_s_median": round(statistics.median(r.upload_mib_s for r in runs), 1),
        "copy_mb_s_median": round(statistics.median(r.copy_mb_s for r in runs), 1),
        "copy_mib_s_median": round(statistics.median(r.copy_mib_s for r in runs), 1),
        "ratio_median": round(statistics.median(r.ratio for r in runs), 3),
        "server_cpu_s_median": round(statistics.median(r.server_cpu_s for r in runs), 2),
        "others_cpu_share_max": max(r.others_cpu_share for r in runs),
        "steal_share_max": max(r.steal_share for r in runs),
        "baseline_rss_mib_max": max(r.baseline_rss_mib for r in runs),
        "peak_rss_mib_max": max(r.peak_rss_mib for r in runs),
        "growth_mib_max": max(r.growth_mib for r in runs),
        "growth_target_mib": GROWTH_TARGET_MIB,
        "growth_ok": all(r.growth_ok for r in runs),
    }


def results_table(runs: list[Run]) -> str:
    header = (
        "| run | size MiB | upload s | upload MiB/s | upload MB/s | copy s | copy MiB/s | copy MB/s "
        "| upload/copy | server CPU s | others / steal "
        "| baseline RSS MiB | peak RSS MiB | growth MiB | < 64 MiB |"
    )
    rule = "|" + "---|" * (header.count("|") - 1)
    rows = [header, rule]
    for r in runs:
        rows.append(
            f"| {r.run} | {mib(r.bytes):.0f} | {r.upload_s:.2f} | {r.upload_mib_s:.0f} | {r.upload_mb_s:.0f} "
            f"| {r.copy_s:.2f} | {r.copy_mib_s:.0f} | {r.copy_mb_s:.0f} | {r.ratio:.2f} "
            f"| {r.server_cpu_s:.1f} | {r.others_cpu_share:.0%} / {r.steal_share:.0%} "
            f"| {r.baseline_rss_mib:.1f} | {r.peak_rss_mib:.1f} | {r.growth_mib:.1f} "
            f"| {'yes' if r.growth_ok else 'NO'} |"
        )
    return "\n".join(rows)


def write_results(payload: dict[str, Any], started_at: datetime) -> Path:
    RESULTS_DIR.mkdir(parents=True, exist_ok=True)
    path = RESULTS_DIR / f"{payload['benchmark']}-{started_at.strftime('%Y%m%dT%H%M%SZ')}.json"
    path.write_text(json.dumps(payload, indent=2) + "\n")
    return path


# ---------------------------------------------------------------------------------------------
# Main
# ---------------------------------------------------------------------------------------------


def parse_size(text: str) -> int:
    """Bytes, with an optional K/M/G suffix (binary: 1G = 1 GiB)."""
    units = {"K": 1024, "M": MIB, "G": 1024 * MIB}
    text = text.strip().upper().removesuffix("IB").removesuffix("B")
    try:
        if text and text[-1] in units:
            return int(float(text[:-1]) * units[text[-1]])
        return int(text)
    except ValueError as exc:
        raise argparse.ArgumentTypeError(f"not a size: {text!r}") from exc


def parse_args(argv: list[str] | None = None) -> argparse.Namespace:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0] if __doc__ else None)
    parser.add_argument("--size", type=parse_size, default=1024 * MIB, help="file size (e.g. 1G, 256M)")
    parser.add_argument("--repeat", type=int, default=1, help="upload + copy runs")
    parser.add_argument(
        "--warmup-bytes", type=parse_size, default=MIB, help="warm-up upload before the runs (0: none)"
    )
    parser.add_argument("--interval-ms", type=float, default=50.0, help="RSS sampling interval")
    parser.add_argument(
        "--settle-seconds", type=float, default=1.0, help="idle time before/after each upload"
    )
    parser.add_argument(
        "--work-dir",
        type=Path,
        default=Path(tempfile.gettempdir()),
        help="where the temporary directory (test file and server data dir) is made",
    )
    parser.add_argument("--deadline-minutes", type=float, default=20.0, help="global time limit")
    parser.add_argument("--no-save", action="store_true", help="do not write bench/results/*.json")
    args = smoke.parse_args(
        parser,
        argv,
        size=MIB,
        repeat=1,
        warmup_bytes=64 * 1024,
        settle_seconds=0.0,
        no_save=True,
        deadline_minutes=3.0,
    )
    if args.size < 1 or args.repeat < 1 or args.interval_ms <= 0 or args.deadline_minutes <= 0:
        parser.error("--size, --repeat, --interval-ms and --deadline-minutes must be positive")
    return args


def main(argv: list[str] | None = None, **store: Any) -> int:
    """`store`: `run`'s keyword arguments for content elsewhere than the data dir."""
    args = parse_args(argv)
    started_at = datetime.now(UTC)
    deadline = Deadline(args.deadline_minutes * 60)
    deadline.arm()
    work_dir = Path(tempfile.mkdtemp(prefix="casefile-upload-bench-", dir=args.work_dir))
    try:
        return run(args, work_dir, deadline, started_at, **store)
    except BenchError as exc:
        log(f"FAILED: {exc}")
        return 1
    except KeyboardInterrupt:
        log("interrupted")
        return 130
    finally:
        Deadline.disarm()
        shutil.rmtree(work_dir, ignore_errors=True)
        log(f"removed {work_dir}")


def run(
    args: argparse.Namespace,
    work_dir: Path,
    deadline: Deadline,
    started_at: datetime,
    *,
    benchmark: str = "upload_document",
    extra_env: dict[str, str] | None = None,
    stored: Callable[[str], int | None] | None = None,
) -> int:
    size: int = args.size
    free = shutil.disk_usage(work_dir).free
    needed = 2 * size + args.warmup_bytes + 512 * MIB  # the file, its stored copy (or the plain copy)
    if free < needed:
        raise BenchError(
            f"{work_dir} has {mib(free):.0f} MiB free, the run needs about {mib(needed):.0f} MiB"
        )

    source = work_dir / "bench-upload.txt"
    log(f"writing a {mib(size):.0f} MiB text file to {source}")
    began = time.monotonic()
    sha256 = write_text_file(source, size, "case")
    generate_s = time.monotonic() - began
    log(f"written in {generate_s:.1f} s (sha256 {sha256[:16]}...)")

    runs: list[Run] = []
    facts: dict[str, Any] = {}
    with running_server(work_dir, size + MIB, deadline, extra_env, stored) as server:
        if os.stat(server.data_dir).st_dev != os.stat(source).st_dev:
            raise BenchError("the test file and the data dir are not on the same filesystem")
        sampler = RssSampler(server.process.pid, args.interval_ms / 1000)
        sampler.start()
        try:
            with httpx.Client(base_url=server.base_url, trust_env=False, timeout=30) as client:
                client.headers["Authorization"] = f"Bearer {login(client, server)}"
                case_id = create_case(client)
                time.sleep(args.settle_seconds)
                facts["server_rss_after_start_mib"] = round(mib(sampler.current()), 1)
                if args.warmup_bytes:
                    warmup = work_dir / "warmup.txt"
                    warm_sha = write_text_file(warmup, args.warmup_bytes, "warm")
                    log(f"warm-up upload of {mib(args.warmup_bytes):.1f} MiB")
                    document, _, _ = upload(client, server, case_id, warmup, warm_sha, deadline)
                    delete_document(client, server, document)
                    warmup.unlink()
                for number in range(1, args.repeat + 1):
                    runs.append(
                        measure_run(
                            number,
                            client,
                            server,
                            sampler,
                            case_id,
                            source,
                            sha256,
                            args.settle_seconds,
                            deadline,
                        )
                    )
            facts["server_processes"] = sampler.max_processes
            facts["rss_samples"] = len(sampler.samples)
        finally:
            sampler.stop()

    summary = summarize(runs)
    table = results_table(runs)
    print()
    print(table)
    print()
    verdict = "under" if summary["growth_ok"] else "OVER"
    print(
        f"median upload {summary['upload_mb_s_median']:.0f} MB/s"
        f" ({summary['upload_mib_s_median']:.0f} MiB/s), copy {summary['copy_mb_s_median']:.0f} MB/s,"
        f" upload/copy {summary['ratio_median']:.2f}; largest RSS growth {summary['growth_mib_max']:.1f} MiB"
        f" ({verdict} the {GROWTH_TARGET_MIB:.0f} MiB target)"
    )
    client_peak = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024  # KiB on Linux
    print(f"client (this process) peak RSS: {client_peak:.1f} MiB")
    if not args.no_save:
        payload = {
            "benchmark": benchmark,
            "started_at": started_at.isoformat(),
            "finished_at": datetime.now(UTC).isoformat(),
            "machine": machine_facts(work_dir),
            "config": {
                "size_bytes": size,
                "repeat": args.repeat,
                "warmup_bytes": args.warmup_bytes,
                "interval_ms": args.interval_ms,
                "settle_seconds": args.settle_seconds,
                "chunk_bytes": CHUNK,
                "max_upload_bytes": size + MIB,
                "generate_s": round(generate_s, 2),
            },
            "server": facts,
            "client_peak_rss_mib": round(client_peak, 1),
            "summary": summary,
            "runs": [asdict(r) for r in runs],
        }
        log(f"results written to {write_results(payload, started_at).relative_to(ROOT)}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
