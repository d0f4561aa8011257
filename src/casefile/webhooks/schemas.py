from __future__ import annotations

from typing import Annotated, Any

from pydantic import AwareDatetime, BaseModel, Field, WithJsonSchema, field_validator

from casefile.config.schemas import RetryPolicy
from casefile.events.catalogue import EVENT_GROUPS, EVENT_NAMES
from casefile.schemas import InModel, OutModel, Timestamp


def _valid_subscriptions(value: list[str]) -> list[str]:
    unknown = [
        name
        for name in value
        if name != "*" and name not in EVENT_NAMES and not (name.endswith(".*") and name[:-2] in EVENT_GROUPS)
    ]
    if unknown:
        raise ValueError(f"Unknown event(s): {', '.join(unknown)}. Use catalogue names, '*' or '<group>.*'")
    return list(dict.fromkeys(value))


# The published names (validated by the rules above and below, which say what is wrong).
EventName = Annotated[str, WithJsonSchema({"type": "string", "enum": list(EVENT_NAMES)})]
Subscription = Annotated[
    str,
    WithJsonSchema(
        {"type": "string", "enum": ["*", *sorted(f"{group}.*" for group in EVENT_GROUPS), *EVENT_NAMES]}
    ),
]


def _any_subset_of(model: type[BaseModel]) -> dict[str, Any]:
    """The JSON Schema of some of `model`'s fields (a PATCH's merge), none required, no others."""
    schema = model.model_json_schema()
    fields = {
        name: {k: v for k, v in field.items() if k != "default"}
        for name, field in schema["properties"].items()
    }
    return {"type": "object", "properties": fields, "additionalProperties": False}


# A webhook's retry policy on PUT/PATCH: the fields given replace the stored ones, and the merge
# is checked as a whole `RetryPolicy` (casefile.webhooks.service.update_webhook).
RetryPolicyChange = Annotated[dict[str, Any], WithJsonSchema(_any_subset_of(RetryPolicy))]
Url = Field(min_length=1, max_length=2048)
CaseIds = Field(
    default=None,
    min_length=1,
    max_length=1000,
    description="Only the events of these matters (events without a matter are not sent)",
)
CaseTypes = Field(
    default=None,
    min_length=1,
    max_length=100,
    description="Only the events of matters of these types (any letter case)",
)
CaseId = Annotated[str, Field(min_length=1, max_length=40)]
CaseType = Annotated[str, Field(min_length=1, max_length=100)]
Secret = Field(min_length=16, max_length=256, description="Used to sign deliveries; write-only")


class WebhookCreate(InModel):
    name: str = Field(min_length=1, max_length=200)
    url: str = Url
    events: list[Subscription] = Field(min_length=1, max_length=100)
    secret: str = Secret
    active: bool = True
    retry_policy: RetryPolicy | None = None
    case_ids: list[CaseId] | None = CaseIds
    case_types: list[CaseType] | None = CaseTypes

    _events = field_validator("events")(_valid_subscriptions)


class WebhookUpdate(InModel):
    """PUT and PATCH alike: any subset. `retry_policy` fields not given keep their values."""

    not_null = ("name", "url", "events", "secret", "active", "retry_policy")

    name: str | None = Field(default=None, min_length=1, max_length=200)
    url: str | None = Field(default=None, min_length=1, max_length=2048)
    events: list[Subscription] | None = Field(default=None, min_length=1, max_length=100)
    secret: str | None = Field(default=None, min_length=16, max_length=256)
    active: bool | None = Field(
        default=None, description="A webhook its circuit disabled is enabled by a successful test, not here"
    )
    retry_policy: RetryPolicyChange | None = None
    case_ids: list[CaseId] | None = CaseIds
    case_types: list[CaseType] | None = CaseTypes

    @field_validator("events")
    @classmethod
    def events_known(cls, value: list[str] | None) -> list[str] | None:
        return None if value is None else _valid_subscriptions(value)


class RotateSecret(InModel):
    secret: str | None = Field(default=None, min_length=16, max_length=256, description="Default: generated")
    grace_period_seconds: int = Field(default=86_400, ge=0, le=7 * 86_400)


class TestDelivery(InModel):
    event_type: EventName
    test_data: dict[str, Any] = Field(default_factory=dict)

    @field_validator("event_type")
    @classmethod
    def known_event(cls, value: str) -> str:
        if value not in EVENT_NAMES:
            raise ValueError("Name an event of the catalogue")
        return value


class WebhookOut(OutModel):
    id: str
    name: str
    url: str
    events: list[str]
    active: bool
    retry_policy: RetryPolicy
    case_ids: list[str] | None
    case_types: list[str] | None
    failing_since: Timestamp | None = Field(description="Since when every attempt failed (None: healthy)")
    consecutive_failures: int
    disabled_reason: str | None = Field(
        description="Why its circuit disabled it (None: it did not); a successful test enables it again"
    )
    created_at: Timestamp
    updated_at: Timestamp


class AttemptOut(OutModel):
    number: int
    started_at: Timestamp
    finished_at: Timestamp | None
    duration_ms: int | None
    status_code: int | None
    success: bool | None
    error: str | None
    response_body: str | None
    interrupted: bool = Field(
        default=False, description="Cut off by the worker's crash: not one of the delivery's tries"
    )


class DeliveryOut(OutModel):
    id: str
    webhook_id: str
    event: str
    event_id: str = Field(
        description="The payload's `id` (`webhook_…`), the same for every delivery of the event"
    )
    status: str
    attempt_count: int
    max_attempts: int
    next_attempt_at: Timestamp | None
    last_status_code: int | None
    last_error: str | None
    created_at: Timestamp
    updated_at: Timestamp
    succeeded_at: Timestamp | None


class DeliveryDetail(DeliveryOut):
    data: dict[str, Any]
    test: bool
    attempts: list[AttemptOut]


class TestOutcome(BaseModel):
    delivery: DeliveryDetail
    attempt: AttemptOut


class RecoverDeliveries(InModel):
    since: AwareDatetime = Field(description="Deliveries made from this moment (inclusive)")
    until: AwareDatetime = Field(description="...up to this one (exclusive)")


class RecoveryOut(OutModel):
    id: str
    job_id: str = Field(description="The same as `id`: the job's progress is read at its `Location`")
    webhook_id: str
    since: Timestamp
    until: Timestamp
    status: str = Field(description="`running`, `completed` or `failed` (post it again to finish it)")
    total: int = Field(description="Failed and dead deliveries in the window when the job started")
    requeued: int
    error: str | None
    created_at: Timestamp
    finished_at: Timestamp | None


class EventTypeOut(BaseModel):
    name: str
    group: str
    description: str
    data_schema: dict[str, Any] = Field(description="JSON Schema (2020-12) of the event's `data`")
