"""The graph's coverage as the HTML pages show it (the report's Coverage tab and the coverage
command's page, one macro), read from its JSON form; IRIs and ids reach the page autoescaped."""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass

from pytest_graphrag_eval.errors import InputError

GRAPH_COVERAGE_KEY = "graph_coverage"
_FIELD = f"metadata.{GRAPH_COVERAGE_KEY}"


@dataclass(frozen=True)
class TemplateCoverage:
    template_id: str
    tested_classes: int
    tested_properties: int


@dataclass(frozen=True)
class CoverageView:
    """What the Coverage section shows: totals, the untested terms by uses, a row per template; or
    why the coverage could not be computed (`error`)."""

    error: str | None = None
    classes: int = 0
    properties: int = 0
    tested_classes: int = 0
    tested_properties: int = 0
    untested_classes: tuple[tuple[str, int], ...] = ()  # (term, uses in the graph), most used first
    untested_properties: tuple[tuple[str, int], ...] = ()
    templates: tuple[TemplateCoverage, ...] = ()


def coverage_view(metadata: Mapping[str, object]) -> CoverageView | None:
    """The report's coverage, None when the run did not ask for it; a malformed section is an
    InputError naming the field."""
    section = metadata.get(GRAPH_COVERAGE_KEY)
    if section is None:
        return None
    section = _object(section, _FIELD)
    if "error" in section:
        if not isinstance(section["error"], str):
            raise InputError("must be a text", field=f"{_FIELD}.error")
        return CoverageView(error=section["error"])
    uses = _object(section.get("uses"), f"{_FIELD}.uses")
    templates = _object(section.get("templates"), f"{_FIELD}.templates")
    return CoverageView(
        classes=_count(section, "classes", _FIELD),
        properties=_count(section, "properties", _FIELD),
        tested_classes=_count(section, "tested_classes", _FIELD),
        tested_properties=_count(section, "tested_properties", _FIELD),
        untested_classes=_terms(section, uses, "classes"),
        untested_properties=_terms(section, uses, "properties"),
        templates=tuple(_template(template_id, value) for template_id, value in templates.items()),
    )


def _template(template_id: str, value: object) -> TemplateCoverage:
    where = f"{_FIELD}.templates.{template_id}"
    part = _object(value, where)
    return TemplateCoverage(
        template_id, _count(part, "tested_classes", where), _count(part, "tested_properties", where)
    )


def _terms(
    section: Mapping[str, object], uses: Mapping[str, object], kind: str
) -> tuple[tuple[str, int], ...]:
    where = f"{_FIELD}.untested_{kind}"
    terms = section.get(f"untested_{kind}")
    if not isinstance(terms, list) or not all(isinstance(term, str) for term in terms):
        raise InputError("must be a list of texts", field=where)
    counts = _object(uses.get(kind), f"{_FIELD}.uses.{kind}")
    return tuple((term, _count(counts, term, f"{_FIELD}.uses.{kind}")) for term in terms)


def _object(value: object, where: str) -> Mapping[str, object]:
    if not isinstance(value, Mapping):
        raise InputError("must be an object", field=where)
    return value


def _count(part: Mapping[str, object], key: str, where: str) -> int:
    value = part.get(key)
    if not isinstance(value, int) or isinstance(value, bool) or value < 0:
        raise InputError("must be a whole number", field=f"{where}.{key}")
    return value
