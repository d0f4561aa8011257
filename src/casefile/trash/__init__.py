"""The trash: listing, restoring and purging deleted cases and documents, and the retention purge
(docs/api-conventions.md#trash)."""
