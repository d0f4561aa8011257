"""The api_keys queries: how they are listed (`ListSpec`), searched and filtered."""

from __future__ import annotations

from casefile.api_keys.schemas import ApiKeyOut
from casefile.listing import ListSpec, projectable
from casefile.models import ApiKey

API_KEY_LIST = ListSpec(
    model=ApiKey,
    sortable={"created_at": ApiKey.created_at, "name": ApiKey.name, "expires_at": ApiKey.expires_at},
    default_sort="created_at",
    tiebreak=ApiKey.id,
    output_fields=projectable(ApiKeyOut),
)
