"""A regular package, not a namespace one: fast-diff-match-patch (an eyecite dependency) installs a
top-level `tests` package into site-packages, which would otherwise shadow this directory."""
