"""Quality of the AI pipeline on the labelled set (tests/ai/quality/corpus.jsonl).

Each snippet goes through `process_document` as a .txt file; entities are compared with what a
reviewer marked (tests/ai/quality/README.md gives the conventions), micro-averaged per category,
and the suggested type with the labelled type. The report is printed (`pytest -s` shows it) and the
floors below are enforced. They are the measured figures (2026-11-22) minus a small margin; the
entity rules and the type weighting were developed while looking at this set, so on unseen
documents expect lower figures (docs/decisions/0007-ai-pipeline.md).
"""

from __future__ import annotations

import json
import re
from collections.abc import Callable, Iterable
from pathlib import Path
from typing import Any

import pytest

from casefile.ai.processing import process_document
from casefile.nlp.entities.names import org_key

CORPUS = Path(__file__).parent / "quality" / "corpus.jsonl"
CATEGORIES = ("people", "organizations", "dates", "money", "citations")

# (precision, recall) floors per category, and the type-accuracy floor.
FLOORS: dict[str, tuple[float, float]] = {
    "people": (0.90, 0.85),
    "organizations": (0.92, 0.92),
    "dates": (0.95, 0.95),
    "money": (0.95, 0.95),
    "citations": (0.95, 0.95),
}
TYPE_ACCURACY_FLOOR = 0.75


def _person(text: str) -> str:
    return re.sub(r"[^\w&]+", " ", text.casefold()).strip()


def _citation(text: str) -> str:
    return re.sub(r"\s+", " ", text).strip().casefold()


def _money(value: dict[str, str]) -> str:
    return f"{value['currency']} {value['amount']}"


# How a predicted item and an expected one are compared, per category.
PREDICTED: dict[str, Callable[[dict[str, Any]], str]] = {
    "people": lambda item: _person(item["text"]),
    "organizations": lambda item: org_key(item["text"]),
    "dates": lambda item: str(item["value"]),
    "money": lambda item: _money(item["value"]),
    "citations": lambda item: _citation(item["value"]),
}
EXPECTED: dict[str, Callable[[Any], str]] = {
    "people": _person,
    "organizations": org_key,
    "dates": str,
    "money": _money,
    "citations": _citation,
}


def _load_corpus() -> list[dict[str, Any]]:
    return [json.loads(line) for line in CORPUS.read_text(encoding="utf-8").splitlines() if line.strip()]


def _ratio(numerator: int, denominator: int) -> float:
    return numerator / denominator if denominator else 1.0


def _report_lines(
    counts: dict[str, list[int]], correct_types: int, total: int, misses: Iterable[str]
) -> list[str]:
    lines = [
        "",
        "AI quality on tests/ai/quality/corpus.jsonl",
        f"{'category':14} {'P':>6} {'R':>6}   tp  fp  fn",
    ]
    for category in CATEGORIES:
        tp, fp, fn = counts[category]
        lines.append(
            f"{category:14} {_ratio(tp, tp + fp):6.3f} {_ratio(tp, tp + fn):6.3f} {tp:4} {fp:3} {fn:3}"
        )
    lines.append(f"type accuracy  {correct_types}/{total} = {_ratio(correct_types, total):.3f}")
    lines.extend(misses)
    return lines


@pytest.fixture(scope="module")
def results(tmp_path_factory: pytest.TempPathFactory) -> list[tuple[dict[str, Any], dict[str, Any]]]:
    folder = tmp_path_factory.mktemp("corpus")
    out = []
    for row in _load_corpus():
        path = folder / f"{row['id']}.txt"
        path.write_text(row["text"], encoding="utf-8")
        out.append((row, process_document(path, "text/plain", title=row["title"]).ai))
    return out


def test_corpus_is_well_formed() -> None:
    rows = _load_corpus()
    assert 30 <= len(rows) <= 40
    assert len({r["id"] for r in rows}) == len(rows)
    for row in rows:
        assert 100 <= len(row["text"].split()) <= 400, row["id"]
        assert set(row["expected"]) == set(CATEGORIES), row["id"]
        for value in row["expected"]["dates"]:
            assert re.fullmatch(r"\d{4}-\d{2}-\d{2}", value), row["id"]


def test_entity_and_type_quality(results: list[tuple[dict[str, Any], dict[str, Any]]]) -> None:
    counts = {category: [0, 0, 0] for category in CATEGORIES}
    misses: list[str] = []
    correct_types = 0
    for row, ai in results:
        for category in CATEGORIES:
            predicted = {PREDICTED[category](item) for item in ai["entities"][category]}
            expected = {EXPECTED[category](item) for item in row["expected"][category]}
            counts[category][0] += len(predicted & expected)
            counts[category][1] += len(predicted - expected)
            counts[category][2] += len(expected - predicted)
            if predicted != expected:
                misses.append(
                    f"  {row['id']} {category}: extra {sorted(predicted - expected)}"
                    f" missed {sorted(expected - predicted)}"
                )
        label = ai["suggested_type"]["label"]
        correct_types += label == row["type"]
        if label != row["type"]:
            misses.append(f"  {row['id']} type: {label} (expected {row['type']})")
    report = "\n".join(_report_lines(counts, correct_types, len(results), misses))
    print(report)

    for category, (precision_floor, recall_floor) in FLOORS.items():
        tp, fp, fn = counts[category]
        assert _ratio(tp, tp + fp) >= precision_floor, f"{category} precision\n{report}"
        assert _ratio(tp, tp + fn) >= recall_floor, f"{category} recall\n{report}"
    assert _ratio(correct_types, len(results)) >= TYPE_ACCURACY_FLOOR, report


def test_summaries_are_verbatim_and_short(results: list[tuple[dict[str, Any], dict[str, Any]]]) -> None:
    for row, ai in results:
        sentences = ai["summary"]["sentences"]
        assert 1 <= len(sentences) <= 5, row["id"]
        for sentence in sentences:
            # Single page documents here: the sentence is the text at its offsets, nothing invented.
            assert row["text"][sentence["start"] : sentence["end"]] == sentence["text"], row["id"]
        assert ai["language"] == "en", row["id"]
