"""Tasks on cases (docs/api-conventions.md#tasks): CRUD on a case, and "my tasks" across cases."""
