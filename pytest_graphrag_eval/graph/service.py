"""SERVICE: whether a query may call another SPARQL endpoint, decided from its parsed algebra. A SERVICE
clause makes whoever runs the query call that endpoint, so by default such a query is refused and nothing is
sent. rdflib's parser finds the clauses but costs a thousand times pyoxigraph's, so it reads only text that
can spell `service` (in any case, or escaped)."""

from __future__ import annotations

import functools
from collections.abc import Iterable, Iterator
from dataclasses import dataclass
from typing import Any

from pytest_graphrag_eval.errors import install_extra_hint
from pytest_graphrag_eval.graph.endpoint import EndpointError, QueryForm

ALL = "all"
_CACHE_SIZE = 4096
_FORMS = {
    "SelectQuery": QueryForm.SELECT,
    "AskQuery": QueryForm.ASK,
    "ConstructQuery": QueryForm.CONSTRUCT,
    "DescribeQuery": QueryForm.CONSTRUCT,
}


@dataclass(frozen=True)
class ServicePolicy:
    """Which endpoints a SERVICE clause may call: none (the default), these IRIs, or all."""

    allowed: frozenset[str] = frozenset()
    everything: bool = False

    @classmethod
    def parse(cls, value: str | Iterable[str] | None) -> ServicePolicy:
        """From "all", or endpoint IRIs (a comma- or space-separated text, or a list); None: none."""
        items = value.replace(",", " ").split() if isinstance(value, str) else list(value or [])
        if any(item.lower() == ALL for item in items):
            return cls(everything=True)
        return cls(allowed=frozenset(item.strip("<>") for item in items))

    def refusal(self, endpoints: Iterable[str]) -> str | None:
        """Why a query calling these endpoints is not run, or None when each is allowed."""
        if self.everything:
            return None
        for endpoint in endpoints:
            if endpoint not in self.allowed:
                shown = endpoint if endpoint.startswith("?") else f"<{endpoint}>"
                allow = f"--graphrag-sparql-service {'all' if endpoint.startswith('?') else endpoint}"
                return (
                    f"the query has a SERVICE {shown} clause, which would call another endpoint: not "
                    f"executed and nothing sent (to federate on purpose, allow it: {allow})"
                )
        return None


def may_call_out(query: str) -> bool:
    """False when the text cannot hold a SERVICE clause (it never spells it, not even escaped)."""
    return "service" in query.lower() or "\\u" in query or "\\U" in query


@functools.lru_cache(maxsize=_CACHE_SIZE)
def parsed_services(query: str) -> tuple[QueryForm, tuple[str, ...]] | str:
    """(form, SERVICE endpoints as IRIs or `?variable`) from the parsed algebra, or why it does not parse."""
    try:
        from rdflib.plugins.sparql import algebra, parser
    except ImportError:
        raise EndpointError(
            f"checking a query's SERVICE clauses needs rdflib: {install_extra_hint('graph')}"
        ) from None
    try:
        tree = algebra.translateQuery(parser.parseQuery(query))
    except Exception as error:  # any parser failure: not a query we can run
        lines = str(error).strip().splitlines()
        return lines[0][:160] if lines else type(error).__name__
    name = getattr(tree.algebra, "name", "")
    form = _FORMS.get(name)
    if form is None:
        return f"not a query form ({name})"
    return form, tuple(dict.fromkeys(_endpoints(tree.algebra)))


def _endpoints(node: Any) -> Iterator[str]:
    from rdflib.plugins.sparql.parserutils import CompValue
    from rdflib.term import Variable

    pending = [node]
    while pending:
        current = pending.pop()
        if isinstance(current, CompValue):
            if current.name == "ServiceGraphPattern":
                term = current.get("term")
                yield f"?{term}" if isinstance(term, Variable) else str(term)
            pending.extend(current.values())
        elif isinstance(current, (list, tuple)) or type(current).__name__ == "ParseResults":
            pending.extend(current)
