"""Parsing JSON text, with orjson or msgspec when installed (the `[speed]` extra).

The result never depends on them: text they reject is parsed again by `json`, whose value or error is
the answer, and text with integers orjson would read as floats goes to `json` directly. Large
outputs and whole reports are parsed on every run, two to three times faster this way.
"""

from __future__ import annotations

import json
from typing import Any

try:
    import orjson
except ImportError:  # the standard library alone
    orjson = None  # type: ignore[assignment]
try:
    import msgspec
except ImportError:  # the standard library alone
    msgspec = None  # type: ignore[assignment]

JSON_LIBRARY = "orjson" if orjson is not None else "json"
_DIGITS_AS_ZERO = bytes.maketrans(b"123456789", b"000000000")
_LONG_NUMBER = b"0" * 19
_OPEN_BRACE = ord("{")
_NOT_PLAIN_STARTS = frozenset((b"\xef", b"\xfe", b"\xff", b"\x00"))  # byte-order marks, UTF-16/32
_REPORT_DECODER = msgspec.json.Decoder() if msgspec is not None else None


def loads(text: str) -> Any:
    """`json.loads(text)`, computed by orjson when it can be."""
    if orjson is not None:
        try:
            encoded = text.encode("utf-8")
        except UnicodeEncodeError:  # a lone surrogate: only `json` reads it
            return json.loads(text)
        if _LONG_NUMBER not in encoded.translate(_DIGITS_AS_ZERO):
            try:
                return orjson.loads(encoded)
            except orjson.JSONDecodeError:
                pass
    return json.loads(text)


def loads_shape(text: str) -> Any:
    """`loads(text)` where only the shape counts (empty? a list?), so orjson's float reading of huge
    integers does not matter."""
    if orjson is not None:
        try:
            return orjson.loads(text)
        except orjson.JSONDecodeError:
            pass
    return loads(text)


def vouched_loads(data: bytes) -> tuple[Any] | None:
    """`(value,)` of UTF-8 JSON bytes when msgspec reads them exactly as `json.loads` reads their text
    (tests/test_plain_json.py); None otherwise, so the caller parses the text, values and messages alike."""
    if _REPORT_DECODER is None or data[:1] in _NOT_PLAIN_STARTS:
        return None
    try:
        return (_REPORT_DECODER.decode(data),)
    except (msgspec.DecodeError, UnicodeDecodeError, RecursionError):  # json.loads names the fault
        return None


def loads_lines(data: bytes) -> list[tuple[int, Any]] | None:
    """`(line number, value)` of each non-blank line of UTF-8 JSONL, or None when msgspec cannot vouch
    for every line (see `vouched_loads`)."""
    if _REPORT_DECODER is None or b"\x00" in data:
        return None
    decode = _REPORT_DECODER.decode
    # Each line is read from a view of the data: splitting would copy every line first.
    view = memoryview(data)
    values: list[tuple[int, Any]] = []
    start, number, size = 0, 0, len(data)
    try:
        while start <= size:
            number += 1
            end = data.find(b"\n", start)
            if end == -1:
                end = size
            if end > start and (data[start] == _OPEN_BRACE or not data[start:end].isspace()):
                values.append((number, decode(view[start:end])))
            start = end + 1
    except (msgspec.DecodeError, UnicodeDecodeError, RecursionError):  # json.loads names the fault
        return None
    return values
