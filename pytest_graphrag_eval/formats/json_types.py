"""Names for JSON-shaped values: a report, a result, a record read from a file. `JSONValue` is exactly what
`json.loads` returns, so a reader narrows it with isinstance before use; the `Json...` names below are objects
whose members the holder knows the shape of by key."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any, TypeAlias

JSONValue: TypeAlias = str | int | float | bool | list["JSONValue"] | dict[str, "JSONValue"] | None
"""A value as `json.loads` returns it: what a parsed file or reply really holds, checked by isinstance."""

JsonObject: TypeAlias = dict[str, Any]
"""A JSON object owned by the holder (a result, a report section)."""
JsonMapping: TypeAlias = Mapping[str, Any]
"""A JSON object only read."""
Order: TypeAlias = tuple[Any, ...]
"""A question's place in a run, the same in every process: (file index, file path, position)."""
