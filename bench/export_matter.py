"""Matter export of a large matter: the server's memory while it builds the zip, and the time.

What it does (see docs/research/bench-notes-2026-11.md, "Matter export", for what the figures mean):

1. writes `--files` text files adding up to `--size` bytes (default 1 GiB in 4 files) into a fresh
   temporary directory, and starts the real API server (`casefile serve`, one process with its
   background workers, the export worker among them; embedded SQLite, local content store) with
   the machinery of bench/upload_document.py; uploads the files to one matter, and exports an
   empty matter once (a warm-up: what any first export loads is then in the baseline);
2. samples the server's resident memory (VmRSS of its process tree) every `--interval-ms` and,
   after resetting the kernel's peak counter (VmHWM), asks for the matter's export
   (`POST /cases/{id}/exports`) and polls `GET /exports/{id}` until it has succeeded: the export
   writes every document into a zip in the data dir, hashes it and hands it to the content store;
3. downloads the zip (`GET /exports/{id}/content`, streamed to disk) and checks it with
   `casefile.exports.verify` (every file's SHA-256, the audit entries' proofs);
4. prints the baseline and peak RSS, the growth, the export's and the download's time, and writes
   them as JSON to `bench/results/export_matter-<timestamp>.json` (not with --no-save or --smoke).

Bounded by a global deadline; the server is stopped and the temporary directory removed on every
exit path. Loopback only.
"""

from __future__ import annotations

import argparse
import json
import os
import shutil
import statistics
import sys
import tempfile
import time
from collections.abc import Callable
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

import httpx
import smoke
import upload_document as up
import upload_document_s3 as up_s3

from casefile.exports.verify import verify_export

MIB = up.MIB
GROWTH_TARGET_MIB = 64.0


def parse_args(argv: list[str] | None = None) -> argparse.Namespace:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0] if __doc__ else None)
    parser.add_argument(
        "--size", type=up.parse_size, default=1024 * MIB, help="the matter's documents in all"
    )
    parser.add_argument("--files", type=int, default=4, help="how many documents share --size")
    parser.add_argument("--interval-ms", type=float, default=50.0, help="RSS sampling interval")
    parser.add_argument("--work-dir", type=Path, default=Path(tempfile.gettempdir()))
    parser.add_argument("--deadline-minutes", type=float, default=20.0, help="global time limit")
    parser.add_argument("--no-save", action="store_true", help="do not write bench/results/*.json")
    parser.add_argument(
        "--s3", action="store_true", help="content in a bucket of moto's S3 server (upload_document_s3.py)"
    )
    args = smoke.parse_args(parser, argv, size=2 * MIB, files=2, no_save=True, deadline_minutes=3.0)
    if args.size < args.files or args.files < 1:
        parser.error("--size must hold at least a byte per file")
    return args


def main(argv: list[str] | None = None) -> int:
    args = parse_args(argv)
    started_at = datetime.now(UTC)
    deadline = up.Deadline(args.deadline_minutes * 60)
    deadline.arm()
    work_dir = Path(tempfile.mkdtemp(prefix="casefile-export-bench-", dir=args.work_dir))
    try:
        if not args.s3:
            return run(args, work_dir, deadline, started_at, {}, None)
        command, _ = up_s3.moto_command([])
        with up_s3.moto_bucket(command) as (env, stored):
            return run(args, work_dir, deadline, started_at, env, stored)
    except up.BenchError as exc:
        up.log(f"FAILED: {exc}")
        return 1
    finally:
        up.Deadline.disarm()
        shutil.rmtree(work_dir, ignore_errors=True)
        up.log(f"removed {work_dir}")


def _wait_for_export(client: httpx.Client, export_id: str, deadline: up.Deadline) -> dict[str, Any]:
    while True:
        deadline.check("the export's end")
        job: dict[str, Any] = up.expect(client.get(f"{up.API}/exports/{export_id}"), 200, "export")["data"]
        if job["status"] in ("succeeded", "failed"):
            return job
        time.sleep(0.1)


def run(
    args: argparse.Namespace,
    work_dir: Path,
    deadline: up.Deadline,
    started_at: datetime,
    store_env: dict[str, str],
    stored: Callable[[str], int | None] | None,
) -> int:
    """`store_env` and `stored`: the server's content store when it is not the data dir (a bucket:
    bench/upload_document_s3.py's `moto_bucket`)."""
    per_file = args.size // args.files
    needed = (
        5 * args.size + 512 * MIB
    )  # the files, their stored copies, the zip, its stored copy, the download
    if shutil.disk_usage(work_dir).free < needed:
        raise up.BenchError(f"{work_dir} needs about {up.mib(needed):.0f} MiB free")
    sources = []
    for number in range(args.files):
        path = work_dir / f"exhibit-{number:02d}.txt"
        sources.append((path, up.write_text_file(path, per_file, f"exhibit{number}")))
    up.log(f"wrote {args.files} files of {up.mib(per_file):.1f} MiB")
    # AI processing off: the uploaded documents' extraction and embeddings would run in the server
    # meanwhile, and their memory is not the export's.
    settings = {**store_env, "CASEFILE_AI_ENABLED": "false"}
    with up.running_server(work_dir, per_file + MIB, deadline, settings, stored) as server:
        sampler = up.RssSampler(server.process.pid, args.interval_ms / 1000)
        sampler.start()
        try:
            with httpx.Client(
                base_url=server.base_url, trust_env=False, timeout=up.http_timeout(deadline)
            ) as client:
                client.headers["Authorization"] = f"Bearer {up.login(client, server)}"
                case_id = up.create_case(client)
                for path, sha256 in sources:
                    up.upload(client, server, case_id, path, sha256, deadline)
                    path.unlink()
                # A warm-up export (an empty matter): what any first export loads once (templates,
                # the deadline rules, the zip code) is in the baseline; the growth is what size costs.
                warm = up.expect(
                    client.post(f"{up.API}/cases/{up.create_case(client)}/exports"), 202, "export"
                )
                _wait_for_export(client, warm["data"]["id"], deadline)
                time.sleep(1.0)
                quiet = time.monotonic()
                time.sleep(1.0)
                baseline = statistics.median(sampler.between(quiet, time.monotonic()) or [sampler.current()])
                hwm_reset = up.reset_peak(sampler.pids)
                began = time.monotonic()
                created = up.expect(client.post(f"{up.API}/cases/{case_id}/exports"), 202, "export")["data"]
                job = _wait_for_export(client, created["id"], deadline)
                export_s = time.monotonic() - began
                if job["status"] != "succeeded":
                    raise up.BenchError(f"the export failed: {job['error']}")
                hwm = sampler.peak_counter() if hwm_reset else 0
                peak = max([*sampler.between(began, time.monotonic()), int(baseline), hwm])
                zip_path = work_dir / "export.zip"
                began = time.monotonic()
                with (
                    client.stream("GET", f"{up.API}/exports/{job['id']}/content") as response,
                    zip_path.open("wb") as out,
                ):
                    if response.status_code != 200:
                        raise up.BenchError(f"download: {response.status_code}")
                    for chunk in response.iter_bytes(MIB):
                        out.write(chunk)
                download_s = time.monotonic() - began
        finally:
            sampler.stop()
    check = verify_export(zip_path)
    if check.broken is not None:
        raise up.BenchError(f"the export does not verify: {check.broken}")
    growth = up.mib(peak - baseline)
    result = {
        "content_store": "s3 (moto)" if args.s3 else "local files",
        "documents": args.files,
        "content_mib": round(up.mib(per_file * args.files), 1),
        "zip_mib": round(up.mib(zip_path.stat().st_size), 1),
        "export_s": round(export_s, 2),
        "download_s": round(download_s, 2),
        "baseline_rss_mib": round(up.mib(baseline), 1),
        "peak_rss_mib": round(up.mib(peak), 1),
        "peak_rss_hwm_mib": round(up.mib(hwm), 1) if hwm_reset else None,
        "growth_mib": round(growth, 1),
        "growth_ok": growth < GROWTH_TARGET_MIB,
        "verified_files": check.files,
        "verified_audit_entries": check.entries,
    }
    print(json.dumps(result, indent=2))
    verdict = "under" if result["growth_ok"] else "OVER"
    print(
        f"export of {result['content_mib']} MiB in {args.files} documents: {export_s:.1f} s; server RSS "
        f"{result['baseline_rss_mib']} -> {result['peak_rss_mib']} MiB (+{result['growth_mib']}, {verdict} "
        f"the {GROWTH_TARGET_MIB:.0f} MiB target); download {download_s:.1f} s; verified"
    )
    if not args.no_save:
        up.RESULTS_DIR.mkdir(parents=True, exist_ok=True)
        name = "export_matter_s3" if args.s3 else "export_matter"
        target = up.RESULTS_DIR / f"{name}-{started_at.strftime('%Y%m%dT%H%M%SZ')}.json"
        payload = {"benchmark": name, "machine": up.machine_facts(work_dir), **result}
        target.write_text(json.dumps(payload, indent=2) + "\n")
        up.log(f"results written to {target.relative_to(up.ROOT)}")
    return 0 if result["growth_ok"] or os.environ.get("BENCH_NO_FAIL") else 1


if __name__ == "__main__":
    sys.exit(main())
