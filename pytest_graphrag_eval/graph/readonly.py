"""Only read-only queries leave the plugin: the query is parsed, and its parsed form decides.

pyoxigraph's SPARQL parser reads the text with the query grammar. A SPARQL Update (INSERT, DELETE,
LOAD, CLEAR, DROP, ...) is not a query in that grammar and fails to parse, so it is refused before
anything is sent; so is text that is not valid SPARQL. The kind of result the parsed query yields
tells its form. Parsing happens against an empty in-memory store: SELECT, CONSTRUCT and DESCRIBE
results are lazy and nothing is evaluated; an ASK is evaluated against no data (a SERVICE clause
inside an ASK is the one thing that may reach out; the endpoint would run it anyway).
"""

from __future__ import annotations

import functools
import threading
from typing import Any

from pytest_graphrag_eval.errors import install_extra_hint
from pytest_graphrag_eval.graph.endpoint import EndpointError, QueryForm, QueryRefused

_CACHE_SIZE = 4096
_local = threading.local()
NOT_READ_ONLY = (
    "not a valid read-only SPARQL query (SELECT, ASK, CONSTRUCT or DESCRIBE; an Update such as INSERT, "
    "DELETE, LOAD, CLEAR or DROP is never sent)"
)
_MESSAGE_CHARS = 160


def query_form(query: Any) -> QueryForm:
    """The form of a read-only query; QueryRefused (saying why) for an Update or invalid SPARQL."""
    if not isinstance(query, str) or not query.strip():
        raise QueryRefused("the query is empty" if isinstance(query, str) or query is None else "not text")
    form = _parsed_form(query)
    if isinstance(form, str):
        raise QueryRefused(form)
    return form


@functools.lru_cache(maxsize=_CACHE_SIZE)
def _parsed_form(query: str) -> QueryForm | str:
    """The form, or why the text is refused (cached: a corpus repeats its queries run after run)."""
    pyoxigraph = import_pyoxigraph()
    try:
        result = _empty_store().query(query)
    except SyntaxError as error:
        return f"{NOT_READ_ONLY}: {first_line(error)}"
    except OSError:  # an ASK whose SERVICE call failed against no data: still a read-only ASK
        return QueryForm.ASK
    if isinstance(result, pyoxigraph.QueryBoolean):
        return QueryForm.ASK
    if isinstance(result, pyoxigraph.QuerySolutions):
        return QueryForm.SELECT
    return QueryForm.CONSTRUCT  # CONSTRUCT or DESCRIBE: both yield triples, returned as N-Triples


def _empty_store() -> Any:
    store = getattr(_local, "store", None)
    if store is None:
        store = import_pyoxigraph().Store()
        _local.store = store
    return store


def first_line(error: BaseException) -> str:
    """The first line of an error message, at most 200 characters (parser messages can be long)."""
    lines = str(error).strip().splitlines()
    if not lines:
        return type(error).__name__
    line = lines[0]
    return line if len(line) <= _MESSAGE_CHARS else line[: _MESSAGE_CHARS - 1] + "…"


def import_pyoxigraph() -> Any:
    """The pyoxigraph module, or an EndpointError saying which extra to install."""
    try:
        import pyoxigraph
    except ImportError:
        raise EndpointError(
            f"SPARQL endpoint support needs pyoxigraph: {install_extra_hint('graph')}"
        ) from None
    return pyoxigraph
