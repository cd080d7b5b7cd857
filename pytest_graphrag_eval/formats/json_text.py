"""Parsing JSON text, with orjson when it is installed.

Large SPARQL outputs are parsed in every scoring run, and the parse is most of
their cost; orjson parses them two to three times faster than the standard
library. It is optional (the `[speed]` extra), and the
result never depends on it: any text orjson rejects (NaN, lone surrogates, ...)
is parsed again by `json`, whose value or error is then the answer, exactly as
without orjson. orjson reads integers beyond 64 bits as floats, so text with a
run of 19 or more digits goes to `json` directly.

That run is looked for in the UTF-8 bytes orjson is given anyway: `bytes.translate`
is a table lookup per byte, while `str.translate` on non-ASCII text (labels in
other scripts, as knowledge-graph answers have) costs several times the parse.

Whole reports (a baseline, a merge's shards: tens of megabytes each) are read by msgspec,
also of the `[speed]` extra, in `vouched_loads`: it reads integers of any size exactly, so
no digit run needs looking for, which on 100 MB took a third of orjson's own parse.

`loads_lines` reads JSONL straight from the file's bytes (no decoding to text and encoding
back per line) with msgspec, which needs no digit scan either (a third less time than orjson
with the scan on a 29 MB recording); it answers only when msgspec read every line, so a caller
falls back to the text path, and its exact values and messages, whenever anything is unusual.
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
    """`loads(text)` where only the shape counts, not the exact numbers (is it empty? a list?).

    orjson is given the text as it is: it reads integers beyond 64 bits as floats, which changes
    no container and equals none; whatever it rejects is read by `loads`, value or error.
    """
    if orjson is not None:
        try:
            return orjson.loads(text)
        except orjson.JSONDecodeError:
            pass
    return loads(text)


def vouched_loads(data: bytes) -> tuple[Any] | None:
    """`(value,)` of UTF-8 JSON bytes when msgspec reads them; None when it cannot vouch for giving
    what `json.loads` gives their decoded text (not installed, a byte-order mark or NUL byte, bytes it
    rejects: NaN, a float beyond the largest, a lone surrogate's escape, bytes that are not UTF-8), so
    the caller decodes and parses the text, values and messages alike.

    What msgspec accepts it reads as the standard library does: integers of any size exactly, floats
    correctly rounded, the last of duplicate keys (tests/test_plain_json.py).
    """
    if _REPORT_DECODER is None or data[:1] in _NOT_PLAIN_STARTS:
        return None
    try:
        return (_REPORT_DECODER.decode(data),)
    except (msgspec.DecodeError, UnicodeDecodeError):
        return None


def loads_lines(data: bytes) -> list[tuple[int, Any]] | None:
    """`(line number, value)` of each non-blank line of UTF-8 JSONL, or None when msgspec cannot
    vouch for every line (not installed, NUL bytes, a line it rejects).

    A line msgspec accepts is valid UTF-8 and gets the value `loads` gives its decoded text, integers
    of any size included (see `vouched_loads`), so no digit run needs looking for first; a line
    blank only to `str.strip` (a non-ASCII space) is one msgspec rejects.
    """
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
    except (msgspec.DecodeError, UnicodeDecodeError):
        return None
    return values
