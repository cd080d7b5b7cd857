"""Text from elsewhere (CI variables, commit messages, stored runs) made safe to print on a terminal:
an escape sequence in a branch name can clear the screen or hide what follows, a newline forge a line."""

from __future__ import annotations

_BIDI = (*range(0x202A, 0x202F), *range(0x2066, 0x206A))
_ESCAPES: dict[int, str] = {
    **{code: f"\\x{code:02x}" for code in (*range(0x00, 0x20), *range(0x7F, 0xA0))},
    **{code: f"\\u{code:04x}" for code in _BIDI},
    0x09: "\\t",
    0x0A: "\\n",
    0x0D: "\\r",
}


def terminal_safe(text: str) -> str:
    """`text` with control characters and bidirectional overrides written as visible escapes."""
    return text.translate(_ESCAPES)
