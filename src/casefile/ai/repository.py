"""The ai queries: how they are listed (`ListSpec`), searched and filtered."""

from __future__ import annotations

from casefile.ai.schemas import JobStatusOut
from casefile.listing import ListSpec, projectable
from casefile.models import JOB_KINDS, JOB_STATUSES, AiJob

JOB_LIST = ListSpec(
    model=AiJob,
    sortable={"created_at": AiJob.created_at, "finished_at": AiJob.finished_at},
    default_sort="created_at",
    tiebreak=AiJob.id,
    output_fields=projectable(JobStatusOut),
    filters={"status": AiJob.status, "kind": AiJob.kind, "document_id": AiJob.document_id},
    filter_choices={"status": JOB_STATUSES, "kind": JOB_KINDS},
)
