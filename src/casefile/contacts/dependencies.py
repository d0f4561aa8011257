"""What the contacts and parties endpoints depend on: the permissions on contacts, and the contact a
path names. (The order of parameters matters: see `casefile.auth.dependencies`.)"""

from __future__ import annotations

from typing import Annotated

from fastapi import Depends

from casefile.auth.dependencies import Require
from casefile.auth.permissions import Permission, Principal
from casefile.contacts.repository import get_contact
from casefile.models import Contact
from casefile.request_scope import in_path

ContactsRead = Annotated[Principal, Depends(Require(Permission.READ_CONTACTS))]
ContactsWrite = Annotated[Principal, Depends(Require(Permission.WRITE_CONTACTS))]
ContactsDelete = Annotated[Principal, Depends(Require(Permission.DELETE_CONTACTS))]
ContactInPath = Annotated[Contact, Depends(in_path(get_contact, "contact_id"))]
