"""Reading framework objects and their plain JSON forms alike, so no adapter imports the framework."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any


def field(obj: Any, name: str, default: Any = None) -> Any:
    """`obj[name]` for a mapping, `obj.name` otherwise; `default` when absent or None."""
    value = obj.get(name) if isinstance(obj, Mapping) else getattr(obj, name, None)
    return default if value is None else value


def kind_name(obj: Any) -> str:
    """How an object is named in an error message: its JSON type, or its class for SDK objects."""
    if isinstance(obj, Mapping):
        return "object"
    if isinstance(obj, str):
        return "text"
    return "list" if isinstance(obj, list | tuple) else type(obj).__name__


def is_sequence(obj: Any) -> bool:
    """A list or tuple of items (text and mappings are not message lists)."""
    return isinstance(obj, list | tuple)
