"""Recorded traces as replay files: OTLP/JSON exports and JSONL message lists (docs/live-agents.md).

`trace_entries` gives `corpus/responses.py` the file's responses as `(line, key, response)`
entries for the loader's usual checks, or None for a file in the plain response format.
"""

from __future__ import annotations

import json
from collections.abc import Mapping
from typing import Any

from pytest_graphrag_eval.adapters.access import kind_name
from pytest_graphrag_eval.adapters.messages import MESSAGE_ADAPTERS, message_format
from pytest_graphrag_eval.adapters.otel import QUESTION_ID_ATTRIBUTE, from_otlp_json, json_lines
from pytest_graphrag_eval.errors import ResponseError, SourceLocation

RESPONSE_FORMATS = ("auto", "responses", "otlp", *MESSAGE_ADAPTERS)
# Keys of a message-list line that are not the messages: they are kept on the response.
LINE_KEYS = ("question_id", "attempt", "elapsed_sec", "input_tokens", "output_tokens", "total_tokens")
OTLP_SNIFF_CHARS = 4096

Entry = tuple[int | None, str | None, Any]


def trace_entries(
    text: str, file: str, response_format: str = "auto", question_attribute: str = QUESTION_ID_ATTRIBUTE
) -> list[Entry] | None:
    """The file's responses as loader entries, or None when it holds plain responses."""
    if response_format not in RESPONSE_FORMATS:
        raise ResponseError(
            f"unknown responses format {response_format!r}; expected one of {', '.join(RESPONSE_FORMATS)}",
            SourceLocation(file),
        )
    kind = response_format if response_format != "auto" else sniff_format(text)
    if kind == "responses" or not text.strip():
        return None
    if kind == "otlp":
        responses = from_otlp_json(text, question_attribute=question_attribute, location=SourceLocation(file))
        return [(None, key, response) for key, response in responses.items()]
    return _message_entries(text, file, None if response_format == "auto" else kind)


def sniff_format(text: str) -> str:
    """`otlp`, `messages` or `responses`, from the file's first line (or first characters)."""
    stripped = text.lstrip()
    head = stripped[:OTLP_SNIFF_CHARS]
    first_line = stripped.split("\n", 1)[0]
    try:
        first = json.loads(first_line)
    except (ValueError, RecursionError):
        first = None
    if isinstance(first, Mapping):
        return first_record_format(first)
    if head.startswith("{") and '"resourceSpans"' in head:  # one pretty-printed OTLP/JSON document
        return "otlp"
    return "responses"


def first_record_format(first: Mapping[str, Any]) -> str:
    """`otlp`, `messages` or `responses`, from the object on a file's first line."""
    if "resourceSpans" in first:
        return "otlp"
    if "messages" in first and not {"actual_answer", "actual_steps", "steps"} & first.keys():
        return "messages"
    return "responses"


def _message_entries(text: str, file: str, named: str | None) -> list[Entry]:
    entries: list[Entry] = []
    for number, record in json_lines(text, file):
        if not isinstance(record, Mapping):
            raise ResponseError(
                "a message-list line must be an object with question_id and messages, "
                f"got {kind_name(record)}",
                SourceLocation(file, number),
            )
        question_id = record.get("question_id")
        location = SourceLocation(file, number, question_id=None if question_id is None else str(question_id))
        if "messages" not in record and record.get("error") is not None:  # the agent failed
            entries.append((number, None, dict(record)))
            continue
        if "messages" not in record:
            raise ResponseError("is missing", location, "messages")
        messages = record["messages"]
        kind = named or message_format(messages, location)
        response = MESSAGE_ADAPTERS[kind](messages, location=location)
        response.update({key: record[key] for key in LINE_KEYS if key in record})
        entries.append((number, None, response))
    return entries
