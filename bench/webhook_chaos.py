"""Webhook chaos (issue 27, item 3): N events queued on PostgreSQL (with Redis for wake-ups), two
`casefile worker` processes, one of them killed (SIGKILL) and replaced every few seconds, until
every delivery has an outcome. Prints the figures as JSON; exits 1 if any check fails:

- lost (a delivery that did not succeed, or that the receiver never got): 0;
- dead_answered_2xx (a dead delivery the receiver answered 2xx): 0;
- unexplained_duplicates (a reception beyond the first that no interrupted attempt accounts for): 0.

Full size: `python bench/webhook_chaos.py` (5,000 events; about 10 minutes on 2 cores).
`--smoke`: 300 events, the size tests/webhooks/test_chaos.py runs. The scenario itself is
tests/support/chaos.py. Needs PostgreSQL (CASEFILE_TEST_POSTGRES_URL) and Redis
(CASEFILE_TEST_REDIS_URL), as the tests do.
"""

from __future__ import annotations

import argparse
import json
import secrets
import sys
import tempfile
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from tests.support.chaos import SETTINGS, run_chaos
from tests.support.receivers import receiver_server
from tests.support.servers import REDIS_URL, fresh_database, make_settings, serving


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n", 1)[0])
    parser.add_argument("--events", type=int, default=5000)
    parser.add_argument("--smoke", action="store_true", help="300 events")
    parser.add_argument("--workers", type=int, default=2)
    parser.add_argument("--kill-every", type=float, default=3.0, help="seconds between kills (±50 %%)")
    parser.add_argument("--timeout", type=float, default=1800)
    args = parser.parse_args(argv)
    events = 300 if args.smoke else args.events
    with tempfile.TemporaryDirectory() as tmp, receiver_server() as receiver:
        data_dir = Path(tmp) / "data"
        with fresh_database("postgresql", data_dir) as url:
            settings = make_settings(
                data_dir,
                url,
                worker_enabled=False,
                redis_url=REDIS_URL,
                redis_key_prefix=f"chaos-{secrets.token_hex(6)}",
                **SETTINGS,
            )
            with serving(settings) as api:
                figures = run_chaos(
                    api,
                    receiver,
                    Path(tmp),
                    events=events,
                    workers=args.workers,
                    kill_every=args.kill_every,
                    timeout=args.timeout,
                )
    print(json.dumps(figures, indent=2))
    checks = ("lost", "dead_answered_2xx", "unexplained_duplicates")
    return 0 if all(figures[name] == 0 for name in checks) else 1


if __name__ == "__main__":
    sys.exit(main())
