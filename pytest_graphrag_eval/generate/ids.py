"""Question ids derived from the template and the parameters' values only (a slugged pattern, or
the template id and a hash), so a question keeps its id through a regeneration and rewording."""

from __future__ import annotations

import hashlib
import json
import re
import unicodedata
from collections.abc import Mapping

from pytest_graphrag_eval.generate.placeholders import Pieces

# Letters NFKD does not split into a base letter and a mark.
_FOLDED = str.maketrans(
    {"Æ": "AE", "æ": "ae", "Ø": "O", "ø": "o", "ß": "ss", "Ł": "L", "ł": "l", "Đ": "D", "đ": "d"}
)
_HASH_CHARS = 10
_ALPHANUMERIC_RUNS = re.compile("[a-z0-9]+")  # after lower(): the runs of ASCII letters and digits


def slug(text: str) -> str:
    """`connected-RØROS` -> `connected-roros`."""
    if not text.isascii():
        decomposed = unicodedata.normalize("NFKD", text.translate(_FOLDED))
        text = "".join(char for char in decomposed if not unicodedata.combining(char))
    return "-".join(_ALPHANUMERIC_RUNS.findall(text.lower()))


def question_id(
    template_id: str, pattern: Pieces | None, parameters: tuple[str, ...], plain: Mapping[str, str]
) -> str:
    """The id of the question of `template_id` for these plain values (`plain`: every name `pattern` uses)."""
    if pattern is not None:
        return slug(pattern.form.format_map(plain)) or slug(template_id)
    if not parameters:
        return slug(template_id)
    shown = json.dumps([[name, plain.get(name)] for name in parameters], ensure_ascii=False)
    digest = hashlib.sha256(f"{template_id}\0{shown}".encode()).hexdigest()[:_HASH_CHARS]
    return f"{slug(template_id)}-{digest}"


def stable_index(key: str, size: int) -> int:
    """A position in `size` chosen by `key` alone (which phrasing a question takes)."""
    return int.from_bytes(hashlib.sha256(key.encode()).digest()[:8], "big") % size
