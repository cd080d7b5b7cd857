"""Responses files: JSON or JSONL text read into entries that `response_records` validates.

A malformed response raises `ResponseError` naming file, line, question id and field: a broken
recording must not be half-used.
"""

from __future__ import annotations

import json
from collections.abc import Iterable, Mapping
from pathlib import Path

from pytest_graphrag_eval.adapters.otel import QUESTION_ID_ATTRIBUTE
from pytest_graphrag_eval.adapters.replay import first_record_format, trace_entries
from pytest_graphrag_eval.corpus.input_files import decode_input, read_input_bytes
from pytest_graphrag_eval.corpus.reference_corpus import Corpus
from pytest_graphrag_eval.corpus.response_records import (
    Entry,
    ResponseRecord,
    collect_attempts,
    is_one_response,
)
from pytest_graphrag_eval.errors import ResponseError, SourceLocation, json_problem
from pytest_graphrag_eval.formats import json_text


def load_responses(
    path: str | Path,
    response_format: str = "auto",
    question_attribute: str = QUESTION_ID_ATTRIBUTE,
    *,
    corpus: Corpus | Iterable[Corpus] | None = None,
) -> dict[str, ResponseRecord]:
    """Read a JSON, JSON-list or JSONL response file (or a trace, via `adapters.replay`) into
    `{question_id: response}`, the first attempt of each; with `corpus`, text-keyed traces are filed
    by question id."""
    attempts = load_response_attempts(path, response_format, question_attribute, corpus=corpus)
    return {question_id: responses[0] for question_id, responses in attempts.items()}


def load_response_attempts(
    path: str | Path,
    response_format: str = "auto",
    question_attribute: str = QUESTION_ID_ATTRIBUTE,
    *,
    corpus: Corpus | Iterable[Corpus] | None = None,
    shown: str | None = None,
) -> dict[str, list[ResponseRecord]]:
    """Read a response file into `{question_id: [response, ...]}` in `attempt` order (see
    `load_responses`); `shown` names the file in messages (default: `path`)."""
    attempts = _read_attempts(Path(path), response_format, question_attribute, shown)
    if corpus is None:
        return attempts
    return key_by_corpus(attempts, [corpus] if isinstance(corpus, Corpus) else corpus)


def key_by_corpus(
    attempts: Mapping[str, list[ResponseRecord]], corpora: Iterable[Corpus]
) -> dict[str, list[ResponseRecord]]:
    """Responses keyed by question text filed under the question's id, the one keying rule of plugin
    and library; a text two questions share, or a question answered under its id and its text, is a
    `ResponseError`, since a guess would score the other as unanswered or two answers as attempts."""
    corpora = list(corpora)
    if {question_id for corpus in corpora for question_id in corpus.positions}.issuperset(attempts):
        return dict(attempts)
    ids_by_text: dict[str, str] = {}
    shared_texts: dict[str, list[str]] = {}
    for corpus in corpora:
        for question in corpus.questions():
            earlier = ids_by_text.setdefault(question.question_text, question.question_id)
            if earlier != question.question_id:
                shared_texts.setdefault(question.question_text, [earlier]).append(question.question_id)
    ids = set(ids_by_text.values())
    if shared_texts:
        _refuse_shared_texts(attempts, shared_texts, ids)
    filed: dict[str, list[ResponseRecord]] = {}
    keys: dict[str, str] = {}  # the key each question's responses were given under
    for key, records in attempts.items():
        question_id = key if key in ids else ids_by_text.get(key.strip(), key)
        if (earlier := keys.setdefault(question_id, key)) != key and records:
            raise ResponseError(
                f"question {question_id!r} is answered twice, by the response keyed {earlier!r} and by this "
                f"one keyed {key!r}: keep one",
                records[0].source,
            )
        filed[question_id] = (
            records if question_id == key else [_filed_under(r, question_id) for r in records]
        )
    return filed


def _refuse_shared_texts(
    attempts: Mapping[str, list[ResponseRecord]], shared_texts: Mapping[str, list[str]], ids: set[str]
) -> None:
    for key, records in attempts.items():
        sharing = shared_texts.get(key.strip()) if key not in ids else None
        if sharing and records:
            raise ResponseError(
                f"the response is keyed by the question text {key.strip()!r}, which the questions "
                f"{', '.join(sharing)} share: key it by question id "
                "(or give the trace a question-id attribute)",
                records[0].source,
            )


def _filed_under(record: ResponseRecord, question_id: str) -> ResponseRecord:
    """A trace response matched by its question's text, filed under the question's id."""
    source = record.source.for_question(question_id)
    return ResponseRecord({**record, "question_id": question_id}, source, record.attempt)


def _read_attempts(
    path: Path, response_format: str, question_attribute: str, shown: str | None = None
) -> dict[str, list[ResponseRecord]]:
    path = Path(path)
    file = shown or str(path)
    data = read_input_bytes(path, error_type=ResponseError, what="response file", shown=shown)
    entries = _plain_jsonl_entries(data, file, response_format)
    if entries is None:
        text = decode_input(data, SourceLocation(file), ResponseError, "response file")
        converted = trace_entries(text, file, response_format, question_attribute)
        if converted is None:
            entries = _parse_entries(text, file)
        else:
            entries = [(SourceLocation(file, line), key, raw) for line, key, raw in converted]
    return collect_attempts(entries)


def _plain_jsonl_entries(data: bytes, file: str, response_format: str) -> list[Entry] | None:
    """The common case, JSONL of plain responses, read from the bytes; None for anything the text path
    might read differently (see `json_text.loads_lines`)."""
    if response_format not in ("auto", "responses") or not data.startswith(b"{") or b"\n{" not in data:
        return None
    lines = json_text.loads_lines(data)
    if not lines:
        return None
    first = lines[0][1]
    if response_format == "auto" and (
        not isinstance(first, dict) or first_record_format(first) != "responses"
    ):
        return None
    return [
        (SourceLocation(file, number, question_id=_given_id(value)), None, value) for number, value in lines
    ]


def _given_id(value: object) -> str | None:
    """The question id a line gives, to locate it with: its record then needs no second location."""
    given = value.get("question_id") if type(value) is dict else None
    return given if type(given) is str else None


def _parse_entries(text: str, file: str) -> list[Entry]:
    stripped = text.lstrip()
    if not stripped:
        return []
    if stripped[0] == "{" and "\n{" in stripped:
        # Most likely JSONL: its lines are parsed first (a single JSON document cannot also be
        # a sequence of complete lines); only if one fails is the whole text tried as one value.
        try:
            return _parse_jsonl(text, file)
        except ResponseError:
            pass
    if stripped[0] in "[{":
        try:
            data = json_text.loads(text)
        except json.JSONDecodeError as error:
            if stripped[0] == "{" and "\n{" in text.strip():
                return _parse_jsonl(text, file)
            raise ResponseError(f"invalid JSON: {error.msg}", SourceLocation(file, error.lineno)) from None
        except (ValueError, RecursionError) as error:  # past Python's bounds: a number's digits, nesting
            raise ResponseError(f"invalid JSON: {json_problem(error)}", SourceLocation(file)) from None
        if isinstance(data, list):
            return [
                (SourceLocation(file, origin=f"list item [{index}]"), None, item)
                for index, item in enumerate(data)
            ]
        if isinstance(data, dict) and is_one_response(data):
            return [(SourceLocation(file, 1), None, data)]
        return [(SourceLocation(file), str(key), value) for key, value in data.items()]
    return _parse_jsonl(text, file)


def _parse_jsonl(text: str, file: str) -> list[Entry]:
    entries: list[Entry] = []
    # Split on newlines only: str.splitlines() also splits on U+2028 and friends, which JSON text may hold.
    for number, line in enumerate(text.split("\n"), start=1):
        if not line.strip():
            continue
        try:
            entries.append((SourceLocation(file, number), None, json_text.loads(line)))
        except json.JSONDecodeError as error:
            raise ResponseError(f"invalid JSON line: {error.msg}", SourceLocation(file, number)) from None
        except (ValueError, RecursionError) as error:
            problem = json_problem(error)
            raise ResponseError(f"invalid JSON line: {problem}", SourceLocation(file, number)) from None
    return entries
