"""The fingerprint that ties a label or a review to one exact answer text."""

from __future__ import annotations

import hashlib

PREFIX = "sha256:"
_HEX_CHARS = 16  # 64 bits: no two answers of a corpus share it by chance, and a diff stays readable


def answer_fingerprint(answer: str) -> str:
    """`sha256:` and 16 hex digits of the answer exactly as given: a reviewer judged this text, so any
    change to it (even whitespace) is a different answer whose review must be given again."""
    digest = hashlib.sha256(answer.encode("utf-8", "surrogatepass")).hexdigest()
    return PREFIX + digest[:_HEX_CHARS]
