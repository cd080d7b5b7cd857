"""Keep API keys out of every message, log line and report: the configured key and key-shaped tokens."""

from __future__ import annotations

import re
from collections.abc import Iterable
from typing import TYPE_CHECKING
from urllib.parse import urlsplit, urlunsplit

if TYPE_CHECKING:
    from pytest_graphrag_eval.llm.settings import LLMSettings

MASK = "***"
_MIN_LITERAL = 4  # shorter "keys" (e.g. "x" for a local server) are not secrets worth mangling text for
_PATTERNS = (
    re.compile(r"\bsk-[A-Za-z0-9_\-]{8,}"),
    re.compile(r"(?i)(bearer\s+)[^\s\"',}]+"),
    re.compile(r"(?i)(api[-_]key[\"']?\s*[:=]\s*[\"']?)[^\s\"',}]+"),
)


def redact(text: str, settings: LLMSettings | None = None, secrets: Iterable[str | None] = ()) -> str:
    """Return `text` with the settings' API key, the given secrets and key-shaped tokens masked."""
    literals = [s for s in (settings.api_key if settings else None, *secrets) if s and len(s) >= _MIN_LITERAL]
    for secret in sorted(literals, key=len, reverse=True):
        text = text.replace(secret, MASK)
    for pattern in _PATTERNS:
        text = pattern.sub(lambda m: (m.group(1) if m.groups() else "") + MASK, text)
    return text


def safe_url(url: str | None) -> str:
    """An endpoint URL without user info or query string, fit for messages."""
    if not url:
        return "<default endpoint>"
    parts = urlsplit(url)
    host = parts.hostname or ""
    if parts.port:
        host = f"{host}:{parts.port}"
    return urlunsplit((parts.scheme, host, parts.path, "", ""))
