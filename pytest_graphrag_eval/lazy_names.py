"""A package's public names imported when first used (PEP 562 module `__getattr__`), so reading one
name (the result keys every report reads) does not import the whole package."""

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
