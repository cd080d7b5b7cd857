"""Only read-only queries leave the plugin: the query is parsed, and its parsed form decides. An Update is not
in the query grammar, so it fails to parse and is refused before anything is sent. Text that cannot hold a
SERVICE clause is read by pyoxigraph against an empty store, whose (lazy) result tells the form; other text
goes through rdflib's algebra (service.py)."""

from __future__ import annotations

import functools
import threading
from typing import Any

from pytest_graphrag_eval.errors import install_extra_hint
from pytest_graphrag_eval.graph.endpoint import EndpointError, QueryForm, QueryRefused
from pytest_graphrag_eval.graph.service import ServicePolicy, may_call_out, parsed_services

_CACHE_SIZE = 4096
_local = threading.local()
NOT_READ_ONLY = (
    "not a valid read-only SPARQL query (SELECT, ASK, CONSTRUCT or DESCRIBE; an Update such as INSERT, "
    "DELETE, LOAD, CLEAR or DROP is never sent)"
)
_MESSAGE_CHARS = 160


NO_SERVICE = ServicePolicy()


def query_form(query: Any, service: ServicePolicy = NO_SERVICE) -> QueryForm:
    """The form of a read-only query; QueryRefused (saying why) for an Update, invalid SPARQL, or a
    SERVICE clause `service` does not allow."""
    if not isinstance(query, str) or not query.strip():
        raise QueryRefused("the query is empty" if isinstance(query, str) or query is None else "not text")
    if may_call_out(query):
        parsed = parsed_services(query)
        if isinstance(parsed, str):
            raise QueryRefused(f"{NOT_READ_ONLY}: {parsed}")
        refusal = service.refusal(parsed[1])
        if refusal is not None:
            raise QueryRefused(refusal)
        return parsed[0]
    form = _parsed_form(query)
    if isinstance(form, str):
        raise QueryRefused(form)
    return form


@functools.lru_cache(maxsize=_CACHE_SIZE)
def _parsed_form(query: str) -> QueryForm | str:
    """The form, or why the text is refused (cached: a corpus repeats its queries run after run)."""
    try:
        result = _empty_store().query(query)
    except Exception as error:  # whatever the engine raises, the query is not run
        return f"{NOT_READ_ONLY}: {first_line(error)}"
    return result_form(result)


def result_form(result: Any) -> QueryForm:
    """The form of a query, from the kind of (lazy) result pyoxigraph's `Store.query` gave for it."""
    pyoxigraph = import_pyoxigraph()
    if isinstance(result, pyoxigraph.QueryBoolean):
        return QueryForm.ASK
    if isinstance(result, pyoxigraph.QuerySolutions):
        return QueryForm.SELECT
    return QueryForm.CONSTRUCT  # CONSTRUCT or DESCRIBE: both yield triples, returned as N-Triples


def _empty_store() -> Any:
    if getattr(_local, "store", None) is None:  # one per thread
        _local.store = import_pyoxigraph().Store()
    return _local.store


def first_line(error: BaseException) -> str:
    """The first line of an error message, shortened (parser messages can be long)."""
    line = (str(error).strip().splitlines() or [type(error).__name__])[0]
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
