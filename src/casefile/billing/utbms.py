"""The UTBMS litigation code sets (task, activity, expense), shipped as data in `data/utbms.json`."""

from __future__ import annotations

import json
from functools import cache
from importlib import resources
from typing import Literal

CodeSet = Literal["task", "activity", "expense"]


@cache
def codes() -> dict[str, dict[str, str]]:
    text = resources.files("casefile.billing").joinpath("data/utbms.json").read_text(encoding="utf-8")
    data = json.loads(text)
    return {name: dict(data[name]) for name in ("task", "activity", "expense")}


def is_code(code_set: CodeSet, code: str) -> bool:
    return code in codes()[code_set]
