"""The dict the corpus YAML loaders build for every mapping: it knows the line the mapping started on."""

from __future__ import annotations

from typing import Any


class LineDict(dict[Any, Any]):
    """A dict that knows the 1-based line where its YAML mapping started (set when it is built)."""

    __slots__ = ("line",)  # no per-mapping attribute dict: a corpus has hundreds of thousands

    line: int | None
