"""The iCalendar document (RFC 5545, built with the `icalendar` library): one event per open task
with a due date. A date is an all-day event; a date-time is an event at that instant. Reminders
become alarms."""

from __future__ import annotations

from collections.abc import Iterable
from datetime import datetime, timedelta

from icalendar import Alarm, Calendar, Event

from casefile.models import Case, Task

PRODUCT_ID = "-//Casefile//Tasks and deadlines//EN"
REFRESH = timedelta(hours=1)


def _event(task: Task, case: Case) -> Event:
    event = Event()
    event.add("uid", f"{task.id}@casefile")
    event.add("dtstamp", task.updated_at)
    event.add("last-modified", task.updated_at)
    event.add("summary", task.title)
    if task.due_datetime is not None:
        # No DTEND: RFC 5545 3.6.1 makes such an event end when it starts (a moment, not a span).
        event.add("dtstart", task.due_datetime)
    elif task.due_date is not None:
        event.add("dtstart", task.due_date)
        event.add("dtend", task.due_date + timedelta(days=1))
    lines = [f"Case {case.case_number}: {case.title}"]
    if task.description:
        lines.append(task.description)
    event.add("description", "\n\n".join(lines))
    event.add("categories", ["Deadline" if task.deadline_id else "Task"])
    event.add("priority", {"urgent": 1, "high": 3, "medium": 5, "low": 9}.get(task.priority, 5))
    event.add("transp", "TRANSPARENT")  # a due date does not make anyone busy
    for reminder in task.reminders:
        alarm = Alarm()
        alarm.add("action", "DISPLAY")
        alarm.add("description", task.title)
        if "at" in reminder:
            alarm.add("trigger", datetime.fromisoformat(reminder["at"].replace("Z", "+00:00")))
        else:
            alarm.add("trigger", -timedelta(minutes=int(reminder["minutes_before"])))
        event.add_component(alarm)
    return event


def build_feed(name: str, rows: Iterable[tuple[Task, Case]]) -> bytes:
    calendar = Calendar()
    calendar.add("prodid", PRODUCT_ID)
    calendar.add("version", "2.0")
    calendar.add("calscale", "GREGORIAN")
    calendar.add("x-wr-calname", f"Casefile: {name}")
    calendar.add("refresh-interval", REFRESH, parameters={"VALUE": "DURATION"})
    calendar.add("x-published-ttl", REFRESH)
    for task, case in rows:
        calendar.add_component(_event(task, case))
    body: bytes = calendar.to_ical()
    return body
