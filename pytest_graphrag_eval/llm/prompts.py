"""Prompt templates for every judge: untrusted text enters a prompt only inside a tagged data block.

Inside a block every tag of its family is made inert, so an answer or document cannot close its
block and pose as instructions. Templates are checked when created: a bad file stops a run early.
"""

from __future__ import annotations

import re
import string
from collections.abc import Iterable, Mapping
from pathlib import Path

from pytest_graphrag_eval.errors import ConfigurationError


class DataBlocks:
    """The tagged blocks of one family of prompts, and how text is put inside one."""

    def __init__(self, names: Iterable[str]) -> None:
        self.names = tuple(names)
        alternatives = "|".join(map(re.escape, self.names))
        self._tags = re.compile(r"<(\s*/?\s*(?:" + alternatives + r")\b)", re.IGNORECASE)

    def neutralize(self, text: str) -> str:
        """Make every tag of this family inside `text` inert."""
        return self._tags.sub(r"&lt;\1", text)

    def block(self, name: str, text: str) -> str:
        """`text` wrapped in the tagged block `name`, with the family's tags inside it neutralised."""
        if name not in self.names:
            raise ValueError(f"unknown data block {name!r}")
        return f"<{name}>\n{self.neutralize(text)}\n</{name}>"


class PromptTemplate:
    """A user-message template whose `{placeholder}`s (`allowed`, all `required`) become data blocks."""

    def __init__(
        self,
        text: str,
        source: str,
        blocks: DataBlocks,
        required: Iterable[str],
        allowed: Iterable[str] | None = None,
        kind: str = "prompt template",
    ) -> None:
        self.text = text
        self.source = source
        self.blocks = blocks
        where = f"{kind} {source}"
        permitted = frozenset(blocks.names if allowed is None else allowed)
        self.placeholders = _placeholders(text, where, permitted)
        missing = sorted(set(required) - self.placeholders)
        if missing:
            names = ", ".join("{" + name + "}" for name in missing)
            raise ConfigurationError(f"{where}: missing placeholder(s) {names}")

    @classmethod
    def from_file(
        cls,
        path: str | Path,
        blocks: DataBlocks,
        required: Iterable[str],
        allowed: Iterable[str] | None = None,
        kind: str = "prompt template",
    ) -> PromptTemplate:
        """Read a template file; an unreadable file is a configuration error naming it."""
        try:
            text = Path(path).read_text(encoding="utf-8")
        except (OSError, UnicodeDecodeError) as error:
            raise ConfigurationError(f"{kind} {path}: cannot read it: {error}") from None
        return cls(text, str(path), blocks, required, allowed, kind)

    def render(self, values: Mapping[str, str]) -> str:
        """The template with each placeholder replaced by its value as a data block."""
        blocks = {name: self.blocks.block(name, values[name]) for name in self.placeholders}
        return self.text.format_map(blocks)


def _placeholders(text: str, where: str, allowed: frozenset[str]) -> frozenset[str]:
    found: set[str] = set()
    try:
        parsed = list(string.Formatter().parse(text))
    except ValueError as error:
        raise ConfigurationError(f"{where}: {error} (write literal braces as {{{{ and }}}})") from None
    for _, name, spec, conversion in parsed:
        if name is None:
            continue
        if name not in allowed:
            known = ", ".join("{" + item + "}" for item in sorted(allowed))
            shown = "{" + name + "}" if name else "{}"
            raise ConfigurationError(
                f"{where}: unknown placeholder {shown}; allowed: {known} "
                "(write literal braces as {{ and }})"
            )
        if spec or conversion:
            raise ConfigurationError(
                f"{where}: placeholder {{{name}}} must not have a format spec or conversion"
            )
        found.add(name)
    return frozenset(found)
