"""What the deadline endpoints depend on. Rule sets are read by anyone who reads cases and added
with `write:config` (a rule set is firm-wide configuration, like the runtime configuration);
computing reads a case (`read:cases`), saving the result changes it (`write:cases` as well)."""

from __future__ import annotations

from typing import Annotated

from fastapi import Depends

from casefile.access.dependencies import CasesRead, CasesWrite
from casefile.auth.dependencies import Require
from casefile.auth.permissions import Permission, Principal

RuleSetsRead = CasesRead
RuleSetsWrite = Annotated[Principal, Depends(Require(Permission.WRITE_CONFIG))]
DeadlinesRead = CasesRead
DeadlinesWrite = CasesWrite
