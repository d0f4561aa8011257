"""Document content storage: one small interface, a local-filesystem implementation, and the
backup lock that keeps content files while a backup copies them."""

from casefile.storage.backup_lock import backup_lock, content_removal_allowed
from casefile.storage.base import ContentStore, is_sha256
from casefile.storage.local import LocalContentStore

__all__ = ["ContentStore", "LocalContentStore", "backup_lock", "content_removal_allowed", "is_sha256"]
