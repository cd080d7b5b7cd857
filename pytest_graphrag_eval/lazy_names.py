"""A package's public names imported when first used (PEP 562 module `__getattr__`).

A package whose `__init__` imports every module imports them all for any one of them: reading
the result-key declarations (every report does) imported the LLM judges, the event loop and the
YAML readers. A package lists where each name lives, and its `__getattr__` imports that module
on the first use of the name; `import package.module` imports that module alone.
"""

from __future__ import annotations

import importlib
from collections.abc import Callable, Mapping
from typing import Any


def lazy_names(package: str, namespace: dict[str, Any], homes: Mapping[str, str]) -> Callable[[str], Any]:
    """The `__getattr__` of `package` (its globals `namespace`); `homes` maps a name to its module's
    full name."""

    def attribute(name: str) -> Any:
        home = homes.get(name)
        if home is None:
            raise AttributeError(f"module {package!r} has no attribute {name!r}")
        value = getattr(importlib.import_module(home), name)
        namespace[name] = value  # found directly from now on
        return value

    return attribute
