"""A deterministic GraphRAG agent for the grid graph.

It stands in for an LLM agent: it recognises the corpus' question templates
with regular expressions, resolves the names in the question with
`autocomplete_search`, runs a SPARQL query (or a keyword retrieval) and phrases
an answer from the tool outputs it got back. Its queries are written
independently of the corpus' reference queries (other variable names, other
column order, extra columns), as a real agent's would be.

`GridAgent.answer()` returns the seed's target format: a success response
with `actual_answer`, `actual_steps`, token counts and `elapsed_sec`, or the
error shape `{"question_id", "status": "error", "error"}` when it gives up.
"""

from __future__ import annotations

import functools
import json
import re
import time
from collections.abc import Callable
from typing import Any

import pyoxigraph

from .store import PREFIX_HEADER, bindings
from .tools import GridTools
from .trace import AgentError, Trace

NAME = r"[\w-]+(?: [\w-]+)*"
RETRIEVAL_K = 5


def template(pattern: str) -> re.Pattern[str]:
    return re.compile(rf"^\s*{pattern}\s*[.?!]?\s*$", re.IGNORECASE)


TRANSFORMERS_IN_SUBSTATION = template(rf"list all transformers (?:with)?in substation (?P<substation>{NAME})")
SUBSTATIONS_IN_ZONE = template(rf"list all substations (?:with)?in bidding zone (?P<zone>{NAME})")
CONNECTED_SUBSTATIONS = template(
    rf"list all substations connected to substation (?P<substation>{NAME}) via an ac or dc line"
)
LINES_BETWEEN_ZONES = template(
    rf"list all ac lines between bidding zones (?P<zone1>{NAME}) and (?P<zone2>{NAME})"
)
ZONE_CAPACITY = template(
    rf"what is the total rated power of the transformers in bidding zone (?P<zone>{NAME})"
)
LINES_BY_LENGTH = template(rf"list the lines at substation (?P<substation>{NAME}),? longest first")
SUBSTATIONS_BY_DESCRIPTION = template(r"which substations (?P<topic>[\w -]+)")


class GridAgent:
    """Answers grid questions by planning tool calls from the question's template."""

    def __init__(self, store: pyoxigraph.Store) -> None:
        self.tools = GridTools(store)
        self.plans: list[tuple[re.Pattern[str], Callable[..., str]]] = [
            (TRANSFORMERS_IN_SUBSTATION, self.transformers_in_substation),
            (SUBSTATIONS_IN_ZONE, self.substations_in_zone),
            (CONNECTED_SUBSTATIONS, self.connected_substations),
            (LINES_BETWEEN_ZONES, self.ac_lines_between_zones),
            (ZONE_CAPACITY, self.zone_capacity),
            (LINES_BY_LENGTH, self.lines_by_length),
            (SUBSTATIONS_BY_DESCRIPTION, self.substations_by_description),
        ]

    def answer(self, question_id: str, question_text: str) -> dict[str, Any]:
        """Answer one question in the seed's response format; never raises for a bad question."""
        started = time.perf_counter()
        trace = Trace(question_id, question_text)
        try:
            answer = self.plan(question_text)(trace)
        except AgentError as error:
            return {"question_id": question_id, "status": "error", "error": str(error)}
        return trace.response(answer, time.perf_counter() - started)

    def plan(self, question_text: str) -> Callable[[Trace], str]:
        for pattern, handler in self.plans:
            match = pattern.match(question_text)
            if match:
                return functools.partial(handler, **match.groupdict())
        raise AgentError("no plan for this question: it matches none of the templates the agent knows")

    # --- entity resolution -------------------------------------------------

    def resolve(self, trace: Trace, name: str, result_class: str) -> str:
        """The IRI of the best `autocomplete_search` hit for `name`."""
        args = {"query": name, "result_class": result_class}
        rows = bindings(
            trace.call("autocomplete_search", args, lambda: self.tools.autocomplete_search(**args))
        )
        if not rows:
            raise AgentError(f"could not find {result_class} named {name!r}")
        return rows[0]["iri"]

    def query(self, trace: Trace, sparql: str) -> list[dict[str, str]]:
        return bindings(
            trace.call("sparql_query", {"query": sparql}, lambda: self.tools.sparql_query(sparql))
        )

    # --- plans ---------------------------------------------------------------

    def transformers_in_substation(self, trace: Trace, substation: str) -> str:
        iri = self.resolve(trace, substation, "cim:Substation")
        rows = self.query(
            trace,
            f"""{PREFIX_HEADER}SELECT ?transformer ?name ?ratedS WHERE {{
  ?transformer a cim:PowerTransformer ;
               cim:Equipment.EquipmentContainer <{iri}> ;
               cim:IdentifiedObject.name ?name .
  ?end cim:PowerTransformerEnd.PowerTransformer ?transformer ;
       cim:TransformerEnd.endNumber 1 ;
       cim:PowerTransformerEnd.ratedS ?ratedS .
}}
ORDER BY ?name""",
        )
        items = [f"{row['name']} ({row['ratedS']} MVA)" for row in rows]
        return listing(f"The transformers in substation {substation}", items)

    def substations_in_zone(self, trace: Trace, zone: str) -> str:
        iri = self.resolve(trace, zone, "cim:SubGeographicalRegion")
        rows = self.query(
            trace,
            f"""{PREFIX_HEADER}SELECT ?name ?substation WHERE {{
  ?substation a cim:Substation ;
              cim:Substation.Region <{iri}> ;
              cim:IdentifiedObject.name ?name .
}}
ORDER BY ?name""",
        )
        return listing(f"The substations in bidding zone {zone}", [row["name"] for row in rows])

    def connected_substations(self, trace: Trace, substation: str) -> str:
        iri = self.resolve(trace, substation, "cim:Substation")
        rows = self.query(
            trace,
            f"""{PREFIX_HEADER}SELECT DISTINCT ?neighbour ?neighbourName ?line ?lineName WHERE {{
  VALUES ?lineType {{ cim:Line cim:DCLine }}
  ?line a ?lineType ;
        cimex:connectedThroughPart <{iri}>, ?neighbour ;
        cim:IdentifiedObject.name ?lineName .
  ?neighbour cim:IdentifiedObject.name ?neighbourName .
  FILTER(?neighbour != <{iri}>)
}}
ORDER BY ?neighbourName ?lineName""",
        )
        neighbours = dict.fromkeys(row["neighbourName"] for row in rows)
        return listing(f"The substations connected to {substation}", list(neighbours))

    def ac_lines_between_zones(self, trace: Trace, zone1: str, zone2: str) -> str:
        first = self.resolve(trace, zone1, "cim:SubGeographicalRegion")
        second = self.resolve(trace, zone2, "cim:SubGeographicalRegion")
        rows = self.query(trace, self.lines_between_zones_query(first, second))
        lines = dict.fromkeys(row["name"] for row in rows)
        return listing(f"The AC lines between bidding zones {zone1} and {zone2}", list(lines))

    def lines_between_zones_query(self, first: str, second: str) -> str:
        return f"""{PREFIX_HEADER}SELECT DISTINCT ?line ?name ?from ?to WHERE {{
  ?line a cim:Line ;
        cim:IdentifiedObject.name ?name ;
        cimex:connectedThroughPart ?a, ?b .
  ?a cim:Substation.Region <{first}> ;
     cim:IdentifiedObject.name ?from .
  ?b cim:Substation.Region <{second}> ;
     cim:IdentifiedObject.name ?to .
}}
ORDER BY ?name"""

    def zone_capacity(self, trace: Trace, zone: str) -> str:
        iri = self.resolve(trace, zone, "cim:SubGeographicalRegion")
        row = self.query(trace, self.zone_capacity_query(iri))[0]
        return (
            f"Bidding zone {zone} has {row['count']} transformers. "
            f"Their total rated power is {row['totalMVA']} MVA."
        )

    def zone_capacity_query(self, zone: str) -> str:
        return f"""{PREFIX_HEADER}SELECT (COUNT(DISTINCT ?transformer) AS ?count)
       (SUM(?ratedS) AS ?totalMVA)
WHERE {{
  ?substation cim:Substation.Region <{zone}> .
  ?transformer a cim:PowerTransformer ;
               cim:Equipment.EquipmentContainer ?substation .
  ?end cim:PowerTransformerEnd.PowerTransformer ?transformer ;
       cim:TransformerEnd.endNumber 1 ;
       cim:PowerTransformerEnd.ratedS ?ratedS .
}}"""

    def lines_by_length(self, trace: Trace, substation: str) -> str:
        iri = self.resolve(trace, substation, "cim:Substation")
        rows = self.query(trace, self.lines_by_length_query(iri))
        items = [f"{row['name']} ({row['length']} km)" for row in rows]
        return listing(f"The lines at substation {substation}, longest first", items)

    def lines_by_length_query(self, substation: str) -> str:
        return f"""{PREFIX_HEADER}SELECT ?line ?name ?length WHERE {{
  ?line cimex:connectedThroughPart <{substation}> ;
        cim:IdentifiedObject.name ?name .
  ?segment cim:Equipment.EquipmentContainer ?line .
  {{ ?segment cim:Conductor.length ?length }} UNION {{ ?segment cim:DCLineSegment.length ?length }}
}}
ORDER BY DESC(?length)"""

    def substations_by_description(self, trace: Trace, topic: str) -> str:
        args = {"query": topic, "k": RETRIEVAL_K}
        documents = json.loads(trace.call("retrieval", args, lambda: self.tools.retrieval(**args)))
        if not documents:
            return f"No substation description matches {topic!r}."
        best = max(document["score"] for document in documents)
        values = " ".join(f"<{document['id']}>" for document in documents if document["score"] == best)
        rows = self.query(
            trace,
            f"""{PREFIX_HEADER}SELECT ?substation ?name ?zone WHERE {{
  VALUES ?substation {{ {values} }}
  ?substation cim:IdentifiedObject.name ?name ;
              cim:Substation.Region/cim:IdentifiedObject.name ?zone .
}}
ORDER BY ?name""",
        )
        items = [f"{row['name']} ({row['zone']})" for row in rows]
        return listing(f"The substations that {topic}", items)


def listing(intro: str, items: list[str]) -> str:
    """`intro: a, b, c.`, or a sentence saying nothing was found."""
    if not items:
        return f"{intro}: none found."
    return f"{intro}: {', '.join(items)}."
