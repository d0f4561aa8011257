"""Bulk actions on cases (`POST /cases/bulk`): a job over up to 1,000 matters, each changed on its
own by the single-case rules, with progress and a result per matter."""
