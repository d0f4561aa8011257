"""What an answer may show its caller (docs/api-conventions.md#permissions): the one place where a
row becomes the body of a response for a principal.

- A write answer shows no more than the caller may read: without the read permission of the
  row's domain (`write` does not imply `read`), the answer is only `{"id": …}`.
- Some fields need more than that domain's read permission: a case's `ai` quotes its documents, so
  it is shown only with `read:documents` (null otherwise, as for a case never summarized).
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any, ClassVar

from pydantic import BaseModel

from casefile.auth.permissions import Permission, Principal
from casefile.schemas import OutModel


class IdOnlyOut(BaseModel):
    """The write answer of a caller who may not read what it wrote (for the OpenAPI document:
    write endpoints answer `Envelope[XOut | IdOnlyOut]`)."""

    id: str


class VisibleOut(OutModel):
    """A response shape whose content depends on who asks: `dump_for(row, principal)`."""

    read_permission: ClassVar[Permission]
    # Fields shown only with a further permission; hidden ones are null.
    field_permissions: ClassVar[Mapping[str, Permission]] = {}

    @classmethod
    def dump_for(cls, obj: Any, principal: Principal) -> dict[str, Any]:
        data = cls.dump(obj)
        if not principal.can(cls.read_permission):
            return {"id": data["id"]}
        for name, needed in cls.field_permissions.items():
            if not principal.can(needed):
                data[name] = None
        return data
