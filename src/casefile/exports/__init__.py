"""Matter exports (issue 29, item 3; docs/matter-export.md): a matter's whole file as one zip,
built by a leased job, kept in the content store, checked offline by `casefile export verify`."""
