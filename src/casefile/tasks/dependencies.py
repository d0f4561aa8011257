"""What the tasks endpoints depend on. A task is part of its case: reading one needs `read:cases`,
creating, changing or deleting one `write:cases` (deleting a task changes the case; it does not
delete it), and the case itself is reached through `cases.access`."""

from __future__ import annotations

from casefile.access.dependencies import CasesRead, CasesWrite

TasksRead = CasesRead
TasksWrite = CasesWrite
