"""Deep copies of JSON-like data (dicts, lists, text, numbers), as results need them.

Every result carries its own copy of the question's reference steps and of the
agent's steps, so that a caller editing one result never edits the corpus, the
recording or another result. `copy.deepcopy` pays for generality these values
do not need (a memo of every object, dispatch per type, reduction protocols):
on a corpus of thousands of questions it cost more than the scoring itself.
"""

from __future__ import annotations

import copy
from typing import Any

_IMMUTABLE = frozenset({str, int, float, bool, type(None)})


def copy_json_like(value: Any) -> Any:
    """A deep copy of `value`: dicts and lists rebuilt, immutable scalars shared, and anything
    else (a datetime, a tuple, a caller's own object) copied by `copy.deepcopy`.

    Unlike `copy.deepcopy`, a list or dict reached twice is copied twice; a structure that
    contains itself, or nests deeper than the recursion limit, is left to `copy.deepcopy`.
    """
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
