"""Expected tables, written out from the specification (docs/api-conventions.md) rather than read
from the code under test: a test that compares the code with itself cannot fail."""

from __future__ import annotations

# The case lifecycle: the moves allowed from each status (docs/api-conventions.md#cases).
LIFECYCLE: dict[str, set[str]] = {
    "intake": {"active", "closed"},
    "active": {"pending", "on_hold", "closed"},
    "pending": {"active", "on_hold", "closed"},
    "on_hold": {"active", "pending", "closed"},
    "closed": {"active", "archived"},
    "archived": {"closed"},
}
STATUSES = list(LIFECYCLE)

# Priorities from the least urgent to the most: `sort=priority` orders by this, not by name.
PRIORITIES = ["low", "medium", "high", "urgent"]

# The file types an upload may have by default (`uploads.allowed_types` of GET /admin/config).
UPLOAD_TYPES = [
    "application/msword",
    "application/pdf",
    "application/rtf",
    "application/vnd.oasis.opendocument.text",
    "application/vnd.openxmlformats-officedocument.spreadsheetml.sheet",
    "application/vnd.openxmlformats-officedocument.wordprocessingml.document",
    "image/jpeg",
    "image/png",
    "image/tiff",
    "message/rfc822",
    "text/csv",
    "text/html",
    "text/markdown",
    "text/plain",
]
