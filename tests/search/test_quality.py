"""Search quality on the labelled corpus (tests/ai/quality): recall@5 and MRR of `/search` over
documents, for realistic lawyer queries, half of them paraphrases that share no key word with
the documents they should find (checked here, so the set stays honest).

Each corpus text is one page, cut into passages of whole paragraphs (up to ~120 words), embedded
with the real model and stored through `replace_passages`; the queries go through the
real API. The floors are the measured values (docs/research/bench-notes-2026-11.md, "Search over passages")
minus a margin.
"""

from __future__ import annotations

import json
import re
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from casefile.nlp.types import TextPassage
from casefile.nlp.words import content_words
from tests.support.assertions import ok
from tests.support.factories import new_case
from tests.support.indexing import store_passages
from tests.support.servers import Api

CORPUS = Path(__file__).parents[1] / "ai" / "quality" / "corpus.jsonl"  # the AI tests' labelled set
QUERIES = Path(__file__).parent / "quality" / "search_queries.jsonl"
RECALL_AT_5_FLOOR = 0.75
MRR_FLOOR = 0.70
PARAPHRASE_RECALL_AT_5_FLOOR = 0.60
PASSAGE_WORDS = 120


def load(path: Path) -> list[dict[str, Any]]:
    return [json.loads(line) for line in path.read_text().splitlines() if line.strip()]


def passages(text: str) -> list[TextPassage]:
    """Whole paragraphs, merged up to about PASSAGE_WORDS words, with offsets in the page."""
    chunks: list[TextPassage] = []
    start = end = None
    for match in re.finditer(r"\S(?:.|\n(?!\s*\n))*", text):
        if start is not None and end is not None and len(text[start : match.end()].split()) > PASSAGE_WORDS:
            chunks.append(TextPassage(len(chunks), 1, start, end, text[start:end]))
            start = None
        start = match.start() if start is None else start
        end = match.end()
    if start is not None and end is not None:
        chunks.append(TextPassage(len(chunks), 1, start, end, text[start:end]))
    return chunks


def _shares_a_word(query: str, text: str) -> list[str]:
    tokens = {t.lower() for t in re.findall(r"[^\W_]+", text)}
    return [
        w
        for w in content_words(query)
        if len(w) > 1 and any(t == w or (len(w) >= 5 and t[:5] == w[:5]) for t in tokens)
    ]


@pytest.fixture(scope="module")
def corpus_index(search_api: Api) -> Iterator[dict[str, str]]:
    """The corpus uploaded and indexed; maps document id -> corpus id."""
    corpus = load(CORPUS)
    with search_api.admin() as admin:
        case = new_case(admin, title="Quality corpus")
        ids: dict[str, str] = {}
        for item in corpus:
            r = admin.post(
                f"/cases/{case['id']}/documents",
                data={"title": item["title"]},
                files={"file": (f"{item['id']}.txt", item["text"].encode(), "text/plain")},
            )
            document = ok(r, 201)
            chunks = passages(item["text"])
            assert all(item["text"][c.start : c.end] == c.text for c in chunks)
            store_passages(search_api, document["id"], case["id"], chunks)
            ids[document["id"]] = item["id"]
    yield ids


def test_paraphrase_queries_share_no_key_word_with_their_targets() -> None:
    corpus = {item["id"]: item for item in load(CORPUS)}
    queries = load(QUERIES)
    assert len(queries) >= 20
    assert sum(q["paraphrase"] for q in queries) >= len(queries) // 2
    for query in queries:
        assert all(e in corpus for e in query["expected"]), query
        if query["paraphrase"]:
            for expected in query["expected"]:
                target = corpus[expected]
                shared = _shares_a_word(query["query"], f"{target['title']} {target['text']}")
                assert not shared, (query["id"], expected, shared)


def test_search_recall_and_mrr(search_api: Api, corpus_index: dict[str, str], capsys) -> None:
    queries = load(QUERIES)
    results: list[dict[str, Any]] = []
    with search_api.admin() as admin:
        for query in queries:
            hits = ok(admin.get("/search", params={"q": query["query"], "kind": "document", "limit": 5}))
            found = [corpus_index.get(h["id"], "?") for h in hits]
            expected = set(query["expected"])
            rank = next((i for i, f in enumerate(found, start=1) if f in expected), None)
            results.append(
                {
                    **query,
                    "found": found,
                    "recall": len(expected & set(found)) / len(expected),
                    "reciprocal_rank": 1 / rank if rank else 0.0,
                }
            )

    def summary(rows: list[dict[str, Any]]) -> tuple[float, float]:
        return (
            sum(r["recall"] for r in rows) / len(rows),
            sum(r["reciprocal_rank"] for r in rows) / len(rows),
        )

    recall, mrr = summary(results)
    paraphrases = [r for r in results if r["paraphrase"]]
    p_recall, p_mrr = summary(paraphrases)
    k_recall, k_mrr = summary([r for r in results if not r["paraphrase"]])
    with capsys.disabled():
        print(f"\nsearch quality ({len(results)} queries, {len(paraphrases)} paraphrases):")
        print(f"  all:         recall@5 {recall:.3f}  MRR {mrr:.3f}")
        print(f"  keywords:    recall@5 {k_recall:.3f}  MRR {k_mrr:.3f}")
        print(f"  paraphrases: recall@5 {p_recall:.3f}  MRR {p_mrr:.3f}")
        for r in results:
            if r["recall"] < 1:
                print(f"  missed {r['id']} {r['query']!r}: expected {r['expected']}, top 5 {r['found']}")
    assert recall >= RECALL_AT_5_FLOOR
    assert mrr >= MRR_FLOOR
    assert p_recall >= PARAPHRASE_RECALL_AT_5_FLOOR


def test_semantic_floor_keeps_unrelated_queries_empty(search_api: Api, corpus_index: dict[str, str]) -> None:
    """Queries about nothing in the corpus bring no semantic hit above the similarity floor."""
    with search_api.admin() as admin:
        for query in ("recipe for chocolate cake", "football world cup results", "weather forecast tomorrow"):
            hits = ok(admin.get("/search", params={"q": query, "kind": "document"}))
            assert [h for h in hits if "semantic" in h["matched"]] == [], (query, hits)
