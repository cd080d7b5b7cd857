"""The embedded SPARQL store: the grid graph loaded into an in-memory pyoxigraph Store.

Query results leave this module as SPARQL 1.1 Query Results JSON text, the
format an agent's tool call returns and the corpus stores as step output.
"""

from __future__ import annotations

import json
from functools import lru_cache
from pathlib import Path
from typing import Any

import pyoxigraph

GRAPH_PATH = Path(__file__).resolve().parents[1] / "grid" / "grid.ttl"

PREFIXES = {
    "cim": "https://cim.ucaiug.io/ns#",
    "cimex": "https://example.org/grid/cimex#",
    "rdfs": "http://www.w3.org/2000/01/rdf-schema#",
    "xsd": "http://www.w3.org/2001/XMLSchema#",
}

PREFIX_HEADER = "".join(f"PREFIX {name}: <{iri}>\n" for name, iri in PREFIXES.items())


class QueryError(Exception):
    """A query the store rejected (syntax error) or that is not a SELECT."""


def load_store(path: Path = GRAPH_PATH) -> pyoxigraph.Store:
    """A fresh in-memory store holding the Turtle file at `path`."""
    store = pyoxigraph.Store()
    store.load(path=str(path), format=pyoxigraph.RdfFormat.TURTLE)
    return store


@lru_cache(maxsize=1)
def shared_store() -> pyoxigraph.Store:
    """The grid store, loaded once per process and reused (it is only read)."""
    return load_store()


def select(store: pyoxigraph.Store, query: str, *, indent: int | None = 2) -> str:
    """Run a SELECT query and return its SPARQL JSON results as text.

    `indent=2` gives the multi-line form agents usually log; `indent=None` the
    compact single-line form used in the corpus.
    """
    try:
        results = store.query(query)
    except SyntaxError as error:
        raise QueryError(f"SPARQL syntax error: {error}") from None
    if not isinstance(results, pyoxigraph.QuerySolutions):
        raise QueryError("only SELECT queries are supported")
    document = json.loads(results.serialize(format=pyoxigraph.QueryResultsFormat.JSON))
    return json.dumps(document, indent=indent, ensure_ascii=False)


def bindings(output: str) -> list[dict[str, str]]:
    """The rows of a SPARQL JSON result as `{variable: value}`, unbound variables left out."""
    document: dict[str, Any] = json.loads(output)
    return [{name: term["value"] for name, term in row.items()} for row in document["results"]["bindings"]]


def literal(text: str) -> str:
    """`text` as a quoted SPARQL string literal, so user text cannot change the query."""
    return json.dumps(text, ensure_ascii=False)
