"""`--smoke`, the mode every benchmark has: the same code path at tiny sizes, in seconds, on
loopback and SQLite (PostgreSQL only where the script is about it and it answers on 127.0.0.1),
results not saved. It proves the script still runs against today's code; its figures mean
nothing. scripts/bench-smoke.sh runs every script so, and CI runs that.
"""

from __future__ import annotations

import argparse
from typing import Any

HELP = "run at tiny sizes in seconds, to check that the script still works (its figures mean nothing)"


def parse_args(
    parser: argparse.ArgumentParser, argv: list[str] | None = None, **tiny: Any
) -> argparse.Namespace:
    """`parser`'s arguments, plus `--smoke`; with it, the `tiny` values replace the options'."""
    parser.add_argument("--smoke", action="store_true", help=HELP)
    args = parser.parse_args(argv)
    if args.smoke:
        for name, value in tiny.items():
            if not hasattr(args, name):
                raise AttributeError(f"--smoke sets {name!r}, which the parser does not have")
            setattr(args, name, value)
    return args
