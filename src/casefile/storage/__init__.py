"""Document content storage: one small interface, a local-filesystem implementation."""

from casefile.storage.base import ContentStore, is_sha256
from casefile.storage.local import LocalContentStore

__all__ = ["ContentStore", "LocalContentStore", "is_sha256"]
