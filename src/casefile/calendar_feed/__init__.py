"""Each user's private iCalendar feed of their open tasks and deadlines
(docs/api-conventions.md#calendar-feed)."""
