"""Matter templates: versioned definitions of what a new matter starts with, and opening a case
from one (`POST /cases {template_id}`), above every domain it composes (decision 0018)."""
