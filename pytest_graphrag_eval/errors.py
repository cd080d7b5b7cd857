"""Exception types a user can act on: each says where the bad input came from, so the plugin shows a
usage error or an item failure instead of a traceback from our internals."""

from __future__ import annotations

import json
import sys
from dataclasses import dataclass


@dataclass(frozen=True)
class SourceLocation:
    """Where a record was read from; any part may be unknown, `origin` names a source that is not a file."""

    file: str | None = None
    line: int | None = None
    template_id: str | None = None
    question_id: str | None = None
    origin: str | None = None

    def for_question(self, question_id: str) -> SourceLocation:
        """This place, naming `question_id` (built directly: `dataclasses.replace` costs ten times
        as much, once per response of a 10,000-line recording)."""
        return SourceLocation(self.file, self.line, self.template_id, question_id, self.origin)

    def describe(self, field: str | None = None) -> str:
        """Render as `file:line template=… question=… field=…`, skipping unknown parts."""
        parts = (
            (f"{self.file}:{self.line}" if self.line else self.file) if self.file else None,
            self.origin,
            f"template {self.template_id!r}" if self.template_id is not None else None,
            f"question {self.question_id!r}" if self.question_id is not None else None,
            f"field {field!r}" if field else None,
        )
        return ", ".join(part for part in parts if part) or "<input>"


class GraphragEvalError(Exception):
    """Base class of every error this package raises on purpose."""


class CommandError(GraphragEvalError):
    """A problem with a console script's input or output files."""


class InputError(GraphragEvalError):
    """Bad corpus, response or configuration input, with its location."""

    def __init__(self, message: str, location: SourceLocation | None = None, field: str | None = None):
        self.location = location or SourceLocation()
        self.field = field
        self.detail = message
        super().__init__(f"{self.location.describe(field)}: {message}")


def json_problem(error: ValueError | RecursionError) -> str:
    """Why `json.loads` refused a text: its reason, or the bound it passed (digits of a number, depth)."""
    if isinstance(error, json.JSONDecodeError):
        return error.msg
    if "integer string conversion" in str(error):
        return f"a number of more than {sys.get_int_max_str_digits()} digits"
    return "nested too deeply" if isinstance(error, RecursionError) else str(error)  # str: a UnicodeError


class CorpusError(InputError):
    """The reference corpus is malformed."""


class ResponseError(InputError):
    """A response file or a single response is malformed."""


class ConfigurationError(GraphragEvalError):
    """An option, threshold, gate or prompt template is invalid."""


class HistoryError(GraphragEvalError):
    """A history store that cannot be opened, read or written; messages name the store by its display
    URL, never with its password."""


class ConfigurationWarning(UserWarning):
    """A configuration that runs, but with keys that have no effect (named in the message)."""


def install_extra_hint(extra: str) -> str:
    """The command that adds an optional extra: the package is not on PyPI, so it names the clone's path."""
    return f"pip install -e 'path/to/pytest-graphrag-eval[{extra}]' (path/to: where you cloned it)"
