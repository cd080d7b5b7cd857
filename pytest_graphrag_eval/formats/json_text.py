"""Parsing JSON text, with orjson when it is installed.

Large SPARQL outputs are parsed in every scoring run, and the parse is most of
their cost; orjson parses them two to three times faster than the standard
library. It is optional (`pip install 'pytest-graphrag-eval[speed]'`), and the
result never depends on it: any text orjson rejects (NaN, lone surrogates, ...)
is parsed again by `json`, whose value or error is then the answer, exactly as
without orjson. orjson reads integers beyond 64 bits as floats, so text with a
run of 19 or more digits goes to `json` directly.
"""

from __future__ import annotations

import json
from typing import Any

try:
    import orjson
except ImportError:  # the standard library alone
    orjson = None  # type: ignore[assignment]

JSON_LIBRARY = "orjson" if orjson is not None else "json"
_DIGITS_AS_ZERO = str.maketrans("123456789", "000000000")
_LONG_NUMBER = "0" * 19


def loads(text: str) -> Any:
    """`json.loads(text)`, computed by orjson when it can be."""
    if orjson is not None and _LONG_NUMBER not in text.translate(_DIGITS_AS_ZERO):  # cheaper than a regex
        try:
            return orjson.loads(text)
        except orjson.JSONDecodeError:
            pass
    return json.loads(text)
