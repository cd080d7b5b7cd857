"""YAML loading that remembers the line of every mapping.

Errors about a corpus must point at the YAML line of the template, question or
step they are about; PyYAML drops positions after construction, so this loader
returns dicts that carry their 1-based start line.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import yaml


class LineDict(dict[Any, Any]):
    """A dict that knows the 1-based line where its YAML mapping started."""

    line: int | None = None


try:  # LibYAML's parser (in PyYAML's wheels) reads large corpora several times faster.
    from yaml import CSafeLoader as _SafeLoader
except ImportError:  # PyYAML built without LibYAML
    from yaml import SafeLoader as _SafeLoader  # type: ignore[assignment]


class _LineLoader(_SafeLoader):
    """SafeLoader whose mappings become `LineDict`s."""


def _construct_line_mapping(loader: _LineLoader, node: yaml.MappingNode) -> LineDict:
    mapping = LineDict(loader.construct_mapping(node, deep=True))
    mapping.line = node.start_mark.line + 1
    return mapping


_LineLoader.add_constructor(yaml.resolver.BaseResolver.DEFAULT_MAPPING_TAG, _construct_line_mapping)


def line_of(value: Any) -> int | None:
    """The start line of a mapping loaded by `load_yaml_with_lines`, else None."""
    return value.line if isinstance(value, LineDict) else None


def load_yaml_with_lines(path: Path) -> Any:
    """Parse one YAML document; raises yaml.YAMLError (with a mark) on bad syntax."""
    with path.open(encoding="utf-8") as handle:
        return yaml.load(handle, Loader=_LineLoader)


def to_plain(value: Any) -> Any:
    """Deep-copy into plain dicts and lists, so results never leak LineDicts."""
    if isinstance(value, dict):
        return {key: to_plain(item) for key, item in value.items()}
    if isinstance(value, list):
        return [to_plain(item) for item in value]
    return value
