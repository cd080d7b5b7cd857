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
from .trace import Trace


class RegressedGridAgent(GridAgent):
    """`GridAgent` with four deliberate regressions (see the module docstring)."""

    def resolve(self, trace: Trace, name: str, result_class: str) -> str:
        ascii_name = unicodedata.normalize("NFKD", name).encode("ascii", "ignore").decode()
        return super().resolve(trace, ascii_name, result_class)

    def lines_between_zones_query(self, first: str, second: str) -> str:
        # Bug: the `a cim:Line` pattern is gone, so HVDC links leak into the AC-lines answer.
        return _without(super().lines_between_zones_query(first, second), "a cim:Line ;\n        ")

    def zone_capacity_query(self, zone: str) -> str:
        # Bug: without the end-number filter both transformer ends are summed, doubling the total.
        return _without(super().zone_capacity_query(zone), "       cim:TransformerEnd.endNumber 1 ;\n")

    def lines_by_length_query(self, substation: str) -> str:
        return _without(super().lines_by_length_query(substation), "DESC(?length)", "?length")


def _without(query: str, part: str, replacement: str = "") -> str:
    """The good agent's query with one pattern edited; fails loudly if that query changed shape."""
    if part not in query:
        raise ValueError(f"the regressed agent expected {part!r} in the good agent's query")
    return query.replace(part, replacement)
