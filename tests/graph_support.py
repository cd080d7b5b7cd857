"""Graphs for the graph tests: the example project's grid, and a small second release of it."""

from __future__ import annotations

from pathlib import Path

EXAMPLE = Path(__file__).resolve().parents[1] / "example_project"
GRID = EXAMPLE / "grid" / "grid.ttl"
CIM = "https://cim.ucaiug.io/ns#"
PREFIX = f"PREFIX cim: <{CIM}>\n"

QUERIES = {
    "select": PREFIX + "SELECT ?s ?name WHERE { ?s a cim:Substation ; cim:IdentifiedObject.name ?name } "
    "ORDER BY ?name",
    "select_typed": PREFIX + "SELECT ?zone (COUNT(?s) AS ?n) (SUM(?r) AS ?total) WHERE { "
    "?s a cim:Substation ; cim:Substation.Region ?zone . OPTIONAL { ?t cim:Equipment.EquipmentContainer ?s . "
    "?e cim:PowerTransformerEnd.PowerTransformer ?t ; cim:PowerTransformerEnd.ratedS ?r } } "
    "GROUP BY ?zone ORDER BY ?zone",
    "ask_true": PREFIX + 'ASK { ?s cim:IdentifiedObject.name "HAMAR" }',
    "ask_false": PREFIX + 'ASK { ?s cim:IdentifiedObject.name "NOWHERE" }',
    "construct": PREFIX + "CONSTRUCT { ?s cim:IdentifiedObject.name ?name ; ?p ?o } WHERE { "
    "?s a cim:Substation ; cim:IdentifiedObject.name ?name ; ?p ?o }",
    "construct_bnodes": PREFIX + "CONSTRUCT { _:b cim:named ?name } WHERE { ?s a cim:Substation ; "
    "cim:IdentifiedObject.name ?name }",
    "describe": PREFIX + 'DESCRIBE ?s WHERE { ?s cim:IdentifiedObject.name "HAMAR" }',
}
