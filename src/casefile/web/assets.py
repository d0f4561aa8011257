"""The web app's static files, fingerprinted: `app.css` is served as `/app/static/app.<hash>.css`,
cached by browsers for a year (`immutable`): a new release with changed content has a new name,
so nothing stale is ever served. The files ship inside the package (htmx is vendored from its npm
release, 2.0.11, 0BSD: static/htmx-LICENSE.txt); nothing is loaded from another site."""

from __future__ import annotations

import hashlib
import mimetypes
from dataclasses import dataclass
from functools import cache
from pathlib import Path

from fastapi import APIRouter
from fastapi.responses import Response

from casefile.errors import NotFound

STATIC_DIR = Path(__file__).parent / "static"
STATIC_PREFIX = "/app/static/"
YEAR = 365 * 86_400
SERVED = (".css", ".js", ".svg", ".png", ".ico")


@dataclass(frozen=True)
class Asset:
    body: bytes
    media_type: str
    etag: str


@cache
def _assets() -> tuple[dict[str, str], dict[str, Asset]]:
    """(name -> fingerprinted name, fingerprinted name -> file), read once."""
    urls: dict[str, str] = {}
    files: dict[str, Asset] = {}
    for path in sorted(STATIC_DIR.iterdir()):
        if path.suffix not in SERVED:
            continue
        body = path.read_bytes()
        digest = hashlib.sha256(body).hexdigest()[:12]
        stem, _, suffix = path.name.partition(".")
        served = f"{stem}.{digest}.{suffix}"
        urls[path.name] = STATIC_PREFIX + served
        media_type = mimetypes.guess_type(path.name)[0] or "application/octet-stream"
        if media_type.startswith("text/") or media_type.endswith("javascript"):
            media_type += "; charset=utf-8"
        files[served] = Asset(body, media_type, f'"{digest}"')
    return urls, files


def static_url(name: str) -> str:
    """The fingerprinted URL of a file of static/ (for the templates)."""
    return _assets()[0][name]


router = APIRouter(include_in_schema=False)


@router.get("/app/static/{name}")
async def static_file(name: str) -> Response:
    asset = _assets()[1].get(name)
    if asset is None:
        raise NotFound("No such file")
    return Response(
        asset.body,
        media_type=asset.media_type,
        headers={"Cache-Control": f"public, max-age={YEAR}, immutable", "ETag": asset.etag},
    )
