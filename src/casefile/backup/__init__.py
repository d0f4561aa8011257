"""`casefile backup` and `casefile restore`: the whole service state in one archive.

- `archive`: the archive's format (members, manifest, checksums) and the file primitives that
  writing and reading it share.
- `snapshot`: a consistent copy of the database, per dialect, with the facts read from it.
- `create`: snapshot, then archive database, keys and content under the backup lock.
- `restore`: verify the whole archive, then replace database, keys and content, then migrate.

Consistency: the content list is read from the same snapshot as the database copy (SQLite: from the
copy itself; PostgreSQL: in the REPEATABLE READ transaction whose exported snapshot `pg_dump`
uses). A document deleted after the snapshot still needs its file in the backup, so the backup
holds the backup lock (`casefile.storage.backup_lock`) from before the snapshot until the last
file is copied, and content collection (documents.service.collect_content) removes nothing while
it is held.

Restore verifies every member against the manifest in a staging directory before it touches the
target, so a damaged archive changes nothing.
"""
