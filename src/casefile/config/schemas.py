from __future__ import annotations

from typing import Annotated, Self

from pydantic import AwareDatetime, Field, WithJsonSchema, field_validator, model_validator

from casefile.schemas import InModel, Timestamp
from casefile.storage.sniff import SUPPORTED_TYPES

# Published as the choices they are; checked by `Uploads`, whose message lists them.
UploadType = Annotated[str, WithJsonSchema({"type": "string", "enum": sorted(SUPPORTED_TYPES)})]

# The largest upload an administrator may allow at run time: uploads stream to disk, so this bounds
# disk use per request, not memory.
MAX_UPLOAD_CEILING = 16 * 1024**3
# The most tries a webhook's retry policy may ask for (the first attempt included).
MAX_ATTEMPTS_LIMIT = 10


class RetryPolicy(InModel):
    """How a webhook's failed deliveries are retried: the default is configuration's, a webhook
    may have its own."""

    max_attempts: int = Field(default=5, ge=1, le=MAX_ATTEMPTS_LIMIT)
    backoff_multiplier: float = Field(default=2, ge=1, le=10)
    initial_delay: int = Field(default=60, ge=1, le=3600, description="Seconds before the first retry")


class Maintenance(InModel):
    scheduled_start: AwareDatetime | None = None
    scheduled_end: AwareDatetime | None = None
    message: str | None = Field(default=None, max_length=1000)

    @model_validator(mode="after")
    def _window(self) -> Self:
        if (self.scheduled_start is None) != (self.scheduled_end is None):
            raise ValueError("Give both scheduled_start and scheduled_end, or neither")
        if self.scheduled_start and self.scheduled_end and self.scheduled_end <= self.scheduled_start:
            raise ValueError("scheduled_end must be after scheduled_start")
        return self


class Uploads(InModel):
    max_size_bytes: int = Field(ge=1, le=MAX_UPLOAD_CEILING)
    allowed_types: list[UploadType] = Field(min_length=1, max_length=len(SUPPORTED_TYPES))

    @field_validator("allowed_types")
    @classmethod
    def _known_types(cls, value: list[str]) -> list[str]:
        unknown = [t for t in value if t not in SUPPORTED_TYPES]
        if unknown:
            raise ValueError(
                f"Not a type Casefile recognises: {', '.join(unknown)}. "
                f"Choose from: {', '.join(sorted(SUPPORTED_TYPES))}"
            )
        return sorted(set(value))


class Ai(InModel):
    enabled: bool


class Webhooks(InModel):
    default_retry_policy: RetryPolicy


# Trashed cases and documents are purged after this many days (docs/api-conventions.md#trash).
DEFAULT_TRASH_DAYS = 30
MAX_TRASH_DAYS = 3650


class Retention(InModel):
    trash_days: int = Field(ge=1, le=MAX_TRASH_DAYS)


class Config(InModel):
    """The effective configuration: every field has a value."""

    maintenance: Maintenance
    uploads: Uploads
    ai: Ai
    webhooks: Webhooks
    retention: Retention


class ConfigOut(Config):
    updated_at: Timestamp | None
    updated_by: str | None


class MaintenancePatch(InModel):
    scheduled_start: AwareDatetime | None = None
    scheduled_end: AwareDatetime | None = None
    message: str | None = Field(default=None, max_length=1000)


class UploadsPatch(InModel):
    max_size_bytes: int | None = Field(default=None, ge=1, le=MAX_UPLOAD_CEILING)
    allowed_types: list[UploadType] | None = Field(
        default=None, min_length=1, max_length=len(SUPPORTED_TYPES)
    )


class AiPatch(InModel):
    enabled: bool | None = None


class RetryPolicyPatch(InModel):
    # The bounds of RetryPolicy, published here too (the merged policy is validated as a whole).
    max_attempts: int | None = Field(default=None, ge=1, le=MAX_ATTEMPTS_LIMIT)
    backoff_multiplier: float | None = Field(default=None, ge=1, le=10)
    initial_delay: int | None = Field(default=None, ge=1, le=3600)


class WebhooksPatch(InModel):
    default_retry_policy: RetryPolicyPatch | None = None


class RetentionPatch(InModel):
    trash_days: int | None = Field(default=None, ge=1, le=MAX_TRASH_DAYS)


class ConfigPatch(InModel):
    """Only the fields given change; a field given as null returns to its default (for the
    maintenance window: none). The result is validated as a whole (e.g. end after start)."""

    maintenance: MaintenancePatch | None = None
    uploads: UploadsPatch | None = None
    ai: AiPatch | None = None
    webhooks: WebhooksPatch | None = None
    retention: RetentionPatch | None = None
