"""Plain JSON values read and written by orjson, byte for byte as the standard library does.

A merged report rewrites tens of megabytes of plain values unchanged. orjson writes a few floats
unlike Python, which are found in the indented text and rewritten by `repr`; a check on first use
falls back to the standard library should an orjson version differ otherwise.
"""

from __future__ import annotations

import functools
import json
import re

try:
    import orjson
except ImportError:  # the standard library alone
    orjson = None  # type: ignore[assignment]

# The floats orjson writes unlike Python, found by their end: a negative exponent, or the decimal form of
# a number under 1e-4, each matched where `bytes.find` finds its first bytes (a regex search of a report's
# megabytes cost twice as much). The token starts after a space.
_UNLIKE_ENDINGS = (
    (b"e-", re.compile(rb"e-\d+(?=,?\n|\Z)")),
    (b".0000", re.compile(rb"\.0000\d*(?=,?\n|\Z)")),
)
_UNLIKE_PYTHON = re.compile(rb"\de-|0\.0000")  # either, anywhere (in text too: then declined)
# Floats of every form either writer has, checked once against the standard library.
_PROBE = [
    [1e-05, 9.99e-05, 0.0001, 0.00011, 1.5e-07, -1e-07, 5e-324, 2.2250738585072014e-308, 1e-300],
    [1e16, 1.5e16, 9999999999999998.0, 1e15, 1.2345678901234568e17, 1e21, 1e22, 1e300],
    {"zero": 0.0, "negative zero": -0.0, "tenth": 0.1, "third": 1 / 3, "hundred": 100.0, "int": 10**18},
    {"nested": [{"a": []}, {}, [[]], -123.456, 7.0e-3], "text": 'e-5,\n 0.00001\t"\\/\u2028\x7f\x00é😀'},
]


def indented_plain(value: object) -> bytes | None:
    """`json.dumps(value, indent=2, ensure_ascii=False)` as UTF-8, for a plain value only; None when
    orjson is missing, writes floats otherwise than expected, or meets anything not plain."""
    if not _orjson_writes_like_json():
        return None
    return _indented(value)


def compact_plain(value: object) -> bytes | None:
    """`json.dumps(value, ensure_ascii=False, separators=(",", ":"), allow_nan=False)` as UTF-8 for a
    plain value; None as for `indented_plain`, or when a float orjson writes unlike Python may be in it."""
    if not _orjson_writes_like_json():
        return None
    try:
        encoded = orjson.dumps(value, default=_refuse, option=_COMPACT_OPTIONS)
    except orjson.JSONEncodeError:
        return None
    if (b"e-" in encoded or b"0.0000" in encoded) and _UNLIKE_PYTHON.search(encoded):
        return None
    return encoded


def _indented(value: object) -> bytes | None:
    try:
        encoded = orjson.dumps(value, default=_refuse, option=_OPTIONS)
    except orjson.JSONEncodeError:  # a big integer, a lone surrogate, a key that is not text...
        return None
    return _python_floats(encoded)


def _python_floats(encoded: bytes) -> bytes:
    """`encoded` with each float orjson writes unlike Python written by `repr`."""
    spans = []
    for mark, ending in _UNLIKE_ENDINGS:
        start = encoded.find(mark)
        while start != -1:
            if found := ending.match(encoded, start):
                spans.append((encoded.rfind(b" ", 0, start) + 1, found.end()))
            start = encoded.find(mark, start + 1)
    if not spans:
        return encoded
    parts: list[bytes] = []
    written = 0
    for start, end in sorted(spans):
        if start < written:  # both patterns found the same number
            continue
        parts += (encoded[written:start], repr(float(encoded[start:end])).encode("ascii"))
        written = end
    parts.append(encoded[written:])
    return b"".join(parts)


def _refuse(value: object) -> object:
    raise TypeError(f"not a plain JSON value: {type(value).__name__}")


@functools.cache
def _orjson_writes_like_json() -> bool:
    if orjson is None:
        return False
    expected = json.dumps(_PROBE, indent=2, ensure_ascii=False).encode("utf-8")
    return _indented(_PROBE) == expected


_COMPACT_OPTIONS = (
    0
    if orjson is None
    else orjson.OPT_PASSTHROUGH_DATACLASS | orjson.OPT_PASSTHROUGH_DATETIME | orjson.OPT_PASSTHROUGH_SUBCLASS
)
_OPTIONS = _COMPACT_OPTIONS | (0 if orjson is None else orjson.OPT_INDENT_2)
