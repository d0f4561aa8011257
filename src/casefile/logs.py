"""Logging of every command (docs/operations.md#logs): `CASEFILE_LOG_FORMAT=text|json`.

`json` writes one JSON object per line: time, level, logger, message, the request id of the request
being answered (if any), the fields a log call adds with `extra=` (the request line's route, status,
duration_ms, principal_id) and, for an error, its traceback in `exc_info`. The libraries' chatter
is kept out: httpx logs every webhook POST at INFO, and uvicorn's access line repeats ours.
"""

from __future__ import annotations

import json
import logging
from typing import Any

from casefile.envelope import request_id_var

# Attributes every LogRecord has: anything else on a record was passed with `extra=`.
_STANDARD = frozenset(vars(logging.LogRecord("", 0, "", 0, "", None, None))) | {
    "message",
    "asctime",
    "taskName",
}
QUIET_LOGGERS = ("httpx", "httpcore", "uvicorn.access", "multipart", "asyncio")
TEXT_FORMAT = "%(asctime)s %(levelname)s %(name)s: %(message)s"


class JsonFormatter(logging.Formatter):
    def format(self, record: logging.LogRecord) -> str:
        entry: dict[str, Any] = {
            "time": self.formatTime(record, "%Y-%m-%dT%H:%M:%S") + f".{int(record.msecs):03d}Z",
            "level": record.levelname,
            "logger": record.name,
            "message": record.getMessage(),
        }
        request_id = getattr(record, "request_id", None) or request_id_var.get()
        if request_id:
            entry["request_id"] = request_id
        for key, value in vars(record).items():
            if key not in _STANDARD and key not in entry and value is not None:
                entry[key] = value
        if record.exc_info:
            entry["exc_info"] = self.formatException(record.exc_info)
        return json.dumps(entry, default=str, ensure_ascii=False)


class TextFormatter(logging.Formatter):
    """The classic line, with the request id appended while a request is being answered."""

    def __init__(self) -> None:
        super().__init__(TEXT_FORMAT)

    def format(self, record: logging.LogRecord) -> str:
        line = super().format(record)
        request_id = getattr(record, "request_id", None) or request_id_var.get()
        principal = getattr(record, "principal_id", None)
        suffix = "".join(
            f" {name}={value}"
            for name, value in (("request_id", request_id), ("principal", principal))
            if value
        )
        if not suffix:
            return line
        first, newline, rest = line.partition("\n")  # after the message, before any traceback
        return first + suffix + newline + rest


def logging_config(level: str, log_format: str) -> dict[str, Any]:
    """A `logging.config.dictConfig` dict; uvicorn applies it in every worker process too."""
    formatter = "json" if log_format == "json" else "text"
    return {
        "version": 1,
        "disable_existing_loggers": False,
        "formatters": {
            "json": {"()": "casefile.logs.JsonFormatter"},
            "text": {"()": "casefile.logs.TextFormatter"},
        },
        "handlers": {
            "stderr": {"class": "logging.StreamHandler", "formatter": formatter, "stream": "ext://sys.stderr"}
        },
        "root": {"level": level.upper(), "handlers": ["stderr"]},
        "loggers": {
            # uvicorn's own loggers write through ours (and in our format), not with handlers of their own.
            "uvicorn": {"level": level.upper(), "handlers": [], "propagate": True},
            "uvicorn.error": {"level": level.upper(), "handlers": [], "propagate": True},
            **{name: {"level": "WARNING", "handlers": [], "propagate": True} for name in QUIET_LOGGERS},
        },
    }


def configure(level: str, log_format: str) -> None:
    import logging.config

    logging.config.dictConfig(logging_config(level, log_format))
