"""AI quality on the set of real documents (issues 13 and 31): precision/recall/F1 per entity kind,
type accuracy, search recall@5 and MRR (literal and paraphrase queries apart) and ask accuracy,
for the development part and the locked test part of the split (tests/ai/real/split.json), and the
gap between them.

    PYTHONPATH=src .venv/bin/python bench/ai_quality.py [--backend sqlite|postgresql] [--misses]
        [--part development|test|both] [--out ai_quality]

Only the development part may be looked at while choosing rules and thresholds (`--part
development`, `--misses` lists its misses); the test part is scored at the end of a change and
reported, never tuned to (`--misses` prints no test-part miss).

Entities and types need no database. For search and ask a server is started on a fresh database
(AI processing off), all documents are uploaded into one case and the passages and vectors the
pipeline produced are stored as the AI worker stores them (tests/ai/real_set.py, shared with the
tests that enforce the floors). Results also go to bench/results/<out>.json.
"""

from __future__ import annotations

import argparse
import json
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

import smoke

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))  # the project root, for tests/

# The measures of issue 31's "done when", in the order the table shows them.
MEASURES = (
    "people",
    "organizations",
    "dates",
    "money",
    "citations",
    "type accuracy",
    "search recall@5 literal",
    "search recall@5 paraphrase",
    "ask",
)


def _figures(part: str, client: Any, indexed: Any, misses: bool) -> dict[str, Any]:
    from tests.ai import real_set
    from tests.ai.test_quality import CATEGORIES

    entities = real_set.evaluate_entities(part)
    search = real_set.evaluate_search(client, indexed, part)
    ask = real_set.evaluate_ask(client, indexed, part)
    print("\n".join(["", *entities.lines(), *search.lines(), *ask.lines()]))
    if misses and part == "development":
        print("\n".join([*entities.misses, *search.misses(), *ask.misses()]))
    figures: dict[str, Any] = {category: round(entities.f1(category), 3) for category in CATEGORIES}
    figures["type accuracy"] = round(entities.type_accuracy, 3)
    figures["search recall@5 literal"] = round(search.summary(False)[0], 3)
    figures["search recall@5 paraphrase"] = round(search.summary(True)[0], 3)
    figures["ask"] = round(ask.accuracy, 3)
    figures["details"] = {
        "documents": entities.total,
        "entities": {
            category: {
                "precision": round(entities.precision(category), 3),
                "recall": round(entities.recall(category), 3),
                "f1": round(entities.f1(category), 3),
                "tp_fp_fn": entities.counts[category],
            }
            for category in CATEGORIES
        },
        "search": {
            name: dict(zip(("recall_at_5", "mrr", "queries"), search.summary(which), strict=True))
            for name, which in (("all", None), ("literal", False), ("paraphrase", True))
        },
        "ask": {
            "accuracy": round(ask.accuracy, 3),
            "any_sentence": round(ask.any_accuracy, 3),
            "questions": len(ask.rows),
        },
    }
    return figures


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--backend", default="sqlite", choices=["sqlite", "postgresql"])
    parser.add_argument("--misses", action="store_true", help="print every miss of the development part")
    parser.add_argument("--part", default="both", choices=["development", "test", "both"])
    parser.add_argument("--out", default="ai_quality", help="results file name under bench/results/")
    parser.add_argument("--documents", type=int, default=None, help="the first N documents only")
    args = smoke.parse_args(parser, documents=3, out=None)

    from tests.ai import real_set
    from tests.support.servers import running_server

    if args.documents is not None:
        real_set.only_first(args.documents)

    parts = list(real_set.PARTS) if args.part == "both" else [args.part]
    started = time.perf_counter()
    real_set.processed()
    print(f"(analysing {len(real_set.labels())} documents took {time.perf_counter() - started:.1f} s)")
    results: dict[str, Any] = {"backend": args.backend, "parts": {}}
    with (
        tempfile.TemporaryDirectory() as tmp,
        running_server(args.backend, Path(tmp), ai_enabled=False) as api,
    ):
        indexed = real_set.index_set(api)
        with api.admin() as client:
            for part in parts:
                results["parts"][part] = _figures(part, client, indexed, args.misses)

    gap_heading = "          gap" if len(parts) == 2 else ""
    print(f"\n{'measure':28}" + "".join(f"{part:>13}" for part in parts) + gap_heading)
    for measure in MEASURES:
        values = [results["parts"][part][measure] for part in parts]
        line = f"{measure:28}" + "".join(f"{value:13.3f}" for value in values)
        if len(values) == 2:
            line += f"{values[0] - values[1]:+13.3f}"
        print(line)
    if len(parts) == 2:
        results["gap"] = {
            m: round(results["parts"]["development"][m] - results["parts"]["test"][m], 3) for m in MEASURES
        }
    if args.out is None:
        return
    out = ROOT / "bench" / "results"
    out.mkdir(exist_ok=True)
    (out / f"{args.out}.json").write_text(json.dumps(results, indent=2) + "\n")


if __name__ == "__main__":
    main()
