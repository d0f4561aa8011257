"""Document content storage: one small interface, a local-filesystem implementation, an
S3-compatible one (`casefile.storage.s3`, loaded only when configured), and the backup lock that
keeps content files while a backup copies them."""

from __future__ import annotations

from pathlib import Path
from typing import TYPE_CHECKING

from casefile.storage.backup_lock import backup_lock, content_removal_allowed
from casefile.storage.base import ContentStore, is_sha256
from casefile.storage.local import LocalContentStore

if TYPE_CHECKING:
    from casefile.storage.s3 import S3Config


def open_content_store(s3: S3Config | None, content_dir: Path, temp_dir: Path) -> ContentStore:
    """The bucket `s3` names, or files under `content_dir` (the embedded default)."""
    if s3 is None:
        return LocalContentStore(content_dir)
    from casefile.storage.s3 import S3ContentStore

    return S3ContentStore(s3, temp_dir)


__all__ = [
    "ContentStore",
    "LocalContentStore",
    "backup_lock",
    "content_removal_allowed",
    "is_sha256",
    "open_content_store",
]
