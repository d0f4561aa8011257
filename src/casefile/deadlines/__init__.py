"""Deadlines computed from rule sets (docs/api-conventions.md#deadlines): the rule sets (data files
shipped in `rules/`, and the firm's own in the database), the counting engine, and deadlines saved
as tasks that move with their trigger date."""
