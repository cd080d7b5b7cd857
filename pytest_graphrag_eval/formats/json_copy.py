"""Deep copies of JSON-like data, so that a caller editing one result never edits the corpus, the
recording or another result: `copy.deepcopy`'s generality cost more than the scoring itself."""

from __future__ import annotations

import copy
from typing import Any

_IMMUTABLE = frozenset({str, int, float, bool, type(None)})


def copy_json_like(value: Any) -> Any:
    """A deep copy of `value`: dicts and lists rebuilt, scalars shared, anything else (and a structure
    that contains itself or nests too deep) left to `copy.deepcopy`."""
    try:
        return _copy(value)
    except RecursionError:
        return copy.deepcopy(value)


def _copy(value: Any) -> Any:
    kind = type(value)
    if kind is dict:
        return {key: item if type(item) in _IMMUTABLE else _copy(item) for key, item in value.items()}
    if kind is list:
        return [item if type(item) in _IMMUTABLE else _copy(item) for item in value]
    if kind in _IMMUTABLE:
        return value
    return copy.deepcopy(value)
