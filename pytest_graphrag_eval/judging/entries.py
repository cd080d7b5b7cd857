"""A labels or reviews file (YAML or JSONL) read into entries whose field readers raise `InputError`
naming the file, line, question and field, so a hand-edited file is fixed where it broke."""

from __future__ import annotations

import datetime
import json
from collections.abc import Collection, Mapping
from dataclasses import dataclass
from pathlib import Path

from pytest_graphrag_eval.corpus.input_files import read_input_text
from pytest_graphrag_eval.corpus.yaml_lines import line_of, load_yaml_with_lines
from pytest_graphrag_eval.errors import InputError, SourceLocation, json_problem
from pytest_graphrag_eval.report_model import HUGE_INTEGER, is_finite_number, is_huge_integer


@dataclass(frozen=True)
class Entry:
    fields: Mapping[object, object]
    location: SourceLocation

    @property
    def where(self) -> str:
        """`file:line`, as reports cite an entry."""
        location = self.location
        return f"{location.file}:{location.line}" if location.line else str(location.file)

    def error(self, message: str, field: str | None = None) -> InputError:
        return InputError(message, self.location, field)

    def text(self, name: str, *, required: bool = True) -> str:
        """A non-empty text field (a YAML date is read as its ISO text)."""
        value = self.fields.get(name)
        if value is None:
            if required:
                raise self.error("is missing", name)
            return ""
        if isinstance(value, (datetime.date, datetime.datetime)):
            return value.isoformat()
        if not isinstance(value, str):
            raise self.error(f"must be text, got {type(value).__name__}", name)
        if required and not value.strip():
            raise self.error("is empty", name)
        return value

    def number(self, name: str, low: float, high: float) -> float:
        value = self.fields.get(name)
        if not is_finite_number(value):
            got = HUGE_INTEGER if is_huge_integer(value) else repr(value)
            raise self.error(f"must be a number from {low:g} to {high:g}, got {got}", name)
        if not low <= value <= high:
            raise self.error(f"must be from {low:g} to {high:g}, got {value!r}", name)
        return float(value)

    def of_question(self, known_fields: tuple[str, ...], question_ids: Collection[str]) -> tuple[Entry, str]:
        """Check the fields' names and the question id; the entry, now naming its question, and the id."""
        unknown = sorted(str(key) for key in self.fields if key not in known_fields)
        if unknown:
            raise self.error(f"unknown field (the fields are {', '.join(known_fields)})", unknown[0])
        question_id = self.text("question_id")
        entry = Entry(self.fields, self.location.for_question(question_id))
        if question_id not in question_ids:
            raise entry.error("the run's corpus files have no question with this id", "question_id")
        return entry, question_id


def read_entries(path: Path, *, shown: str, what: str, list_key: str) -> list[Entry]:
    """The file's records in order; `list_key` is the key a YAML mapping holds its list under."""
    if path.suffix.lower() == ".jsonl":
        return _jsonl_entries(path, shown, what)
    document = load_yaml_with_lines(path, shown=shown, error_type=InputError, what=what)
    if isinstance(document, Mapping):
        extra = sorted(str(key) for key in document if key != list_key)
        if extra:
            raise InputError(
                f"unknown top-level key {extra[0]!r} (a {what} holds its list under {list_key!r})",
                SourceLocation(shown, line_of(document)),
            )
        document = document.get(list_key)
    if document is None:
        return []
    if not isinstance(document, list):
        raise InputError(
            f"expected a list of {list_key} (or a mapping with {list_key!r}), got {type(document).__name__}",
            SourceLocation(shown),
        )
    entries = []
    for index, item in enumerate(document):
        if not isinstance(item, Mapping):
            raise InputError(
                f"{list_key}[{index}] must be a mapping of fields, got {type(item).__name__}",
                SourceLocation(shown),
            )
        entries.append(Entry(item, SourceLocation(shown, line_of(item))))
    return entries


def _jsonl_entries(path: Path, shown: str, what: str) -> list[Entry]:
    text = read_input_text(path, shown=shown, error_type=InputError, what=what)
    entries = []
    # Split on newlines only: str.splitlines() also splits on U+2028 and friends, which JSON text may hold.
    for number, line in enumerate(text.split("\n"), start=1):
        if not line.strip():
            continue
        location = SourceLocation(shown, number)
        try:
            item = json.loads(line, object_pairs_hook=_unique_keys)
        except InputError as error:
            raise InputError(error.detail, location, error.field) from None
        except (ValueError, RecursionError) as error:
            raise InputError(f"invalid JSON: {json_problem(error)}", location) from None
        if not isinstance(item, dict):
            raise InputError(f"each line must be a JSON object, got {type(item).__name__}", location)
        entries.append(Entry(item, location))
    return entries


def _unique_keys(pairs: list[tuple[str, object]]) -> dict[str, object]:
    """A JSON object of a hand-edited file, whose repeated key is an error (JSON keeps the last one)."""
    fields = dict(pairs)
    if len(fields) < len(pairs):
        repeated = next(key for index, (key, _) in enumerate(pairs) if key in dict(pairs[:index]))
        raise InputError(
            "appears twice in one object (JSON would keep the last one silently)", None, repeated
        )
    return fields


def verdict_word(entry: Entry, name: str = "verdict") -> bool:
    """`pass` -> True, `fail` -> False; anything else names the field."""
    value = entry.fields.get(name)
    if value in ("pass", "fail"):
        return value == "pass"
    raise entry.error(f"must be pass or fail, got {value!r}", name)
