"""The audit trail: an append-only, hash-chained record of who did what, when and from where
(docs/api-conventions.md#audit-trail)."""
