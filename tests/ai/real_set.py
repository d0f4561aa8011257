"""Evaluation of the AI pipeline on the set of real documents (tests/ai/real, README there).

Shared by the tests that enforce the floors (tests/ai/test_real_quality.py) and by the benchmark
that prints the figures (bench/ai_quality.py), so that both measure the same thing:

- entities and types: each document is extracted from the file it is stored as (PDF, scanned PDF,
  DOCX, HTML, e-mail, Markdown or text) and analysed by `processing.analyse`, the function
  `process_document` runs after extraction; no database.
- search and ask: the documents are uploaded to a server (AI processing off) and the passages and
  vectors `processing.analyse` made (the title weighed in) are stored with
  `replace_passages`, as the AI worker stores them; the queries and questions then go through the
  real `/search` and `/cases/{id}/ask`. All documents sit in one case, so both parts of the split
  are searched among the same 150-odd documents.

The set is split (issue 31) into a development part, the only one rules and thresholds may be
chosen on, and a locked test part that is reported, never tuned to: `split.json`, drawn by
`draw_split` (a seeded random draw stratified by the labelled type). Every report is per part.

Entity comparison reuses the normalisation of the small synthetic set (tests/ai/test_quality.py).
"""

from __future__ import annotations

import asyncio
import functools
import json
import math
import random
import re
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import httpx

from casefile.ai import processing
from casefile.db import Database
from casefile.nlp import extract
from casefile.nlp.extract.pages import Extraction
from casefile.nlp.types import NoExtractableText, Page, TextPassage, Vectors
from casefile.search.repository import replace_passages
from tests.ai.test_quality import CATEGORIES, EXPECTED, PREDICTED
from tests.support.assertions import ok
from tests.support.factories import new_case
from tests.support.servers import Api

ROOT = Path(__file__).parent / "real"


def _jsonl(name: str) -> list[dict[str, Any]]:
    lines = (ROOT / name).read_text(encoding="utf-8").splitlines()
    return [json.loads(line) for line in lines if line.strip()]


# The documents in use: all (None), or the first few for a benchmark's `--smoke` (`only_first`).
_FIRST: int | None = None


def only_first(count: int) -> None:
    """Use the first `count` documents of the set, and the queries and questions about them alone:
    for `bench/ai_*.py --smoke`, before anything is analysed (the tests use the whole set)."""
    global _FIRST  # noqa: PLW0603 (one switch for the process, set once by a benchmark's main)
    _FIRST = count
    processed.cache_clear()


def _in_use() -> set[str]:
    return {row["id"] for row in labels()}


def labels() -> list[dict[str, Any]]:
    return _jsonl("labels.jsonl")[:_FIRST]


def sources() -> list[dict[str, Any]]:
    return _jsonl("sources.jsonl")


def search_queries() -> list[dict[str, Any]]:
    rows = _jsonl("search_queries.jsonl")
    return rows if _FIRST is None else [q for q in rows if set(q["expected"]) <= _in_use()]


def ask_questions() -> list[dict[str, Any]]:
    rows = _jsonl("ask_questions.jsonl")
    return rows if _FIRST is None else [q for q in rows if q["document"] in _in_use()]


@functools.cache
def _files() -> dict[str, str]:
    return {row["id"]: row["file"] for row in sources()}


def document_path(doc_id: str) -> Path:
    return ROOT / _files()[doc_id]


# The media type each stored file is uploaded and extracted as, by its extension.
FILE_TYPES = {
    ".txt": "text/plain",
    ".md": "text/markdown",
    ".pdf": "application/pdf",
    ".docx": "application/vnd.openxmlformats-officedocument.wordprocessingml.document",
    ".html": "text/html",
    ".eml": "message/rfc822",
}


def file_type(doc_id: str) -> str:
    return FILE_TYPES[document_path(doc_id).suffix]


# ---- the split (issue 31) ------------------------------------------------------------------------

SPLIT_SEED = 31
TEST_SHARE = 0.4
PARTS = ("development", "test")


def draw_split(rows: list[dict[str, Any]], seed: int = SPLIT_SEED) -> dict[str, Any]:
    """The development/test split: per labelled type (sorted), the type's ids (sorted) shuffled by
    one `random.Random(seed)` and the first ceil(TEST_SHARE x n) of them put in the test part."""
    rng = random.Random(seed)
    test: list[str] = []
    for kind in sorted({row["type"] for row in rows}):
        ids = sorted(row["id"] for row in rows if row["type"] == kind)
        rng.shuffle(ids)
        test.extend(ids[: math.ceil(TEST_SHARE * len(ids))])
    development = sorted({row["id"] for row in rows} - set(test))
    return {
        "seed": seed,
        "test_share": TEST_SHARE,
        "stratified_by": "type",
        "development": development,
        "test": sorted(test),
    }


def split() -> dict[str, list[str]]:
    data: dict[str, list[str]] = json.loads((ROOT / "split.json").read_text(encoding="utf-8"))
    return data


def part_of(doc_id: str) -> str:
    return "test" if doc_id in set(split()["test"]) else "development"


@dataclass(frozen=True)
class Analysed:
    pages: list[Page]
    entities: dict[str, list[dict[str, Any]]]
    suggested_type: dict[str, object]
    passages: list[TextPassage]
    vectors: Vectors


def _analyse(path: Path, title: str) -> Analysed:
    """What `process_document` computes, by the same function (`processing.analyse`). A scan read
    where OCR is not installed has no text: it is scored as finding nothing."""
    try:
        extraction = extract.extract_full(path, FILE_TYPES[path.suffix])
    except NoExtractableText:
        extraction = Extraction([Page(1, "")], "none", False)
    result = processing.analyse(extraction, title)
    return Analysed(
        pages=result.pages,
        entities=result.ai["entities"],
        suggested_type=result.ai["suggested_type"],
        passages=result.passages,
        vectors=result.vectors,
    )


@functools.cache
def processed() -> dict[str, Analysed]:
    """Every document analysed once per process (the tests and the bench share it)."""
    return {row["id"]: _analyse(document_path(row["id"]), row["title"]) for row in labels()}


def _ratio(numerator: int, denominator: int) -> float:
    return numerator / denominator if denominator else 1.0


# ---- entities and types --------------------------------------------------------------------------


@dataclass
class EntityReport:
    counts: dict[str, list[int]]  # category -> [tp, fp, fn]
    correct_types: int
    total: int
    misses: list[str] = field(default_factory=list)
    part: str = "all"

    def precision(self, category: str) -> float:
        tp, fp, _ = self.counts[category]
        return _ratio(tp, tp + fp)

    def recall(self, category: str) -> float:
        tp, _, fn = self.counts[category]
        return _ratio(tp, tp + fn)

    def f1(self, category: str) -> float:
        p, r = self.precision(category), self.recall(category)
        return 2 * p * r / (p + r) if p + r else 0.0

    @property
    def type_accuracy(self) -> float:
        return _ratio(self.correct_types, self.total)

    def lines(self) -> list[str]:
        out = [
            f"AI quality on the real set, {self.part} part ({self.total} documents)",
            f"{'category':14} {'P':>6} {'R':>6} {'F1':>6}   tp  fp  fn",
        ]
        for category in CATEGORIES:
            tp, fp, fn = self.counts[category]
            out.append(
                f"{category:14} {self.precision(category):6.3f} {self.recall(category):6.3f}"
                f" {self.f1(category):6.3f} {tp:4} {fp:3} {fn:3}"
            )
        out.append(f"type accuracy  {self.correct_types}/{self.total} = {self.type_accuracy:.3f}")
        return out


def _key(category: str, text: str) -> str:
    """Citations compare without the comma some codes put before `§` ("tit. 10, § 7301")."""
    return re.sub(r",?\s*§", " §", text) if category == "citations" else text


def evaluate_entities(part: str | None = None) -> EntityReport:
    """Entities and types of one part of the split (None: the whole set)."""
    results = processed()
    report = EntityReport({c: [0, 0, 0] for c in CATEGORIES}, 0, 0, part=part or "all")
    for row in labels():
        if part is not None and part_of(row["id"]) != part:
            continue
        result = results[row["id"]]
        for category in CATEGORIES:
            predicted = {_key(category, PREDICTED[category](item)) for item in result.entities[category]}
            expected = {_key(category, EXPECTED[category](item)) for item in row["expected"][category]}
            report.counts[category][0] += len(predicted & expected)
            report.counts[category][1] += len(predicted - expected)
            report.counts[category][2] += len(expected - predicted)
            if predicted != expected:
                report.misses.append(
                    f"  {row['id']} {category}: extra {sorted(predicted - expected)}"
                    f" missed {sorted(expected - predicted)}"
                )
        label = result.suggested_type["label"]
        report.total += 1
        report.correct_types += label == row["type"]
        if label != row["type"]:
            report.misses.append(f"  {row['id']} type: {label} (expected {row['type']})")
    return report


# ---- search and ask over a server ------------------------------------------------------------------


@dataclass
class IndexedSet:
    case_id: str
    ids: dict[str, str]  # server document id -> set id
    by_set_id: dict[str, str]  # set id -> server document id


def _store(api: Api, document_id: str, case_id: str, document: Analysed) -> None:
    async def run() -> None:
        db = Database(api.settings)
        try:
            async with db.transaction() as session:
                await replace_passages(
                    session,
                    document_id=document_id,
                    case_id=case_id,
                    passages=document.passages,
                    vectors=document.vectors,
                )
        finally:
            await db.dispose()

    asyncio.run(run())


def index_set(api: Api) -> IndexedSet:
    """Upload every document into one case and store the pipeline's own passages and vectors."""
    results = processed()
    with api.admin() as admin:
        case = new_case(admin, title="Real documents")
        ids: dict[str, str] = {}
        for row in labels():
            path = document_path(row["id"])
            r = admin.post(
                f"/cases/{case['id']}/documents",
                data={"title": row["title"]},
                files={"file": (path.name, path.read_bytes(), file_type(row["id"]))},
            )
            document = ok(r, 201)
            _store(api, document["id"], case["id"], results[row["id"]])
            ids[document["id"]] = row["id"]
    return IndexedSet(case["id"], ids, {v: k for k, v in ids.items()})


def query_part(expected: list[str]) -> str | None:
    """The part a query or question belongs to: its documents' (None when they straddle both)."""
    parts = {part_of(doc_id) for doc_id in expected}
    return parts.pop() if len(parts) == 1 else None


@dataclass
class SearchReport:
    rows: list[dict[str, Any]]
    part: str = "all"

    def summary(self, paraphrase: bool | None = None) -> tuple[float, float, int]:
        rows = [r for r in self.rows if paraphrase is None or r["paraphrase"] == paraphrase]
        if not rows:
            return 0.0, 0.0, 0
        recall = sum(r["recall"] for r in rows) / len(rows)
        mrr = sum(r["reciprocal_rank"] for r in rows) / len(rows)
        return recall, mrr, len(rows)

    def lines(self) -> list[str]:
        out = [f"search over the real set, {self.part} part ({len(self.rows)} queries):"]
        for name, which in (("all", None), ("literal", False), ("paraphrase", True)):
            recall, mrr, n = self.summary(which)
            out.append(f"  {name:11} n={n:3}  recall@5 {recall:.3f}  MRR {mrr:.3f}")
        return out

    def misses(self) -> list[str]:
        return [
            f"  missed {r['id']} {r['query']!r}: expected {r['expected']}, top 5 {r['found']}"
            for r in self.rows
            if r["recall"] < 1
        ]


def evaluate_search(client: httpx.Client, indexed: IndexedSet, part: str | None = None) -> SearchReport:
    rows: list[dict[str, Any]] = []
    for query in search_queries():
        if part is not None and query_part(query["expected"]) != part:
            continue
        hits = ok(client.get("/search", params={"q": query["query"], "kind": "document", "limit": 5}))
        found = [indexed.ids.get(h["id"], "?") for h in hits]
        expected = set(query["expected"])
        rank = next((i for i, f in enumerate(found, start=1) if f in expected), None)
        rows.append(
            {
                **query,
                "found": found,
                "recall": len(expected & set(found)) / len(expected),
                "reciprocal_rank": 1 / rank if rank else 0.0,
            }
        )
    return SearchReport(rows, part or "all")


def answer_span(doc_id: str, answer: str) -> tuple[int, int, int]:
    """(page, start, end) of the labelled answer in the document, whitespace-insensitively."""
    pattern = r"\s+".join(re.escape(part) for part in answer.split())
    for page in processed()[doc_id].pages:
        match = re.search(pattern, page.text)
        if match is not None:
            return page.number, match.start(), match.end()
    raise LookupError(f"{doc_id}: answer not found verbatim: {answer[:60]!r}")


@dataclass
class AskReport:
    rows: list[dict[str, Any]]
    part: str = "all"

    @property
    def accuracy(self) -> float:
        return _ratio(sum(r["first"] for r in self.rows), len(self.rows))

    @property
    def any_accuracy(self) -> float:
        return _ratio(sum(r["any"] for r in self.rows), len(self.rows))

    def lines(self) -> list[str]:
        n = len(self.rows)
        return [
            f"ask over the real set, {self.part} part ({n} questions):",
            f"  first answer sentence is the labelled one: {sum(r['first'] for r in self.rows)}/{n}"
            f" = {self.accuracy:.3f}",
            f"  labelled sentence among the answer's:      {sum(r['any'] for r in self.rows)}/{n}"
            f" = {self.any_accuracy:.3f}",
        ]

    def misses(self) -> list[str]:
        return [f"  wrong {r['id']} {r['question']!r}: got {r['got']!r}" for r in self.rows if not r["first"]]


def evaluate_ask(client: httpx.Client, indexed: IndexedSet, part: str | None = None) -> AskReport:
    """An answer is right when its sentence overlaps the labelled sentence in the labelled document."""
    rows: list[dict[str, Any]] = []
    for item in ask_questions():
        if part is not None and part_of(item["document"]) != part:
            continue
        page, start, end = answer_span(item["document"], item["answer"])
        target = indexed.by_set_id[item["document"]]
        answer = ok(client.post(f"/cases/{indexed.case_id}/ask", json={"question": item["question"]}))
        sentences = answer["answer"]["sentences"]
        hits = [
            s["document_id"] == target and s["page"] == page and s["start"] < end and start < s["end"]
            for s in sentences
        ]
        rows.append(
            {
                **item,
                "first": bool(hits and hits[0]),
                "any": any(hits),
                "got": f"{indexed.ids.get(sentences[0]['document_id'], '?')}: {sentences[0]['text'][:90]}"
                if sentences
                else None,
            }
        )
    return AskReport(rows, part or "all")
