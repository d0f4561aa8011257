"""The audit trail: an append-only record of who did what, when and from where, built by the
sequencer into a Merkle log with signed tree heads
(docs/api-conventions.md#audit-trail)."""
