"""Search passages stored the way the AI pipeline stores them (`replace_passages`), with
vectors from the real embedder, for tests of search on a server with AI processing turned off."""

from __future__ import annotations

import asyncio
import re
import secrets
from dataclasses import dataclass

import httpx

from casefile.db import Database
from casefile.nlp.embedder import get_embedder
from casefile.nlp.types import TextPassage
from casefile.search.repository import replace_passages
from tests.support.assertions import ok
from tests.support.servers import Api


def chunk_pages(pages: list[str]) -> list[TextPassage]:
    """One passage per paragraph (blank-line separated), with offsets in its page's text."""
    chunks: list[TextPassage] = []
    for number, page in enumerate(pages, start=1):
        for match in re.finditer(r"\S(?:.|\n(?!\s*\n))*", page):
            chunks.append(TextPassage(len(chunks), number, match.start(), match.end(), match.group()))
    return chunks


def index_document(api: Api, document_id: str, case_id: str, pages: list[str]) -> list[TextPassage]:
    """Store the passages of `pages` for the document, as the pipeline would."""
    chunks = chunk_pages(pages)
    store_passages(api, document_id, case_id, chunks)
    return chunks


def store_passages(api: Api, document_id: str, case_id: str, chunks: list[TextPassage]) -> None:
    """Embed the passages and replace the document's with them, in a transaction of our own."""
    vectors = get_embedder().embed([c.text for c in chunks])

    async def run() -> None:
        db = Database(api.settings)
        try:
            async with db.transaction() as session:
                await replace_passages(
                    session, document_id=document_id, case_id=case_id, passages=chunks, vectors=vectors
                )
        finally:
            await db.dispose()

    asyncio.run(run())


@dataclass
class Doc:
    id: str
    case_id: str
    title: str
    pages: list[str]


def add_document(api: Api, client: httpx.Client, case_id: str, title: str, pages: list[str]) -> Doc:
    body = "\f".join(pages).encode()
    r = client.post(
        f"/cases/{case_id}/documents",
        data={"title": title},
        files={"file": (f"{secrets.token_hex(4)}.txt", body, "text/plain")},
    )
    document = ok(r, 201)
    index_document(api, document["id"], case_id, pages)
    return Doc(document["id"], case_id, title, pages)
