"""The API key a path names. (Only administrators reach these endpoints: the `/admin` router
checks that before its routes' own dependencies run.)"""

from __future__ import annotations

from typing import Annotated

from fastapi import Depends

from casefile.api_keys.service import get_api_key
from casefile.models import ApiKey
from casefile.request_scope import in_path

ApiKeyInPath = Annotated[ApiKey, Depends(in_path(get_api_key, "key_id"))]
