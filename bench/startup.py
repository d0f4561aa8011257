"""Start-up cost of an installation: `casefile --help`, `casefile serve` until `/healthz` answers,
where the import time goes (`python -X importtime`), and (with --sizes) the installed size with
and without the AI extra. See docs/research/bench-notes-2026-11.md, "Start-up and the slim install".

    .venv/bin/python bench/startup.py                       # this tree, this interpreter
    .venv/bin/python bench/startup.py --src /tmp/old/src    # another tree's code, same packages
    .venv/bin/python bench/startup.py --python /tmp/slim/bin/python   # a venv without casefile[ai]
    .venv/bin/python bench/startup.py --sizes               # builds two venvs (needs the registry)
"""

from __future__ import annotations

import argparse
import json
import os
import re
import resource
import socket
import statistics
import subprocess
import sys
import tempfile
import time
import urllib.request
from pathlib import Path

import smoke

ROOT = Path(__file__).resolve().parents[1]


def _env(src: str | None, data_dir: str) -> dict[str, str]:
    env = {k: v for k, v in os.environ.items() if not k.startswith("CASEFILE_")}
    env["CASEFILE_DATA_DIR"] = data_dir
    env["CASEFILE_ADMIN_EMAIL"] = "admin@example.com"
    env["CASEFILE_ADMIN_PASSWORD"] = "change-me-now-please"
    if src:
        env["PYTHONPATH"] = src
    return env


CLI = "import sys; from casefile.cli import main; sys.argv[0] = 'casefile'; main()"


def _children_cpu() -> float:
    usage = resource.getrusage(resource.RUSAGE_CHILDREN)
    return usage.ru_utime + usage.ru_stime


def time_help(python: str, src: str | None, runs: int) -> tuple[list[float], list[float]]:
    """Wall-clock and CPU seconds of `casefile --help` (CPU time is what a quiet machine's wall
    time would be, near enough, on a machine others keep busy)."""
    times, cpu = [], []
    with tempfile.TemporaryDirectory() as data:
        for _ in range(runs):
            started, cpu_before = time.perf_counter(), _children_cpu()
            subprocess.run(
                [python, "-c", CLI, "--help"], env=_env(src, data), check=True, capture_output=True
            )
            times.append(time.perf_counter() - started)
            cpu.append(_children_cpu() - cpu_before)
    return times, cpu


def _process_cpu(pid: int) -> float:
    """CPU seconds the process (and its waited-for children) has used so far (Linux /proc)."""
    fields = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()
    return sum(int(value) for value in fields[11:15]) / os.sysconf("SC_CLK_TCK")


def _free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


def time_serve(python: str, src: str | None, data: str) -> tuple[float, float]:
    """Wall-clock seconds from starting `casefile serve` to the first 200 from /healthz, and the CPU
    seconds the server used until then."""
    port = _free_port()
    started = time.perf_counter()
    process = subprocess.Popen(
        [python, "-c", CLI, "serve", "--port", str(port)],
        env=_env(src, data),
        stdout=subprocess.DEVNULL,
        stderr=subprocess.DEVNULL,
    )
    try:
        while True:
            if process.poll() is not None:
                raise RuntimeError("casefile serve exited")
            try:
                with urllib.request.urlopen(f"http://127.0.0.1:{port}/healthz", timeout=1) as answer:
                    if answer.status == 200:
                        return time.perf_counter() - started, _process_cpu(process.pid)
            except OSError:
                time.sleep(0.01)
    finally:
        process.terminate()
        process.wait(timeout=30)


def import_profile(python: str, src: str | None, module: str, top: int = 12) -> list[tuple[str, float]]:
    """The modules with the largest cumulative import time (seconds), outermost first."""
    with tempfile.TemporaryDirectory() as data:
        done = subprocess.run(
            [python, "-X", "importtime", "-c", f"import {module}"],
            env=_env(src, data),
            check=True,
            capture_output=True,
            text=True,
        )
    rows = []
    for line in done.stderr.splitlines():
        found = re.match(r"import time:\s+\d+ \|\s+(\d+) \|( *)(\S+)", line)
        if found and len(found.group(2)) <= 3:  # top-level imports and their direct children
            rows.append((found.group(3), int(found.group(1)) / 1e6))
    return sorted(rows, key=lambda row: -row[1])[:top]


def site_packages_size(venv: Path) -> int:
    return sum(f.stat().st_size for f in venv.rglob("*") if f.is_file() and not f.is_symlink())


def sizes() -> dict[str, int]:
    found = {}
    with tempfile.TemporaryDirectory() as tmp:
        for name, target in (("casefile", str(ROOT)), ("casefile[ai]", f"{ROOT}[ai]")):
            venv = Path(tmp) / name.replace("[", "-").replace("]", "")
            subprocess.run([sys.executable, "-m", "venv", str(venv)], check=True)
            subprocess.run([venv / "bin" / "pip", "install", "-q", target], check=True)
            found[name] = site_packages_size(venv)
    return found


def main() -> None:
    parser = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    parser.add_argument("--python", default=sys.executable, help="the interpreter of the installation")
    parser.add_argument("--src", default=None, help="a tree's src/ to run instead of the installed casefile")
    parser.add_argument("--runs", type=int, default=7)
    parser.add_argument("--sizes", action="store_true", help="install twice and measure (slow)")
    args = smoke.parse_args(parser, runs=1, sizes=False)
    result: dict[str, object] = {"python": args.python, "src": args.src, "load": os.getloadavg()}
    helps, help_cpu = time_help(args.python, args.src, args.runs)
    result["help_s"] = {"min": min(helps), "median": statistics.median(helps), "cpu_min": min(help_cpu)}
    with tempfile.TemporaryDirectory() as data:
        first = time_serve(args.python, args.src, data)  # migrates an empty database
        restarts = 1 if args.smoke else max(args.runs // 2, 3)
        again = [time_serve(args.python, args.src, data) for _ in range(restarts)]
    result["serve_first_s"] = {"wall": first[0], "cpu": first[1]}
    walls, cpus = [wall for wall, _ in again], [cpu for _, cpu in again]
    result["serve_s"] = {"min": min(walls), "median": statistics.median(walls), "cpu_min": min(cpus)}
    result["load_after"] = os.getloadavg()
    result["imports_cli"] = import_profile(args.python, args.src, "casefile.cli")
    result["imports_app"] = import_profile(args.python, args.src, "casefile.app")
    if args.sizes:
        result["installed_bytes"] = sizes()
    print(json.dumps(result, indent=2))


if __name__ == "__main__":
    main()
