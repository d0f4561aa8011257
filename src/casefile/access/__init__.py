"""Who may see and change a matter: the restricted flag, grants, walls, groups, API-key limits and
legal holds, and what an answer shows its caller. Below every domain; imports none of them
(docs/decisions/0018-domain-layout.md)."""
