"""The AI pipeline for one document (`process_document`) and for a case (`summarize_case`).

Pure functions: no database, no HTTP. They run in a worker process (a ProcessPoolExecutor whose
initializer is `warm_up`), so the module-level caches (model, tokenizer, eyecite, centroids) are
per process. The output is deterministic for the same input: no randomness, stable sorts, one
thread for the model.

The document's `ai` dict (JSON-ready; `processed_at` is added by the caller):

    {
      "summary": {"text": str, "sentences": [{"text", "page", "start", "end"}]},
      "language": "en" | ... | "und",
      "page_count": int, "word_count": int,
      "entities": {
        "people":        [{"text", "occurrences": [{"page", "start", "end"}]}],
        "organizations": [{"text", "occurrences": [...]}],
        "dates":         [{"text", "value": "YYYY-MM-DD", "occurrences": [...]}],
        "money":         [{"text", "value": {"amount": "12500.00", "currency": "USD"}, "occurrences": [...]}],
        "citations":     [{"text", "value": "347 U.S. 483", "type": "case" | "statute" | "court_rule",
                           ...fields (volume, reporter, page, plaintiff, defendant, pin_cite, court,
                           year | code, section, title | rule), "occurrences": [...]}]
      },
      "suggested_type": {"label": str, "confidence": float},
      "keywords": [str, ...],
      "extraction": {"method": "pdf-text" | "docx" | "text" | "html" | "eml" | "rtf" | "odt" |
                     "xlsx" | "ocr", "truncated": bool},
      "provenance": {"pipeline_version", "embedding_model", "text_sha256"}
    }

Every summary sentence and chunk satisfies `pages[page - 1].text[start:end] == text`.
"""

from __future__ import annotations

import hashlib
import logging
import re
from pathlib import Path
from typing import Any

import numpy as np

from casefile.ai import analysis, classify, entities, extract
from casefile.ai.analysis import Span
from casefile.ai.embedder import get_embedder
from casefile.ai.types import Chunk, NoExtractableText, Page, ProcessedDocument, ProcessingFailed, Vectors

PIPELINE_VERSION = "casefile-ai/1.0"

CHUNK_MIN_WORDS = 120
CHUNK_MAX_WORDS = 200
OVERLAP_MAX_WORDS = 40  # the last sentence of a chunk starts the next one when it is this short

logger = logging.getLogger(__name__)


def warm_up() -> None:
    """Load the model, the tokenizer, eyecite and the type centroids (the pool's initializer)."""
    get_embedder()
    entities.warm_up()
    classify.centroids()
    analysis.language([Page(1, "The parties agree to the terms of this settlement agreement.")])


def process_document(path: Path, file_type: str, *, title: str | None = None) -> ProcessedDocument:
    """Extract and analyse one file. Raises NoExtractableText (→ skipped) or ProcessingFailed
    (→ failed, with a reason for the user) and nothing else for a bad file."""
    try:
        extraction = extract.extract_full(path, file_type)
        return _analyse(extraction, title)
    except (NoExtractableText, ProcessingFailed):
        raise
    except MemoryError as exc:
        raise ProcessingFailed("the file is too large to process") from exc
    except Exception as exc:
        # A library tripping over an odd file must not leak a traceback to the user; the log keeps it.
        logger.exception("processing failed unexpectedly for %s (%s)", path.name, file_type)
        raise ProcessingFailed("the file could not be processed (it may be damaged)") from exc


def _analyse(extraction: extract.Extraction, title: str | None) -> ProcessedDocument:
    pages = extraction.pages
    embedder = get_embedder()
    sentences = [span for page in pages for span in analysis.split_sentences(page)]
    chunks = make_chunks(pages, sentences)
    prefix = f"{title.strip()}\n" if title and title.strip() else ""
    vectors = embedder.embed([prefix + c.text for c in chunks])
    full_text = "\f".join(p.text for p in pages)
    ai: dict[str, Any] = {
        "summary": _summary(sentences),
        "language": analysis.language(pages),
        "page_count": len(pages),
        "word_count": analysis.word_count(pages),
        "entities": entities.extract_entities(pages),
        "suggested_type": _suggested_type(full_text),
        "keywords": _keywords(pages, vectors),
        "extraction": {"method": extraction.method, "truncated": extraction.truncated},
        "provenance": {
            "pipeline_version": PIPELINE_VERSION,
            "embedding_model": embedder.model_id,
            "text_sha256": hashlib.sha256(full_text.encode("utf-8")).hexdigest(),
        },
    }
    return ProcessedDocument(ai=ai, chunks=chunks, vectors=vectors, pages=pages)


def _summary(sentences: list[Span]) -> dict[str, Any]:
    candidates = analysis.prefilter_candidates(analysis.summary_candidates(sentences))
    if not candidates:
        # A form or a table has no prose: fall back to its first lines, still verbatim.
        candidates = [s for s in sentences if s.words >= 3][:3]
        chosen = candidates
    else:
        vectors = get_embedder().embed([s.text for s in candidates])
        size = analysis.summary_size(len(candidates))
        chosen = [candidates[i] for i in analysis.select_summary(candidates, vectors, size)]
    return {
        "text": " ".join(s.text for s in chosen),
        "sentences": [{"text": s.text, "page": s.page, "start": s.start, "end": s.end} for s in chosen],
    }


def _suggested_type(full_text: str) -> dict[str, object]:
    head = get_embedder().embed([classify.head_text(full_text)])[0]
    return classify.suggest_type(head, full_text[:50_000])


def _keywords(pages: list[Page], chunk_vectors: Vectors) -> list[str]:
    candidates = analysis.keyword_candidates(pages)
    if not candidates or len(chunk_vectors) == 0:
        return []
    document = chunk_vectors.mean(axis=0)
    document = (document / max(float(np.linalg.norm(document)), 1e-12)).astype(np.float32)
    return analysis.select_keywords(candidates, get_embedder().embed(candidates), document)


# -- chunks -------------------------------------------------------------------------------------


def make_chunks(pages: list[Page], sentences: list[Span]) -> list[Chunk]:
    """Passages of ~CHUNK_MIN_WORDS..CHUNK_MAX_WORDS words, made of whole sentences of one page;
    a short last sentence is repeated at the start of the next chunk (overlap). A sentence longer
    than the maximum is cut at word boundaries."""
    chunks: list[Chunk] = []
    by_page: dict[int, list[Span]] = {}
    for span in sentences:
        for piece in _split_long(pages[span.page - 1], span):
            by_page.setdefault(piece.page, []).append(piece)
    for number in sorted(by_page):
        _chunk_page(pages[number - 1], by_page[number], chunks)
    return chunks


def _chunk_page(page: Page, spans: list[Span], chunks: list[Chunk]) -> None:
    group: list[Span] = []
    words = 0
    for span in spans:
        if group and words + span.words > CHUNK_MAX_WORDS:
            _emit(page, group, chunks)
            last = group[-1]
            group, words = ([last], last.words) if last.words <= OVERLAP_MAX_WORDS else ([], 0)
        group.append(span)
        words += span.words
        if words >= CHUNK_MIN_WORDS:
            _emit(page, group, chunks)
            last = group[-1]
            group, words = (
                ([last], last.words) if last.words <= OVERLAP_MAX_WORDS and span is not spans[-1] else ([], 0)
            )
    if group and not (chunks and chunks[-1].page == page.number and chunks[-1].end >= group[-1].end):
        _emit(page, group, chunks)


def _emit(page: Page, group: list[Span], chunks: list[Chunk]) -> None:
    start, end = group[0].start, group[-1].end
    chunks.append(Chunk(index=len(chunks), page=page.number, start=start, end=end, text=page.text[start:end]))


def _split_long(page: Page, span: Span) -> list[Span]:
    if span.words <= CHUNK_MAX_WORDS:
        return [span]
    pieces = []
    words = [(m.start(), m.end()) for m in _WORD_RE.finditer(page.text, span.start, span.end)]
    step = (CHUNK_MIN_WORDS + CHUNK_MAX_WORDS) // 2
    for i in range(0, len(words), step):
        start, end = words[i][0], words[min(i + step, len(words)) - 1][1]
        pieces.append(Span(span.page, start, end, page.text[start:end]))
    return pieces


_WORD_RE = re.compile(r"\S+")


# -- case summary -------------------------------------------------------------------------------

CASE_SUMMARY_SENTENCES = 5
KEY_DATES = 15


def summarize_case(case_title: str, documents: list[tuple[str, str, dict[str, Any]]]) -> dict[str, Any]:
    """The case's `ai` from its processed documents' `ai` dicts: (document_id, title, ai) each.

    {
      "summary": {"text", "sentences": [{"document_id", "text", "page", "start", "end"}]},
      "document_count": int,
      "document_types": {label: count},
      "entities": {category: [{"text", "value"?, "documents": [document_id, ...], "mentions": int}]},
      "key_dates": [{"date": "YYYY-MM-DD", "text", "documents": [document_id, ...]}],
      "provenance": {"pipeline_version", "embedding_model",
                     "documents": [{"document_id", "pipeline_version", "text_sha256"}]}
    }

    Summary sentences are the documents' own summary sentences (verbatim, with their place), the
    ones most central across the case, at most one per document until every document has one.
    """
    ordered = sorted(documents, key=lambda d: d[0])
    return {
        "summary": _case_summary(case_title, ordered),
        "document_count": len(ordered),
        "document_types": _type_counts(ordered),
        "entities": _merged_entities(ordered),
        "key_dates": _key_dates(ordered),
        "provenance": {
            "pipeline_version": PIPELINE_VERSION,
            "embedding_model": get_embedder().model_id,
            "documents": [
                {
                    "document_id": doc_id,
                    "pipeline_version": ai.get("provenance", {}).get("pipeline_version"),
                    "text_sha256": ai.get("provenance", {}).get("text_sha256"),
                }
                for doc_id, _, ai in ordered
            ],
        },
    }


def _case_summary(case_title: str, documents: list[tuple[str, str, dict[str, Any]]]) -> dict[str, Any]:
    sentences: list[dict[str, Any]] = []
    for doc_id, _, ai in documents:
        for sentence in ai.get("summary", {}).get("sentences", []):
            if all(k in sentence for k in ("text", "page", "start", "end")):
                sentences.append(
                    {"document_id": doc_id, **{k: sentence[k] for k in ("text", "page", "start", "end")}}
                )
    if not sentences:
        return {"text": "", "sentences": []}
    vectors = get_embedder().embed([s["text"] for s in sentences])
    title_vector = get_embedder().embed([case_title])[0] if case_title.strip() else None
    centrality = (vectors @ vectors.T).mean(axis=1)
    if title_vector is not None:
        centrality = centrality + 0.2 * (vectors @ title_vector)  # what the case is called matters
    order = sorted(range(len(sentences)), key=lambda i: (-float(centrality[i]), i))
    chosen: list[int] = []
    covered: set[str] = set()
    document_count = len({s["document_id"] for s in sentences})
    # First pass: the best sentence of each document; then the best of the rest.
    for i in order:
        if len(chosen) < CASE_SUMMARY_SENTENCES and sentences[i]["document_id"] not in covered:
            chosen.append(i)
            covered.add(sentences[i]["document_id"])
    for i in order:
        if len(chosen) >= min(CASE_SUMMARY_SENTENCES, max(document_count, 3)):
            break
        if i not in chosen and all(float(vectors[i] @ vectors[j]) < 0.85 for j in chosen):
            chosen.append(i)
    picked = [sentences[i] for i in sorted(chosen)]
    return {"text": " ".join(s["text"] for s in picked), "sentences": picked}


def _type_counts(documents: list[tuple[str, str, dict[str, Any]]]) -> dict[str, int]:
    counts: dict[str, int] = {}
    for _, _, ai in documents:
        label = ai.get("suggested_type", {}).get("label")
        if label:
            counts[label] = counts.get(label, 0) + 1
    return dict(sorted(counts.items()))


def _entity_key(category: str, item: dict[str, Any]) -> str:
    value = item.get("value")
    if isinstance(value, dict):
        return f"{value.get('currency')} {value.get('amount')}"
    if value:
        return str(value)
    return entities.org_key(str(item.get("text", "")))


def _merged_entities(documents: list[tuple[str, str, dict[str, Any]]]) -> dict[str, list[dict[str, Any]]]:
    merged: dict[str, list[dict[str, Any]]] = {}
    for category in ("people", "organizations", "dates", "money", "citations"):
        items: dict[str, dict[str, Any]] = {}
        for doc_id, _, ai in documents:
            for item in ai.get("entities", {}).get(category, []):
                key = _entity_key(category, item)
                entry = items.setdefault(key, {"text": item.get("text", ""), "documents": [], "mentions": 0})
                if "value" in item:
                    entry["value"] = item["value"]
                if doc_id not in entry["documents"]:
                    entry["documents"].append(doc_id)
                entry["mentions"] += len(item.get("occurrences", [])) or 1
        # Most widespread first: what recurs across the case's documents is what it is about.
        merged[category] = sorted(
            items.values(), key=lambda e: (-len(e["documents"]), -e["mentions"], e["text"])
        )
    return merged


def _key_dates(documents: list[tuple[str, str, dict[str, Any]]]) -> list[dict[str, Any]]:
    dates: dict[str, dict[str, Any]] = {}
    for doc_id, _, ai in documents:
        for item in ai.get("entities", {}).get("dates", []):
            value = item.get("value")
            if not isinstance(value, str):
                continue
            entry = dates.setdefault(value, {"date": value, "text": item.get("text", value), "documents": []})
            if doc_id not in entry["documents"]:
                entry["documents"].append(doc_id)
    # The dates most documents mention, then shown in calendar order: a timeline of the case.
    top = sorted(dates.values(), key=lambda e: (-len(e["documents"]), e["date"]))[:KEY_DATES]
    return sorted(top, key=lambda e: e["date"])
