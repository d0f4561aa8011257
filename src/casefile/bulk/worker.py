"""The bulk worker: claims bulk jobs and does their matters (`bulk.service.run_claim`). Started
with the other background workers (`casefile.background`); several processes may run one each:
a job is leased to one at a time."""

from __future__ import annotations

import functools

from casefile.bulk.service import Claim, claim_next, run_claim
from casefile.runtime import Runtime
from casefile.worker.claims import ClaimWorker


class BulkWorker(ClaimWorker[Claim]):
    name = "bulk worker"

    def __init__(self, runtime: Runtime) -> None:
        super().__init__(
            functools.partial(claim_next, runtime),
            functools.partial(run_claim, runtime),
            runtime.settings.worker_poll_seconds,
        )
