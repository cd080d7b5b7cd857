"""`{{name}}` placeholders: a term's plain value in text, the escaped term itself in SPARQL (no value
read from the graph can change a query's meaning); a name is an identifier, never SPARQL's braces."""

from __future__ import annotations

import re
from collections.abc import Mapping
from dataclasses import dataclass

from pytest_graphrag_eval.formats.json_types import JSONValue

PLACEHOLDER = re.compile(r"\{\{\s*([A-Za-z_][A-Za-z0-9_]*)\s*\}\}")
_STRING_ESCAPES = str.maketrans({"\\": "\\\\", '"': '\\"', "\n": "\\n", "\r": "\\r", "\t": "\\t"})
_XSD_STRING = "http://www.w3.org/2001/XMLSchema#string"
# A term to parse a query with before any binding is known: an IRI is valid wherever a value is.
PARSE_PROBE = "<urn:graphrag-eval:placeholder>"

Term = Mapping[str, JSONValue]
"""One RDF term as SPARQL results JSON writes it: `{"type": "uri", "value": "..."}` and so on."""


class BlankNodeValue(ValueError):
    """A blank node cannot be named in a query: it has no identity outside its result."""


def names_in(text: str) -> list[str]:
    """The placeholder names in `text`, in order of first appearance."""
    return list(dict.fromkeys(PLACEHOLDER.findall(text)))


@dataclass(frozen=True)
class Pieces:
    """A text split once at its placeholders: their `names` in order, and the text as a `str.format_map`
    pattern (`form`: its own braces doubled, each placeholder `{name}`), so filling it is one call."""

    form: str
    names: tuple[str, ...]

    @classmethod
    def of(cls, text: str) -> Pieces:
        parts = [part.replace("{", "{{").replace("}", "}}") for part in PLACEHOLDER.split(text)]
        parts[1::2] = [f"{{{name}}}" for name in parts[1::2]]  # a name has no brace to double
        return cls("".join(parts), tuple(PLACEHOLDER.findall(text)))

    def fill_query(self, values: Mapping[str, Term]) -> str:
        """The text with each placeholder replaced by its term in SPARQL syntax."""
        return self.form.format_map({name: sparql_term(values[name]) for name in self.names})


def sparql_term(term: Term) -> str:
    """The term as SPARQL writes it; BlankNodeValue for a blank node."""
    kind, value = term.get("type"), str(term.get("value"))
    if kind == "uri":
        return f"<{value}>"
    if kind == "bnode":
        raise BlankNodeValue(f"the value _:{value} is a blank node, which a query cannot name")
    quoted = '"' + value.translate(_STRING_ESCAPES) + '"'
    language = term.get("xml:lang")
    if isinstance(language, str) and language:
        return f"{quoted}@{language}"
    datatype = term.get("datatype")
    if isinstance(datatype, str) and datatype and datatype != _XSD_STRING:
        return f"{quoted}^^<{datatype}>"
    return quoted
