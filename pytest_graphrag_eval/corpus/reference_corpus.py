"""Reference corpus: loading, validation and typed records.

A structural problem stops the load (`CorpusError`); a problem inside one reference step's content
is kept on its question (`reference_problems`) and spoils only that question's steps score.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field
from functools import cached_property
from pathlib import Path
from typing import Any

from pytest_graphrag_eval.corpus.reference_steps import reference_step_problem, step_path
from pytest_graphrag_eval.corpus.yaml_lines import line_of, load_yaml_with_lines, to_plain
from pytest_graphrag_eval.errors import CorpusError, SourceLocation
from pytest_graphrag_eval.formats.sparql_results import MemoizedParser, SharedTables, SparqlTable

QUESTION_RESERVED_KEYS = frozenset(
    {"id", "question_text", "reference_steps", "reference_answer", "thresholds", "xfail"}
)


@dataclass(frozen=True)
class ReferenceReading:
    """What reading a question's reference steps found: each unusable step's problem, and the tables
    and SPARQL readings parsed, handed to scoring so a reference is parsed once."""

    problems: tuple[str, ...] = ()
    tables: Mapping[str, SparqlTable] = field(default_factory=dict)
    readings: dict[int, tuple[Any, Any]] = field(default_factory=dict)


@dataclass(frozen=True)
class Question:
    """One reference question; its reference steps are read on first use, not while loading, so a run
    scoring part of the corpus (an xdist worker's share, `-k`) reads only that part."""

    template_id: str
    question_id: str
    question_text: str
    location: SourceLocation
    reference_steps: list[list[dict[str, Any]]] | None = None
    reference_answer: str | list[str] | None = None
    thresholds: Any = None
    xfail: str | None = None
    extra: dict[str, Any] = field(default_factory=dict)
    reference_lines: tuple[tuple[int | None, ...], ...] = field(default=(), repr=False, compare=False)
    """The YAML line of each reference step (by group, then step), for the messages of its problems."""
    references_read: ReferenceReading | None = field(default=None, repr=False, compare=False)
    """The reference steps as read elsewhere (live reference outputs); None: read on first use."""
    shared_tables: SharedTables | None = field(default=None, repr=False, compare=False)
    """Reference output texts parsed by any question of the same corpus (text -> table, or why it
    is unreadable): the variants of one question repeat its reference output, parsed once."""

    @property
    def reference_reading(self) -> ReferenceReading:
        """The reference steps read once, on first use (or as given in `references_read`)."""
        reading = self.reading_for_scoring()
        if self.references_read is None:
            object.__setattr__(self, "_reading", reading)  # a cache, not a field: frozen stays true
        return reading

    def reading_for_scoring(self) -> ReferenceReading:
        """The reading given or kept, else one read now and not kept.

        Scoring reads a question once per attempt; readings kept by the thousand would only give
        the garbage collector more to walk in every full collection, and the corpus's memo of
        reference outputs (`shared_tables`) makes reading one again cheap. Two threads may both
        read: the same reading, so no lock is needed.
        """
        if self.references_read is not None:
            return self.references_read
        # getattr, not `self.__dict__`: asking for the dict would build one per question for the
        # collector to walk, where the attribute is kept inline in the instance
        reading: ReferenceReading | None = getattr(self, "_reading", None)
        return reading or read_reference_steps(self.reference_steps, self.reference_lines, self.shared_tables)

    @property
    def reference_problems(self) -> tuple[str, ...]:
        """What makes reference steps unusable, each naming its step; empty when all are usable."""
        return self.reference_reading.problems


def read_reference_steps(
    steps: list[list[dict[str, Any]]] | None,
    lines: tuple[tuple[int | None, ...], ...] = (),
    shared_tables: SharedTables | None = None,
) -> ReferenceReading:
    """Check every reference step and parse its output, reusing and filling `shared_tables`."""
    parse = MemoizedParser(shared=shared_tables)
    problems = []
    for group_index, group in enumerate(steps or []):
        group_lines = lines[group_index] if group_index < len(lines) else ()
        for step_index, step in enumerate(group):
            problem = reference_step_problem(step, parse)
            if problem is not None:
                line = group_lines[step_index] if step_index < len(group_lines) else None
                where = step_path(group_index, step_index) + (f" (line {line})" if line else "")
                problems.append(f"{where}: {problem}")
    return ReferenceReading(tuple(problems), parse.tables(), parse.readings)


@dataclass(frozen=True)
class Template:
    """A question template: the collection level between a corpus file and its questions."""

    template_id: str
    questions: tuple[Question, ...]
    location: SourceLocation
    thresholds: Any = None


@dataclass(frozen=True)
class Corpus:
    """A whole reference corpus, possibly read from one file."""

    templates: tuple[Template, ...]
    file: str | None = None
    settings: dict[str, Any] = field(default_factory=dict)

    def questions(self) -> Iterable[Question]:
        """All questions in file order."""
        for template in self.templates:
            yield from template.questions

    def question_ids(self) -> list[str]:
        return list(self.positions)

    @cached_property
    def positions(self) -> dict[str, int]:
        """Each question id's 0-based position in file order, computed once (runs look it up per item)."""
        return {question.question_id: index for index, question in enumerate(self.questions())}


def load_corpus(path: str | Path, *, display_name: str | None = None) -> Corpus:
    """Read and validate a reference-corpus YAML file; errors name it as `display_name` if given."""
    path = Path(path)
    shown = display_name or str(path)
    lines: dict[int, int] = {}
    data = load_yaml_with_lines(path, shown=shown, error_type=CorpusError, what="corpus file", lines=lines)
    return _validated(data, _Source(shown, lines))


def load_corpora(paths: Iterable[str | Path]) -> list[Corpus]:
    """Load several corpus files; a question id defined in two of them is an error naming both."""
    corpora = [load_corpus(path) for path in paths]
    seen: dict[str, Question] = {}
    for corpus in corpora:
        for question in corpus.questions():
            check_unique_question(question, seen)
    return corpora


def check_unique_question(question: Question, seen: dict[str, Question]) -> None:
    """Record `question` in `seen`; a taken id raises CorpusError naming both places, since ids key
    responses and reports."""
    first = seen.setdefault(question.question_id, question)
    if first is not question:
        raise CorpusError(
            f"duplicate question id (first defined at {first.location.describe()})", question.location, "id"
        )


def corpus_from_data(data: object, file: str | None = None) -> Corpus:
    """Validate in-memory corpus data (the seed's list of templates) into records holding copies."""
    if isinstance(data, Corpus):
        return data
    return _validated(data, _Source(file))


@dataclass(frozen=True)
class _Source:
    """Where corpus data comes from: a file's freshly parsed document, whose values the records keep as
    they are (its mappings' lines by id in `lines`), or a caller's objects, which the records copy so
    that editing them later changes no record."""

    file: str | None
    lines: Mapping[int, int] | None = None

    def line(self, value: object) -> int | None:
        return self.lines.get(id(value)) if self.lines is not None else line_of(value)

    def kept(self, value: Any) -> Any:
        return value if self.lines is not None else to_plain(value)


def _validated(data: object, source: _Source) -> Corpus:
    file = source.file
    settings: dict[str, Any] = {}
    if isinstance(data, Mapping) and "templates" in data:
        settings = source.kept({key: value for key, value in data.items() if key != "templates"})
        data = data["templates"]
    if not isinstance(data, list):
        raise CorpusError(
            "a corpus must be a list of templates (or a mapping with a 'templates' list)",
            SourceLocation(file, source.line(data)),
        )
    seen: dict[str, SourceLocation] = {}
    shared_tables = SharedTables()
    templates: list[Template] = []
    for index, raw in enumerate(data):
        template = _template_from_data(raw, index, source, seen, shared_tables)
        first = next((t for t in templates if t.template_id == template.template_id), None)
        if first is not None:
            raise CorpusError(
                f"duplicate template id (first defined at {first.location.describe()}); "
                "list all its questions under one template",
                template.location,
                "template_id",
            )
        templates.append(template)
    return Corpus(templates=tuple(templates), file=file, settings=settings)


def _template_from_data(
    raw: object, index: int, source: _Source, seen: dict[str, SourceLocation], shared_tables: SharedTables
) -> Template:
    location = SourceLocation(source.file, source.line(raw))
    if not isinstance(raw, Mapping):
        raise CorpusError(f"template #{index + 1} must be a mapping", location)
    template_id = _required_text(raw, "template_id", location)
    location = SourceLocation(source.file, location.line, template_id=template_id)
    questions_raw = raw.get("questions")
    if not isinstance(questions_raw, list) or not questions_raw:
        raise CorpusError("must be a non-empty list of questions", location, "questions")
    questions = tuple(
        _question_from_data(question, template_id, location, source, seen, shared_tables)
        for question in questions_raw
    )
    return Template(template_id, questions, location, source.kept(raw.get("thresholds")))


def _question_from_data(
    raw: object,
    template_id: str,
    template_location: SourceLocation,
    source: _Source,
    seen: dict[str, SourceLocation],
    shared_tables: SharedTables,
) -> Question:
    file = template_location.file
    line = source.line(raw) or template_location.line
    if not isinstance(raw, Mapping):
        raise CorpusError(
            "each question must be a mapping", SourceLocation(file, line, template_id), "questions"
        )
    question_id = raw.get("id")
    if type(question_id) is not str or not question_id.strip():  # a location without the id, to say so
        question_id = _required_text(raw, "id", SourceLocation(file, line, template_id))
    location = SourceLocation(file, line, template_id, question_id)
    if question_id in seen:
        raise CorpusError(
            f"duplicate question id (first defined at {seen[question_id].describe()})", location, "id"
        )
    seen[question_id] = location
    question_text = _required_text(raw, "question_text", location)
    reference_steps = _reference_steps(raw.get("reference_steps"), location, source)
    reference_answer = _reference_answer(raw.get("reference_answer"), location)
    xfail = raw.get("xfail")
    if xfail is not None and not isinstance(xfail, (str, bool)):
        raise CorpusError("must be a reason (text) or true", location, "xfail")
    if xfail is True:
        xfail = "expected to fail (no reason given)"
    return Question(
        template_id=template_id,
        question_id=question_id,
        question_text=question_text,
        location=location,
        reference_steps=source.kept(reference_steps),
        reference_answer=reference_answer,
        thresholds=source.kept(raw.get("thresholds")),
        xfail=xfail or None,
        extra={k: source.kept(v) for k, v in raw.items() if k not in QUESTION_RESERVED_KEYS},
        reference_lines=tuple(tuple(source.line(step) for step in group) for group in reference_steps or ()),
        shared_tables=shared_tables,
    )


def _required_text(raw: Mapping[str, object], key: str, location: SourceLocation) -> str:
    value = raw.get(key)
    if value is None:
        raise CorpusError("is missing", location, key)
    if isinstance(value, bool) or not isinstance(value, (str, int)):
        raise CorpusError(f"must be text, got {type(value).__name__}", location, key)
    text = str(value)
    if not text.strip():
        raise CorpusError("must not be empty", location, key)
    return text


def _reference_steps(
    value: object, location: SourceLocation, source: _Source
) -> list[list[dict[str, Any]]] | None:
    if value is None:
        return None
    if not isinstance(value, list) or not all(isinstance(group, list) for group in value):
        raise CorpusError(
            "must be a list of groups, each a list of steps (a list of lists)", location, "reference_steps"
        )
    for group_index, group in enumerate(value):
        if not group:
            raise CorpusError("is an empty group", location, step_path(group_index))
        for step_index, step in enumerate(group):
            if not isinstance(step, Mapping):
                raise CorpusError(
                    "each step must be a mapping",
                    _step_location(step, location, source),
                    step_path(group_index, step_index),
                )
            if not isinstance(step.get("name"), str) or not step["name"]:
                raise CorpusError(
                    "is missing",
                    _step_location(step, location, source),
                    f"{step_path(group_index, step_index)}.name",
                )
    return value


def _step_location(step: object, question: SourceLocation, source: _Source) -> SourceLocation:
    """Where a reference step starts (its own line when known, else its question's)."""
    return SourceLocation(
        question.file, source.line(step) or question.line, question.template_id, question.question_id
    )


def _reference_answer(value: object, location: SourceLocation) -> str | list[str] | None:
    if value is None or isinstance(value, str):
        return value
    if isinstance(value, (int, float)) and not isinstance(value, bool):
        return str(value)
    if isinstance(value, list) and value and all(isinstance(item, str) for item in value):
        return list(value)
    raise CorpusError("must be text or a list of alternative texts", location, "reference_answer")
