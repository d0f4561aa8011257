"""AI quality on the set of real documents (issue 13): precision/recall/F1 per entity kind, type
accuracy, search recall@5 and MRR (literal and paraphrase queries apart) and ask accuracy.

    PYTHONPATH=src .venv/bin/python bench/ai_quality.py [--backend sqlite|postgresql] [--misses]

Entities and types need no database. For search and ask a server is started on a fresh database
(AI processing off), the documents are uploaded into one case and the passages and vectors the
pipeline produced are stored as the AI worker stores them (tests/ai/real_set.py, shared with the
tests that enforce the floors). Results also go to bench/results/ai_quality.json.
"""

from __future__ import annotations

import argparse
import json
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))  # the project root, for tests/


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--backend", default="sqlite", choices=["sqlite", "postgresql"])
    parser.add_argument("--misses", action="store_true", help="print every miss")
    args = parser.parse_args()

    from tests.ai import real_set
    from tests.support.servers import running_server

    started = time.perf_counter()
    entities = real_set.evaluate_entities()
    processed_in = time.perf_counter() - started
    print("\n".join(entities.lines()))
    if args.misses:
        print("\n".join(entities.misses))
    print(f"(processing {entities.total} documents took {processed_in:.1f} s)")

    with (
        tempfile.TemporaryDirectory() as tmp,
        running_server(args.backend, Path(tmp), ai_enabled=False) as api,
    ):
        indexed = real_set.index_set(api)
        with api.admin() as client:
            search = real_set.evaluate_search(client, indexed)
            ask = real_set.evaluate_ask(client, indexed)
    print("\n".join(search.lines()))
    if args.misses:
        print("\n".join(search.misses()))
    print("\n".join(ask.lines()))
    if args.misses:
        print("\n".join(ask.misses()))

    results = {
        "documents": entities.total,
        "entities": {
            category: {
                "precision": round(entities.precision(category), 3),
                "recall": round(entities.recall(category), 3),
                "f1": round(entities.f1(category), 3),
            }
            for category in real_set.CATEGORIES
        },
        "type_accuracy": round(entities.type_accuracy, 3),
        "search": {
            name: dict(zip(("recall_at_5", "mrr", "queries"), search.summary(which), strict=True))
            for name, which in (("all", None), ("literal", False), ("paraphrase", True))
        },
        "ask": {"accuracy": round(ask.accuracy, 3), "any_sentence": round(ask.any_accuracy, 3)},
        "backend": args.backend,
    }
    out = ROOT / "bench" / "results"
    out.mkdir(exist_ok=True)
    (out / "ai_quality.json").write_text(json.dumps(results, indent=2) + "\n")


if __name__ == "__main__":
    main()
