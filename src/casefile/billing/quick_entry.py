"""One line of quick entry into a duration and a description: "1h20 drafted answer to motion",
"0.3 call with client" (tenths of an hour, as lawyers write them), "1:15 review", "45m research",
"1.5h hearing", "2 hours travel"."""

from __future__ import annotations

import re
from dataclasses import dataclass
from decimal import Decimal

_HOURS_MINUTES = re.compile(
    r"(?P<h>\d{1,2})\s*h(?:ours?|rs?)?\s*(?P<m>\d{1,2})\s*(?:m(?:in(?:ute)?s?)?)?(?=\s|$)", re.I
)
_CLOCK = re.compile(r"(?P<h>\d{1,2}):(?P<m>[0-5]\d)(?=\s|$)")
_DECIMAL_HOURS = re.compile(r"(?P<h>\d{1,2}(?:\.\d{1,2})?|\.\d{1,2})\s*(?:h(?:ours?|rs?)?)?(?=\s|$)", re.I)
_MINUTES = re.compile(r"(?P<m>\d{1,4})\s*m(?:in(?:ute)?s?)?(?=\s|$)", re.I)
MAX_SECONDS = 24 * 3600


@dataclass(frozen=True)
class QuickEntry:
    seconds: int
    description: str


class NotUnderstood(ValueError):
    pass


def parse(line: str) -> QuickEntry:
    """The duration at the start of `line` and the rest as the description."""
    text = line.strip()
    seconds: int | None = None
    match = _HOURS_MINUTES.match(text) or _CLOCK.match(text)
    if match:
        seconds = int(match["h"]) * 3600 + int(match["m"]) * 60
    elif match := _MINUTES.match(text):
        seconds = int(match["m"]) * 60
    elif match := _DECIMAL_HOURS.match(text):
        seconds = int(Decimal(match["h"]) * 3600)
    if match is None or seconds is None:
        raise NotUnderstood("Start with a duration: 1h20, 1:20, 0.3, 45m")
    if not 0 < seconds <= MAX_SECONDS:
        raise NotUnderstood("A duration between one minute and 24 hours")
    description = text[match.end() :].strip(" -:,")
    if not description:
        raise NotUnderstood("Say what was done after the duration")
    return QuickEntry(seconds, description)
