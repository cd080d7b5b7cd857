"""What every SPARQL endpoint offers the rest of the package: read-only queries whose results are text
in the media type the corpus stores (opening one: factory.py)."""

from __future__ import annotations

import enum
from typing import Any, NamedTuple, Protocol

from pytest_graphrag_eval.errors import GraphragEvalError

SPARQL_RESULTS_JSON = "application/sparql-results+json"
N_TRIPLES = "application/n-triples"


class QueryForm(enum.Enum):
    """The read-only SPARQL query forms, by the kind of result they give."""

    SELECT = "SELECT"
    ASK = "ASK"
    CONSTRUCT = "CONSTRUCT or DESCRIBE"

    @property
    def media_type(self) -> str:
        """The media type the result is returned (and stored in a corpus) as."""
        return SPARQL_RESULTS_JSON if self in (QueryForm.SELECT, QueryForm.ASK) else N_TRIPLES


class EndpointError(GraphragEvalError):
    """A query could not be run: refused, invalid, timed out, or the endpoint failed (message says which)."""


class QueryRefused(EndpointError):
    """The text is not a read-only query (a SPARQL Update, or not SPARQL at all)."""


class EndpointUnavailable(EndpointError):
    """The endpoint cannot be reached or keeps failing: every later query fails at once with this."""


class QueryResult(NamedTuple):
    """One query's result as text in `media_type`, with the engine's own time for it."""

    form: QueryForm
    text: str
    seconds: float

    @property
    def media_type(self) -> str:
        return self.form.media_type


class SparqlEndpoint(Protocol):
    """A graph that answers read-only SPARQL queries; safe to call from several threads at once."""

    def execute(self, query: str) -> QueryResult:
        """Run one query; raises EndpointError (QueryRefused for anything but a read-only query)."""
        ...

    def describe(self) -> dict[str, Any]:
        """Which graph this is, for the report: never a credential."""
        ...

    def close(self) -> None: ...
