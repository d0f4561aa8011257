"""AI throughput on real documents (issue 31): pages per CPU-second of the whole `process_document`
(extraction, OCR, sentences, embeddings, summary, entities, type, keywords) over the documents of
tests/ai/real, in one process as in a worker of the AI pool, and the peak memory of that process.

    PYTHONPATH=src .venv/bin/python bench/ai_throughput.py [--repeat 1] [--profile]

CPU time is the process's own (`time.process_time`, onnxruntime runs one thread) plus its
children's (tesseract and pdftoppm, for the scanned pages). Pages are the documents' own. The
figures are given with and without the scanned documents (OCR costs seconds a page, the rest
milliseconds). `--profile` (needs pyinstrument, not a project dependency) prints where the time
goes. Results go to bench/results/ai_throughput.json.
"""

from __future__ import annotations

import argparse
import json
import resource
import sys
import time
from pathlib import Path
from typing import Any

import smoke

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))  # the project root, for tests/


def _children_cpu() -> float:
    usage = resource.getrusage(resource.RUSAGE_CHILDREN)
    return usage.ru_utime + usage.ru_stime


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--repeat", type=int, default=1, help="process the set this many times")
    parser.add_argument("--profile", action="store_true", help="profile with pyinstrument")
    parser.add_argument("--documents", type=int, default=None, help="the first N documents only")
    args = smoke.parse_args(parser, documents=2)

    from casefile.ai import processing
    from tests.ai import real_set

    if args.documents is not None:
        real_set.only_first(args.documents)

    started = time.perf_counter()
    processing.warm_up()
    warm_up_seconds = time.perf_counter() - started
    rss_after_warm_up = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss

    profiler = None
    if args.profile:
        from pyinstrument import Profiler

        profiler = Profiler(interval=0.002)
        profiler.start()
    rows = []
    for _ in range(args.repeat):
        for row in real_set.labels():
            path = real_set.document_path(row["id"])
            cpu, children, wall = time.process_time(), _children_cpu(), time.perf_counter()
            result = processing.process_document(path, real_set.file_type(row["id"]), title=row["title"])
            rows.append(
                {
                    "id": row["id"],
                    "pages": result.ai["page_count"],
                    "words": result.ai["word_count"],
                    "ocr": result.ai["extraction"]["method"] == "ocr"
                    or bool(result.ai["extraction"].get("ocr_pages")),
                    "cpu": time.process_time() - cpu + _children_cpu() - children,
                    "wall": time.perf_counter() - wall,
                }
            )
    if profiler is not None:
        profiler.stop()
        print(profiler.output_text(unicode=True, color=False, show_all=False))

    def summary(selected: list[dict[str, float]]) -> dict[str, float]:
        pages = sum(r["pages"] for r in selected)
        cpu = sum(r["cpu"] for r in selected)
        return {
            "documents": len(selected),
            "pages": pages,
            "words": sum(r["words"] for r in selected),
            "cpu_seconds": round(cpu, 2),
            "wall_seconds": round(sum(r["wall"] for r in selected), 2),
            "pages_per_cpu_second": round(pages / cpu, 2) if cpu else 0.0,
            "words_per_cpu_second": round(sum(r["words"] for r in selected) / cpu) if cpu else 0,
        }

    results: dict[str, Any] = {
        "warm_up_seconds": round(warm_up_seconds, 2),
        "rss_after_warm_up_mb": round(rss_after_warm_up / 1024),
        "peak_rss_mb": round(resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024),
        "all": summary(rows),
        "without_ocr": summary([r for r in rows if not r["ocr"]]),
        "ocr_only": summary([r for r in rows if r["ocr"]]),
    }
    for name in ("all", "without_ocr", "ocr_only"):
        figures = results[name]
        print(
            f"{name:12} {figures['documents']:4} documents {figures['pages']:4} pages "
            f"{figures['cpu_seconds']:8.1f} CPU-s  {figures['pages_per_cpu_second']:6.2f} pages/CPU-s "
            f"{figures['words_per_cpu_second']:6} words/CPU-s"
        )
    print(
        f"warm-up {results['warm_up_seconds']} s; RSS after warm-up {results['rss_after_warm_up_mb']} MB; "
        f"peak RSS {results['peak_rss_mb']} MB"
    )
    if args.smoke:
        return
    out = ROOT / "bench" / "results"
    out.mkdir(exist_ok=True)
    (out / "ai_throughput.json").write_text(json.dumps(results, indent=2) + "\n")


if __name__ == "__main__":
    main()
