"""Legal holds: a case under an active hold can be neither deleted, purged, nor have its content
changed (docs/api-conventions.md#legal-holds)."""
