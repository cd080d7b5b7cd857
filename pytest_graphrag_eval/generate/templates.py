"""A template file read and checked before anything is run (keys: docs/generating-references.md).

Every mistake found is a TemplateError naming the file, line, template and field.
"""

from __future__ import annotations

import re
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field, fields
from pathlib import Path
from typing import Any

from pytest_graphrag_eval.corpus.yaml_lines import line_of, load_yaml_with_lines, to_plain
from pytest_graphrag_eval.errors import InputError, SourceLocation
from pytest_graphrag_eval.generate.placeholders import PARSE_PROBE, PLACEHOLDER, names_in
from pytest_graphrag_eval.graph.endpoint import QueryForm, QueryRefused
from pytest_graphrag_eval.graph.readonly import query_form

SPARQL_STEP = "sparql_query"
ANSWER_KINDS = ("labels", "count", "value")
_IDENTIFIER = re.compile(r"[A-Za-z_][A-Za-z0-9_]*\Z")
_PREFIX_NAME = re.compile(r"[A-Za-z][A-Za-z0-9_.-]*\Z|\Z")


class TemplateError(InputError):
    """A template file that cannot be used as written (the message names template and field)."""


@dataclass(frozen=True)
class DocumentsSpec:
    """A step whose output is a list of documents read from a query's rows (a retrieval step)."""

    query: str
    id_column: str
    text_column: str


@dataclass(frozen=True)
class StepTemplate:
    """One reference step as written; `query` is set for a `sparql_query` step (executed)."""

    raw: Mapping[str, Any]
    where: str
    query: str | None = None
    documents: DocumentsSpec | None = None


@dataclass(frozen=True)
class AnswerRule:
    """How the reference answer is read from one step's rows: a column's values joined, the number of
    rows, or a pattern filled from the one row."""

    kind: str
    column: str = ""
    pattern: str = ""
    separator: str = ", "
    group: int = 0
    index: int = 0


@dataclass(frozen=True)
class Sampling:
    """How many questions (None: every candidate), drawn with which seed, spread over which parameter."""

    count: int | None = None
    seed: int = 0
    stratify: str | None = None


@dataclass(frozen=True)
class KeepRules:
    """A question is kept only when its answer step's result has between min and max rows."""

    min_rows: int = 1
    max_rows: int | None = None


@dataclass(frozen=True)
class QuestionTemplate:
    """One template of a template file, checked."""

    template_id: str
    location: SourceLocation
    parameters: tuple[str, ...]
    candidates: str | None
    phrasings: tuple[str, ...]
    question_id: str | None
    steps: tuple[tuple[StepTemplate, ...], ...]
    answer: AnswerRule
    thresholds: Any = None
    question_thresholds: Mapping[str, Any] = field(default_factory=dict)
    xfail: str | None = None
    sample: Sampling = Sampling()
    keep: KeepRules = KeepRules()

    def error(self, message: str, where: str | None = None) -> TemplateError:
        return TemplateError(message, self.location, where)

    def query_fields(self) -> list[tuple[str, str]]:
        """Every query of the template with the field it is written in."""
        fields = [("candidates", self.candidates)] if self.candidates else []
        for group in self.steps:
            for step in group:
                if step.query is not None:
                    fields.append((f"{step.where}.args.query", step.query))
                if step.documents is not None:
                    fields.append((f"{step.where}.documents.query", step.documents.query))
        return fields


# A template's keys are its fields, its steps written as reference_steps.
TEMPLATE_KEYS = frozenset(
    {item.name for item in fields(QuestionTemplate)} - {"location", "steps"} | {"reference_steps"}
)


@dataclass(frozen=True)
class TemplateFile:
    """A template file: its prefixes, their PREFIX lines (written before every query) and its templates."""

    file: str
    prefixes: Mapping[str, str]
    templates: tuple[QuestionTemplate, ...]
    prefix_header: str


def load_templates(path: str | Path) -> TemplateFile:
    """Read and check a template file; TemplateError names what is wrong and where."""
    shown = str(path)
    data = load_yaml_with_lines(Path(path), shown=shown, error_type=TemplateError, what="template file")
    where = SourceLocation(shown, line_of(data))
    if not isinstance(data, Mapping) or not isinstance(data.get("templates"), list) or not data["templates"]:
        raise TemplateError("a template file is a mapping with a non-empty 'templates' list", where)
    unknown = sorted(set(data) - {"prefixes", "templates"})
    if unknown:
        raise TemplateError(f"unknown key(s) {', '.join(map(repr, unknown))}", where)
    prefixes = _prefixes(data.get("prefixes"), where)
    header = "".join(f"PREFIX {name}: <{iri}>\n" for name, iri in prefixes.items())
    templates: list[QuestionTemplate] = []
    for index, raw in enumerate(data["templates"]):
        template = _template(raw, index, shown, header)
        if any(other.template_id == template.template_id for other in templates):
            raise template.error("is already the id of another template", "template_id")
        templates.append(template)
    return TemplateFile(shown, prefixes, tuple(templates), header)


def _prefixes(value: object, where: SourceLocation) -> dict[str, str]:
    if value is None:
        return {}
    if not isinstance(value, Mapping):
        raise TemplateError("must map prefix names to namespace IRIs", where, "prefixes")
    prefixes: dict[str, str] = {}
    for name, iri in value.items():
        if not isinstance(name, str) or not _PREFIX_NAME.match(name):
            raise TemplateError(f"{name!r} is not a SPARQL prefix name", where, "prefixes")
        if not isinstance(iri, str) or not iri or any(char in iri for char in '<>" {}|^`\\'):
            raise TemplateError(f"{iri!r} is not an IRI", where, f"prefixes.{name}")
        prefixes[name] = iri
    return prefixes


def _template(raw: object, index: int, file: str, header: str) -> QuestionTemplate:
    location = SourceLocation(file, line_of(raw))
    if not isinstance(raw, Mapping):
        raise TemplateError(f"template #{index + 1} must be a mapping", location)
    template_id = raw.get("template_id")
    if not isinstance(template_id, str) or not template_id.strip():
        raise TemplateError(f"template #{index + 1} needs a 'template_id' (text)", location, "template_id")
    location = SourceLocation(file, line_of(raw), template_id)
    unknown = sorted(set(raw) - TEMPLATE_KEYS)
    if unknown:
        raise TemplateError(
            f"unknown key(s) {', '.join(map(repr, unknown))} (known: {', '.join(sorted(TEMPLATE_KEYS))})",
            location,
        )
    parameters = _parameters(raw.get("parameters"), location)
    candidates = raw.get("candidates")
    if candidates is not None and (not isinstance(candidates, str) or not candidates.strip()):
        raise TemplateError("must be a SPARQL SELECT query (text)", location, "candidates")
    if parameters and candidates is None:
        raise TemplateError(
            "is missing: a template with parameters needs the query that finds their values",
            location,
            "candidates",
        )
    phrasings = _phrasings(raw.get("phrasings"), parameters, location)
    question_id = raw.get("question_id")
    if question_id is not None and (not isinstance(question_id, str) or not question_id.strip()):
        raise TemplateError("must be an id pattern (text)", location, "question_id")
    steps = _steps(raw.get("reference_steps"), location)
    template = QuestionTemplate(
        template_id=template_id,
        location=location,
        parameters=parameters,
        candidates=candidates,
        phrasings=phrasings,
        question_id=question_id,
        steps=steps,
        answer=_answer(raw.get("answer"), steps, location),
        thresholds=to_plain(raw.get("thresholds")),
        question_thresholds=_question_thresholds(raw.get("question_thresholds"), location),
        xfail=_xfail(raw.get("xfail"), location),
        sample=_sampling(raw.get("sample"), parameters, location),
        keep=_keep(raw.get("keep"), location),
    )
    for where, query in template.query_fields():
        _check_parses(header + query, location, where)
    return template


def _parameters(value: object, location: SourceLocation) -> tuple[str, ...]:
    if value is None:
        return ()
    if not isinstance(value, list) or not all(isinstance(name, str) for name in value):
        raise TemplateError("must be a list of parameter names", location, "parameters")
    for name in value:
        if not _IDENTIFIER.match(name):
            raise TemplateError(f"{name!r} is not a name (letters, digits, _)", location, "parameters")
    if len(set(value)) != len(value):
        raise TemplateError("names a parameter twice", location, "parameters")
    return tuple(value)


def _phrasings(value: object, parameters: Sequence[str], location: SourceLocation) -> tuple[str, ...]:
    if isinstance(value, str):
        value = [value]
    if not isinstance(value, list) or not value:
        raise TemplateError("must be a non-empty list of question texts", location, "phrasings")
    for index, phrasing in enumerate(value):
        where = f"phrasings[{index}]"
        if not isinstance(phrasing, str) or not phrasing.strip():
            raise TemplateError("must be a question text", location, where)
        named = names_in(phrasing)
        unknown = [name for name in named if name not in parameters]
        if unknown:
            raise TemplateError(
                f"names {{{{{unknown[0]}}}}}, which is not a parameter "
                f"(parameters: {', '.join(parameters) or 'none'})",
                location,
                where,
            )
        missing = [name for name in parameters if name not in named]
        if missing:
            raise TemplateError(
                f"does not use the parameter {missing[0]!r}: every phrasing names every parameter, so "
                "two questions of the template never read alike",
                location,
                where,
            )
    return tuple(value)


def _steps(value: object, location: SourceLocation) -> tuple[tuple[StepTemplate, ...], ...]:
    if not isinstance(value, list) or not value or not all(isinstance(g, list) and g for g in value):
        raise TemplateError(
            "must be a non-empty list of groups, each a non-empty list of steps", location, "reference_steps"
        )
    groups = []
    for group_index, group in enumerate(value):
        steps = []
        for index, step in enumerate(group):
            where = f"reference_steps[{group_index}][{index}]"
            if not isinstance(step, Mapping) or not isinstance(step.get("name"), str):
                raise TemplateError("must be a step (a mapping with a 'name')", location, where)
            args = step.get("args")
            if args is not None and not isinstance(args, Mapping):
                raise TemplateError("must be a mapping", location, f"{where}.args")
            query = None
            if step["name"] == SPARQL_STEP:
                query = (args or {}).get("query")
                if not isinstance(query, str) or not query.strip():
                    raise TemplateError(
                        "a sparql_query step needs its query", location, f"{where}.args.query"
                    )
                if "output" in step:
                    raise TemplateError(
                        "is the executed result of the query: leave it out", location, f"{where}.output"
                    )
            documents = _documents(step.get("documents"), location, where)
            if documents is not None and "output" in step:
                raise TemplateError("a step has documents or an output, not both", location, where)
            plain = to_plain({key: item for key, item in step.items() if key != "documents"})
            steps.append(StepTemplate(plain, where, query, documents))
        groups.append(tuple(steps))
    return tuple(groups)


def _documents(value: object, location: SourceLocation, where: str) -> DocumentsSpec | None:
    if value is None:
        return None
    spec = value if isinstance(value, Mapping) else {}
    parts = [spec.get(key) for key in ("query", "id", "text")]
    if not all(isinstance(part, str) and part for part in parts):
        raise TemplateError(
            "must be a mapping with 'query' (SPARQL), 'id' and 'text' (its columns)",
            location,
            f"{where}.documents",
        )
    return DocumentsSpec(*(str(part) for part in parts))


def _answer(
    value: object, steps: tuple[tuple[StepTemplate, ...], ...], location: SourceLocation
) -> AnswerRule:
    if not isinstance(value, Mapping):
        raise TemplateError(
            "must say how the answer is read: {labels: COLUMN}, {count: true} or {value: PATTERN}",
            location,
            "answer",
        )
    kinds = [kind for kind in ANSWER_KINDS if kind in value]
    unknown = sorted(set(value) - {*ANSWER_KINDS, "separator", "step"})
    if len(kinds) != 1 or unknown:
        raise TemplateError(
            "takes exactly one of labels, count, value (and optionally separator, step)", location, "answer"
        )
    kind = kinds[0]
    executed = [
        (group_index, index)
        for group_index, group in enumerate(steps)
        for index, step in enumerate(group)
        if step.query is not None
    ]
    if not executed:
        raise TemplateError(
            "the answer is read from a sparql_query step, and there is none", location, "answer"
        )
    group, index = executed[-1]
    if value.get("step") is not None:
        match = re.fullmatch(r"\s*\[(\d+)\]\s*\[(\d+)\]\s*", str(value["step"]))
        if match is None or (int(match[1]), int(match[2])) not in executed:
            raise TemplateError(
                f"must name a sparql_query step as [group][step], one of "
                f"{', '.join(f'[{g}][{i}]' for g, i in executed)}",
                location,
                "answer.step",
            )
        group, index = int(match[1]), int(match[2])
    separator = value.get("separator", ", ")
    if not isinstance(separator, str):
        raise TemplateError("must be text", location, "answer.separator")
    text = value[kind]
    if kind == "count":
        if text is not True:
            raise TemplateError("write count: true", location, "answer.count")
        return AnswerRule("count", group=group, index=index)
    if not isinstance(text, str) or not text:
        raise TemplateError(
            "must be a column name" if kind == "labels" else "must be text", location, f"answer.{kind}"
        )
    if kind == "labels":
        return AnswerRule("labels", column=text, separator=separator, group=group, index=index)
    return AnswerRule("value", pattern=text, group=group, index=index)


def _question_thresholds(value: object, location: SourceLocation) -> dict[str, Any]:
    if value is None:
        return {}
    if not isinstance(value, Mapping) or not all(isinstance(key, str) for key in value):
        raise TemplateError("must map question ids to thresholds", location, "question_thresholds")
    return {key: to_plain(item) for key, item in value.items()}


def _xfail(value: object, location: SourceLocation) -> str | None:
    if value is None or (isinstance(value, str) and value):
        return value
    raise TemplateError("must be a reason (text)", location, "xfail")


def _sampling(value: object, parameters: Sequence[str], location: SourceLocation) -> Sampling:
    if value is None:
        return Sampling()
    if not isinstance(value, Mapping) or set(value) - {"count", "seed", "stratify"}:
        raise TemplateError("takes count, seed and stratify", location, "sample")
    count, seed, stratify = value.get("count"), value.get("seed", 0), value.get("stratify")
    if count is not None and (isinstance(count, bool) or not isinstance(count, int) or count < 1):
        raise TemplateError("must be a whole number >= 1", location, "sample.count")
    if isinstance(seed, bool) or not isinstance(seed, int):
        raise TemplateError("must be a whole number", location, "sample.seed")
    if stratify is not None and stratify not in parameters:
        raise TemplateError(
            f"must be one of the parameters ({', '.join(parameters) or 'none'})", location, "sample.stratify"
        )
    return Sampling(count, seed, stratify)


def _keep(value: object, location: SourceLocation) -> KeepRules:
    if value is None:
        return KeepRules()
    if not isinstance(value, Mapping) or set(value) - {"min_rows", "max_rows"}:
        raise TemplateError("takes min_rows and max_rows", location, "keep")
    low, high = value.get("min_rows", 1), value.get("max_rows")
    for name, number in (("min_rows", low), ("max_rows", high)):
        if number is not None and (isinstance(number, bool) or not isinstance(number, int) or number < 0):
            raise TemplateError("must be a whole number >= 0", location, f"keep.{name}")
    if high is not None and high < low:
        raise TemplateError("must be at least min_rows", location, "keep.max_rows")
    return KeepRules(low, high)


def _check_parses(query: str, location: SourceLocation, where: str) -> None:
    try:
        form = query_form(PLACEHOLDER.sub(PARSE_PROBE, query))
    except QueryRefused as error:
        raise TemplateError(f"the query does not parse: {error}", location, where) from None
    if form is not QueryForm.SELECT and where.endswith(("candidates", "documents.query")):
        raise TemplateError("must be a SELECT query: its rows are read", location, where)
