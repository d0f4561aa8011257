"""The AI pipeline for one document (`process_document`) and for a case (`summarize_case`).

Pure functions over the text toolkit (`casefile.nlp`): no database, no HTTP. They run in a worker
process (a ProcessPoolExecutor whose initializer ends in `warm_up`), so the module-level caches (model,
tokenizer, eyecite, centroids) are per process. The output is deterministic for the same input: no
randomness, stable sorts, one thread for the model.

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
                     "xlsx" | "ocr", "truncated": bool,
                     and for "pdf-text": "ocr_pages": [int], "skipped_pages": [int]},
      "provenance": {"pipeline_version", "embedding_model", "text_sha256"}
    }

Every summary sentence and passage satisfies `pages[page - 1].text[start:end] == text`.
"""

from __future__ import annotations

import hashlib
import logging
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import numpy as np

from casefile.nlp import classify, extract, keywords, stats, summary
from casefile.nlp.embedder import get_embedder
from casefile.nlp.entities import citations, extract_entities, ner
from casefile.nlp.entities.names import org_key
from casefile.nlp.extract.pages import Extraction
from casefile.nlp.passages import make_passages, passage_vectors
from casefile.nlp.sentences import Span, split_sentences
from casefile.nlp.types import EMBEDDING_DIM, NoExtractableText, Page, ProcessingFailed, TextPassage, Vectors

PIPELINE_VERSION = "casefile-ai/1.0"

logger = logging.getLogger(__name__)


@dataclass(frozen=True)
class ProcessedDocument:
    """What processing a document yields. Plain data, picklable: it comes back from the pool process."""

    ai: dict[str, Any]  # stored as the document's `ai` (JSON-ready)
    passages: list[TextPassage]
    vectors: Vectors  # one row per passage
    pages: list[Page] = field(default_factory=list)


def warm_up() -> None:
    """Load the models, the tokenizer, eyecite and the type centroids (the pool's initializer)."""
    get_embedder()
    citations.warm_up()
    ner.warm_up()
    classify.centroids()
    stats.language([Page(1, "The parties agree to the terms of this settlement agreement.")])


def process_document(path: Path, file_type: str, *, title: str | None = None) -> ProcessedDocument:
    """Extract and analyse one file. Raises NoExtractableText (→ skipped) or ProcessingFailed
    (→ failed, with a reason for the user) and nothing else for a bad file."""
    try:
        extraction = extract.extract_full(path, file_type)
        return analyse(extraction, title)
    except (NoExtractableText, ProcessingFailed):
        raise
    except MemoryError as exc:
        raise ProcessingFailed("the file is too large to process") from exc
    except Exception as exc:
        # A library tripping over an odd file must not leak a traceback to the user; the log keeps it.
        logger.exception("processing failed unexpectedly for %s (%s)", path.name, file_type)
        raise ProcessingFailed("the file could not be processed (it may be damaged)") from exc


def analyse(extraction: Extraction, title: str | None) -> ProcessedDocument:
    """The analysis of extracted pages (what `process_document` does after extraction)."""
    pages = extraction.pages
    embedder = get_embedder()
    sentences = [span for page in pages for span in split_sentences(page)]
    # Each sentence is embedded once; passages, the summary and the keywords reuse the vectors.
    sentence_vectors = _sentence_vectors(sentences)
    passages = make_passages(pages, sentences)
    title_vector = embedder.embed([title.strip()])[0] if title and title.strip() else None
    vectors = passage_vectors(passages, sentences, sentence_vectors, title_vector, embedder.embed)
    full_text = "\f".join(p.text for p in pages)
    ai: dict[str, Any] = {
        "summary": _summary(sentences, sentence_vectors),
        "language": stats.language(pages),
        "page_count": len(pages),
        "word_count": stats.word_count(pages),
        "entities": extract_entities(pages),
        "suggested_type": _suggested_type(full_text, sentences, sentence_vectors),
        "keywords": _keywords(pages, vectors),
        "extraction": _extraction_facts(extraction),
        "provenance": {
            "pipeline_version": PIPELINE_VERSION,
            "embedding_model": embedder.model_id,
            "text_sha256": hashlib.sha256(full_text.encode("utf-8")).hexdigest(),
        },
    }
    return ProcessedDocument(ai=ai, passages=passages, vectors=vectors, pages=pages)


# Sentences shorter than this (numbers, "Page 2", a lone heading word) get no vector of their own:
# they say nothing a passage's other sentences do not, and cost a call each.
MIN_EMBEDDED_WORDS = 3


def _sentence_vectors(sentences: list[Span]) -> Vectors:
    """A vector per sentence, zero for the shortest ones; a text repeated on every page (a running
    header, the EDGAR footer) is embedded once."""
    texts = [" ".join(s.text.split()) for s in sentences]
    unique = sorted({t for s, t in zip(sentences, texts, strict=True) if s.words >= MIN_EMBEDDED_WORDS})
    vectors = get_embedder().embed(unique)
    row = {text: i for i, text in enumerate(unique)}
    result = np.zeros((len(sentences), EMBEDDING_DIM), dtype=np.float32)
    for i, text in enumerate(texts):
        if text in row:
            result[i] = vectors[row[text]]
    return result


def _extraction_facts(extraction: Extraction) -> dict[str, Any]:
    facts: dict[str, Any] = {"method": extraction.method, "truncated": extraction.truncated}
    if extraction.method == "pdf-text":
        # Which pages had no text layer: OCR'd, or skipped (shown to the user, not failed).
        facts["ocr_pages"] = list(extraction.ocr_pages)
        facts["skipped_pages"] = list(extraction.skipped_pages)
    return facts


def _summary(sentences: list[Span], sentence_vectors: Vectors) -> dict[str, Any]:
    candidates = summary.prefilter_candidates(summary.summary_candidates(sentences))
    if not candidates:
        # A form or a table has no prose: fall back to its first lines, still verbatim.
        candidates = [s for s in sentences if s.words >= 3][:3]
        chosen = candidates
    else:
        row = {(s.page, s.start, s.end): i for i, s in enumerate(sentences)}
        vectors = sentence_vectors[[row[(s.page, s.start, s.end)] for s in candidates]]
        size = summary.summary_size(len(candidates))
        chosen = [candidates[i] for i in summary.select_summary(candidates, vectors, size)]
    return {
        "text": " ".join(s.text for s in chosen),
        "sentences": [{"text": s.text, "page": s.page, "start": s.start, "end": s.end} for s in chosen],
    }


def _suggested_type(full_text: str, sentences: list[Span], sentence_vectors: Vectors) -> dict[str, object]:
    """The type from the document's opening (its first sentences up to HEAD_WORDS words, their
    vectors already made; the opening embedded itself when it has only short lines) and its text."""
    count, words = 0, 0
    while count < len(sentences) and words < classify.HEAD_WORDS:
        words += sentences[count].words
        count += 1
    weights = np.array([s.words for s in sentences[:count]], dtype=np.float32)
    mean = (weights[:, None] * sentence_vectors[:count]).sum(axis=0)
    if mean.any():
        head = (mean / max(float(np.linalg.norm(mean)), 1e-12)).astype(np.float32)
    else:
        head = get_embedder().embed([classify.head_text(full_text)])[0]
    return classify.suggest_type(head, full_text[:50_000])


def _keywords(pages: list[Page], passage_vectors: Vectors) -> list[str]:
    candidates = keywords.keyword_candidates(pages)
    if not candidates or len(passage_vectors) == 0:
        return []
    document = passage_vectors.mean(axis=0)
    document = (document / max(float(np.linalg.norm(document)), 1e-12)).astype(np.float32)
    return keywords.select_keywords(candidates, get_embedder().embed(candidates), document)


# -- case summary -------------------------------------------------------------------------------

CASE_SUMMARY_SENTENCES = 5
KEY_DATES = 15


def summarize_case(case_title: str, documents: list[tuple[str, str, dict[str, Any]]]) -> dict[str, Any]:
    """The case's `ai` from its processed documents' `ai` dicts: (document_id, title, ai) each.

    {
      "summary": {"text", "sentences": [{"document_id", "version", "text", "page", "start", "end"}]},
      "document_count": int,
      "document_types": {label: count},
      "entities": {category: [{"text", "value"?, "documents": [document_id, ...], "mentions": int}]},
      "key_dates": [{"date": "YYYY-MM-DD", "text", "documents": [document_id, ...]}],
      "provenance": {"pipeline_version", "embedding_model",
                     "documents": [{"document_id", "version", "pipeline_version", "text_sha256"}]}
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
                    "version": ai.get("version", 1),
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
                    {
                        "document_id": doc_id,
                        "version": ai.get("version", 1),
                        **{k: sentence[k] for k in ("text", "page", "start", "end")},
                    }
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
    return org_key(str(item.get("text", "")))


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
