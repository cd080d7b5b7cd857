"""A regressed release of the example agent, used to record `recordings/regression.jsonl`.

Each override is a plausible mistake a prompt or code change could introduce;
the corpus should catch every one of them:

- the AC-lines query lost its line-type restriction, so HVDC links leak into
  answers about AC lines between bidding zones (extra rows);
- the capacity query lost its `endNumber 1` restriction, so both windings of
  every transformer are summed and the total doubles (wrong number);
- the lines-by-length query sorts ascending, so the order is wrong although
  the set of lines is right (only `ordered: true` catches it);
- names are folded to ASCII before the lookup, so a substation spelled with
  Ø or Å is not found and the agent answers with an error.
"""

from __future__ import annotations

import unicodedata

from .agent import GridAgent
from .store import PREFIX_HEADER
from .trace import Trace


class RegressedGridAgent(GridAgent):
    """`GridAgent` with four deliberate regressions (see the module docstring)."""

    def resolve(self, trace: Trace, name: str, result_class: str) -> str:
        ascii_name = unicodedata.normalize("NFKD", name).encode("ascii", "ignore").decode()
        return super().resolve(trace, ascii_name, result_class)

    def lines_between_zones_query(self, first: str, second: str) -> str:
        return f"""{PREFIX_HEADER}SELECT DISTINCT ?line ?name ?from ?to WHERE {{
  ?line cim:IdentifiedObject.name ?name ;
        cimex:connectedThroughPart ?a, ?b .
  ?a cim:Substation.Region <{first}> ;
     cim:IdentifiedObject.name ?from .
  ?b cim:Substation.Region <{second}> ;
     cim:IdentifiedObject.name ?to .
}}
ORDER BY ?name"""

    def zone_capacity_query(self, zone: str) -> str:
        return f"""{PREFIX_HEADER}SELECT (COUNT(DISTINCT ?transformer) AS ?count)
       (SUM(?ratedS) AS ?totalMVA)
WHERE {{
  ?substation cim:Substation.Region <{zone}> .
  ?transformer a cim:PowerTransformer ;
               cim:Equipment.EquipmentContainer ?substation .
  ?end cim:PowerTransformerEnd.PowerTransformer ?transformer ;
       cim:PowerTransformerEnd.ratedS ?ratedS .
}}"""

    def lines_by_length_query(self, substation: str) -> str:
        return super().lines_by_length_query(substation).replace("ORDER BY DESC(?length)", "ORDER BY ?length")
