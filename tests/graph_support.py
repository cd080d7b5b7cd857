"""Graphs for the graph tests: the example project's grid, and a small second release of it."""

from __future__ import annotations

import json
import tempfile
from pathlib import Path
from typing import Any

import yaml

from pytest_graphrag_eval.graph.embedded import EmbeddedEndpoint

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

# A tiny grid in two releases: in release 2, substation s2 moved from zone z1 to z2 and s4 was added to z1.
EX = "http://example.org/grid#"
RELEASE_1 = f"""@prefix ex: <{EX}> .
ex:s1 ex:name "Alpha" ; ex:zone ex:z1 .
ex:s2 ex:name "Beta" ; ex:zone ex:z1 .
ex:s3 ex:name "Gamma" ; ex:zone ex:z2 .
"""
RELEASE_2 = f"""@prefix ex: <{EX}> .
ex:s1 ex:name "Alpha" ; ex:zone ex:z1 .
ex:s2 ex:name "Beta" ; ex:zone ex:z2 .
ex:s3 ex:name "Gamma" ; ex:zone ex:z2 .
ex:s4 ex:name "Delta" ; ex:zone ex:z1 .
"""
SMALL_QUERIES = {
    "in-zone-1": f"PREFIX ex: <{EX}>\nSELECT ?s ?name WHERE {{ ?s ex:zone ex:z1 ; ex:name ?name }}",
    "beta-in-zone-1": f"PREFIX ex: <{EX}>\nASK {{ ex:s2 ex:zone ex:z1 }}",
    "gamma-name": f"PREFIX ex: <{EX}>\nSELECT ?name WHERE {{ ex:s3 ex:name ?name }}",
}
SPARQL_JSON = "application/sparql-results+json"


def small_corpus(outputs: dict[str, str]) -> list[dict[str, Any]]:
    """One template, a question per query; each reference step stores the given output."""
    return [
        {
            "template_id": "zones",
            "questions": [
                {
                    "id": question_id,
                    "question_text": f"Question {question_id}?",
                    "reference_steps": [
                        [
                            {
                                "name": "sparql_query",
                                "args": {"query": query},
                                "output": outputs[question_id],
                                "output_media_type": SPARQL_JSON,
                            }
                        ]
                    ],
                }
                for question_id, query in SMALL_QUERIES.items()
            ],
        }
    ]


def small_responses(outputs: dict[str, str]) -> list[dict[str, Any]]:
    """A recording: the agent ran each reference query and saw the given outputs."""
    return [
        {
            "question_id": question_id,
            "actual_answer": "recorded",
            "actual_steps": [
                {
                    "name": "sparql_query",
                    "id": f"call-{question_id}",
                    "args": {"query": query},
                    "status": "success",
                    "output": outputs[question_id],
                }
            ],
        }
        for question_id, query in SMALL_QUERIES.items()
    ]


def outputs_on(turtle: str) -> dict[str, str]:
    """Each small query's result on a graph given as Turtle (through the embedded store)."""
    with tempfile.TemporaryDirectory() as folder:
        path = Path(folder) / "graph.ttl"
        path.write_text(turtle, encoding="utf-8")
        endpoint = EmbeddedEndpoint.load(path)
        return {question_id: endpoint.execute(query).text for question_id, query in SMALL_QUERIES.items()}


def write_project(pytester: Any, corpus: Any, responses: Any, graphs: dict[str, str]) -> None:
    """corpus.yaml, responses.jsonl and the graph files in pytester's folder."""
    pytester.path.joinpath("corpus.yaml").write_text(
        yaml.safe_dump(corpus, sort_keys=False), encoding="utf-8"
    )
    pytester.path.joinpath("responses.jsonl").write_text(
        "".join(json.dumps(response) + "\n" for response in responses), encoding="utf-8"
    )
    for name, text in graphs.items():
        pytester.path.joinpath(name).write_text(text, encoding="utf-8")
