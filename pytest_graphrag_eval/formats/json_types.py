"""Names for JSON-shaped values: a report, a result, a record read from a file.

Their members are whatever JSON holds; one name says so once instead of `Any` at every use.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any, TypeAlias

JsonObject: TypeAlias = dict[str, Any]
"""A JSON object owned by the holder (a result, a report section)."""
JsonMapping: TypeAlias = Mapping[str, Any]
"""A JSON object only read."""
Order: TypeAlias = tuple[Any, ...]
"""A question's place in a run, the same in every process: (file index, file path, position)."""
