"""Runtime configuration (docs/api-conventions.md#configuration): settings an administrator changes through
the API, kept in the database and read on use, so a change takes effect at once in every process."""
