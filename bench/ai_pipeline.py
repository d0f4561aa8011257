"""AI pipeline benchmark (issue 6): model load time, pages/s of extraction + analysis of a text PDF
on one core, embeddings/s, and the memory of a worker with the models loaded.

    .venv/bin/python bench/ai_pipeline.py [--pages 50] [--chunks 256]

Everything runs in this one process, as in a worker of the pool: onnxruntime is limited to one
thread by the embedder. Results go to bench/results/ai_pipeline.json.
"""

from __future__ import annotations

import argparse
import json
import resource
import tempfile
import time
from pathlib import Path

import smoke

SENTENCES = [
    "Tenant shall pay monthly base rent of $18,600.00 on the first day of each month.",
    "If Tenant fails to pay rent when due, Landlord may terminate this Lease after ten days' notice.",
    "Defendant Meridian Credit Services, LLC sent Plaintiff a letter on February 2, 2024.",
    "Summary judgment is appropriate where there is no genuine dispute as to any material fact.",
    "See Celotex Corp. v. Catrett, 477 U.S. 317, 322 (1986); 42 U.S.C. § 1983.",
    "The Supplier shall meet 99.9% monthly availability, failing which service credits apply.",
    "Ms. Karen Liu of Frost & Abernathy LLP responded on September 25, 2024.",
    "Each party's total liability in any contract year is limited to £150,000.",
    "The witness testified that the leak had continued for at least six months before discovery.",
    "IT IS ORDERED that the motion is GRANTED and Defendant shall produce the documents.",
]


def _status_kb(field: str) -> int:
    for line in Path("/proc/self/status").read_text().splitlines():
        if line.startswith(field + ":"):
            return int(line.split()[1])
    return 0


def make_pdf(path: Path, pages: int) -> int:
    """A text PDF of `pages` pages of ~330 words each; returns the word count."""
    import sys

    sys.path.insert(0, str(Path(__file__).resolve().parent.parent))  # the project root, for tests/
    from tests.support.factories import text_pdf  # the stdlib PDF writer the tests use

    texts = []
    for number in range(pages):
        rotated = SENTENCES[number % len(SENTENCES) :] + SENTENCES[: number % len(SENTENCES)]
        texts.append(f"Page {number + 1}. " + " ".join(rotated * 3))
    path.write_bytes(text_pdf(texts))
    return sum(len(t.split()) for t in texts)


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--pages", type=int, default=50)
    parser.add_argument("--chunks", type=int, default=256)
    args = smoke.parse_args(parser, pages=2, chunks=8)

    rss_start = _status_kb("VmRSS")
    started = time.perf_counter()
    from casefile.ai import processing
    from casefile.nlp.embedder import get_embedder

    imported = time.perf_counter()
    processing.warm_up()
    loaded = time.perf_counter()

    with tempfile.TemporaryDirectory() as tmp:
        pdf = Path(tmp) / "bench.pdf"
        words = make_pdf(pdf, args.pages)
        from casefile.nlp.extract import extract

        t0 = time.perf_counter()
        extract(pdf, "application/pdf")
        extract_seconds = time.perf_counter() - t0
        t0 = time.perf_counter()
        result = processing.process_document(pdf, "application/pdf", title="Benchmark")
        process_seconds = time.perf_counter() - t0

    chunk_text = " ".join((" ".join(SENTENCES) + " ").split()[:150])
    texts = [f"{i} {chunk_text}" for i in range(args.chunks)]
    embedder = get_embedder()
    embedder.embed(texts[:32])
    t0 = time.perf_counter()
    embedder.embed(texts)
    embed_seconds = time.perf_counter() - t0

    figures = {
        "date": time.strftime("%Y-%m-%d"),
        "pages": args.pages,
        "words": words,
        "chunks_of_document": len(result.passages),
        "import_seconds": round(imported - started, 2),
        "model_load_seconds": round(loaded - imported, 2),
        "extract_pages_per_second": round(args.pages / extract_seconds, 1),
        "process_pages_per_second": round(args.pages / process_seconds, 2),
        "process_seconds": round(process_seconds, 2),
        "embeddings_per_second_150_words_batch_32": round(args.chunks / embed_seconds, 1),
        "rss_mb_before_import": round(rss_start / 1024, 1),
        "rss_mb_loaded_after_run": round(_status_kb("VmRSS") / 1024, 1),
        "peak_rss_mb": round(resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024, 1),
    }
    print(json.dumps(figures, indent=2))
    if args.smoke:
        return
    out = Path(__file__).parent / "results"
    out.mkdir(exist_ok=True)
    (out / "ai_pipeline.json").write_text(json.dumps(figures, indent=2) + "\n")


if __name__ == "__main__":
    main()
