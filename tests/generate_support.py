"""Template files for the generator's tests, over the example project's grid graph."""

from __future__ import annotations

from pathlib import Path

from pytest_graphrag_eval.commands.corpus import main

ROOT = Path(__file__).resolve().parents[1]
EXAMPLE = ROOT / "example_project"
RELEASE_1 = EXAMPLE / "grid" / "grid.ttl"
RELEASE_2 = EXAMPLE / "grid" / "release-2" / "grid.ttl"

PREFIXES = """\
prefixes:
  cim: https://cim.ucaiug.io/ns#
  cimex: https://example.org/grid/cimex#
  rdfs: http://www.w3.org/2000/01/rdf-schema#
"""

# Every substation with its zone: release 2 moves SAUDA from NO2 to NO5 and adds a transformer at HAMAR.
TRANSFORMERS_BY_ZONE = (
    PREFIXES
    + """\
templates:
  - template_id: transformers_of_substation_in_zone
    parameters: [substation, zone]
    candidates: |
      select ?substation ?zone ?substationIri where {
        ?substationIri a cim:Substation ;
                       cim:IdentifiedObject.name ?substation ;
                       cim:Substation.Region ?zoneIri .
        ?zoneIri cim:IdentifiedObject.name ?zone .
      }
      order by ?substation
    phrasings:
      - List the transformers of substation {{substation}} in bidding zone {{zone}}
      - Which transformers does substation {{substation}} of zone {{zone}} hold?
    question_id: trafos-{{zone}}-{{substation}}
    reference_steps:
      - - name: iri_discovery
          args: {entity: "{{substation}}"}
          output: "{{substationIri}}"
      - - name: sparql_query
          args:
            query: |
              select ?trafo ?trafoName where {
                ?trafo a cim:PowerTransformer ;
                       cim:Equipment.EquipmentContainer {{substationIri}} ;
                       cim:IdentifiedObject.name ?trafoName .
              }
              order by ?trafoName
          required_columns: [trafo, trafoName]
    answer: {labels: trafoName}
SAMPLE
"""
)


def transformers_by_zone(folder: Path, sample: str = "") -> Path:
    """The template file in `folder`; `sample` is a `sample:` line (indented under the template)."""
    path = folder / "templates.yaml"
    path.write_text(
        TRANSFORMERS_BY_ZONE.replace("SAMPLE\n", f"    {sample}\n" if sample else ""), encoding="utf-8"
    )
    return path


def corpus_command(*args: str | Path) -> int:
    """`graphrag-eval-corpus` with these arguments, in this process; its exit status."""
    return main([str(arg) for arg in args])
