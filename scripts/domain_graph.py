"""Print the import graph between Casefile's top-level packages (the domains, access, auth, audit,
events, models), and every cycle in it: `python scripts/domain_graph.py [--mermaid]`.

`lint-imports` enforces the order (pyproject.toml); this shows it, for docs/architecture.md and
for a reviewer comparing two revisions. Type-only imports (`if TYPE_CHECKING:`) are left out, as
the contracts leave them out.
"""

from __future__ import annotations

import argparse
import sys

import grimp

# The top-level packages shown: the domains and the layers right below them. The core's modules
# (db, listing, errors, …) sit under all of them and would only add an edge from each.
SHOWN = [
    "search",
    "trash",
    "backup",
    "calendar_feed",
    "signin",
    "deadlines",
    "tasks",
    "cases",
    "notes",
    "documents",
    "contacts",
    "ai",
    "conflicts",
    "webhooks",
    "groups",
    "holds",
    "users",
    "api_keys",
    "config",
    "access",
    "auth",
    "events",
    "audit",
    "models",
    "",
]


def edges(packages: list[str]) -> dict[str, set[str]]:
    graph = grimp.build_graph("casefile", exclude_type_checking_imports=True)
    present = [p for p in packages if f"casefile.{p}" in graph.modules]
    found: dict[str, set[str]] = {p: set() for p in present}
    for importer in present:
        for imported in present:
            if importer != imported and graph.direct_import_exists(
                importer=f"casefile.{importer}", imported=f"casefile.{imported}", as_packages=True
            ):
                found[importer].add(imported)
    return found


def cycles(graph: dict[str, set[str]]) -> list[list[str]]:
    """The strongly connected components of more than one package (Tarjan's algorithm)."""
    index: dict[str, int] = {}
    low: dict[str, int] = {}
    stack: list[str] = []
    on_stack: set[str] = set()
    components: list[list[str]] = []

    def visit(node: str) -> None:
        index[node] = low[node] = len(index)
        stack.append(node)
        on_stack.add(node)
        for target in sorted(graph[node]):
            if target not in index:
                visit(target)
                low[node] = min(low[node], low[target])
            elif target in on_stack:
                low[node] = min(low[node], index[target])
        if low[node] == index[node]:
            component = []
            while True:
                member = stack.pop()
                on_stack.discard(member)
                component.append(member)
                if member == node:
                    break
            if len(component) > 1:
                components.append(sorted(component))

    for node in sorted(graph):
        if node not in index:
            visit(node)
    return components


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--mermaid", action="store_true", help="print a Mermaid flowchart")
    args = parser.parse_args()
    graph = edges(SHOWN)
    if args.mermaid:
        print("flowchart TD")
        for importer in sorted(graph):
            for imported in sorted(graph[importer]):
                print(f"  {importer} --> {imported}")
    else:
        for importer in sorted(graph):
            print(f"{importer} -> {', '.join(sorted(graph[importer])) or '(nothing)'}")
    two_way = sorted((a, b) for a in graph for b in graph[a] if a < b and a in graph[b])
    found = cycles(graph)
    print(f"\npackages in a cycle: {len(found)} group(s) {found}; two-way pairs: {len(two_way)} {two_way}")
    return 1 if found else 0


if __name__ == "__main__":
    sys.exit(main())
