"""Small corpora and responses for driving the plugin through pytester."""

from __future__ import annotations

import json
from typing import Any

import yaml

SPARQL_JSON = "application/sparql-results+json"


def sparql_output(variables: list[str], rows: list[list[str]]) -> str:
    """SPARQL results JSON whose cells are plain literals."""
    bindings = [
        {name: {"type": "literal", "value": value} for name, value in zip(variables, row, strict=True)}
        for row in rows
    ]
    return json.dumps({"head": {"vars": variables}, "results": {"bindings": bindings}})


def reference_step(rows: list[list[str]], **extra: Any) -> dict[str, Any]:
    return {
        "name": "sparql_query",
        "args": {"query": "SELECT ?s ?name WHERE { ?s :name ?name }"},
        "output": sparql_output(["s", "name"], rows),
        "output_media_type": SPARQL_JSON,
        "required_columns": ["s", "name"],
        **extra,
    }


ROWS = {
    "q1": [["s1", "Alpha"], ["s2", "Beta"]],
    "q2": [["s3", "Gamma"]],
    "q3": [["s4", "Delta"], ["s5", "Epsilon"]],
}


def corpus(**question_extra: dict[str, Any]) -> list[dict[str, Any]]:
    """Two templates, three questions; keyword arguments add keys to a question by id."""

    def question(question_id: str, text: str) -> dict[str, Any]:
        return {
            "id": question_id,
            "question_text": text,
            "reference_answer": ", ".join(row[1] for row in ROWS[question_id]),
            "reference_steps": [[reference_step(ROWS[question_id])]],
            **question_extra.get(question_id, {}),
        }

    return [
        {
            "template_id": "names",
            "questions": [question("q1", "Names of set one?"), question("q2", "Names of set two?")],
        },
        {"template_id": "others", "questions": [question("q3", "Names of set three?")]},
    ]


def response(
    question_id: str, rows: list[list[str]] | None = None, answer: str | None = None
) -> dict[str, Any]:
    """A success response whose SPARQL step returns `rows` (the reference rows by default)."""
    rows = ROWS[question_id] if rows is None else rows
    return {
        "question_id": question_id,
        "actual_answer": answer
        if answer is not None
        else "The names are " + ", ".join(r[1] for r in rows) + ".",
        "actual_steps": [
            {
                "name": "sparql_query",
                "args": {"query": "SELECT ?x ?label WHERE { ?x :name ?label }"},
                "id": f"call_{question_id}",
                "status": "success",
                "output": sparql_output(["x", "label"], rows),
            }
        ],
        "input_tokens": 100,
        "output_tokens": 10,
        "total_tokens": 110,
        "elapsed_sec": 1.5,
    }


def good_responses() -> list[dict[str, Any]]:
    return [response(question_id) for question_id in ROWS]


def write_corpus(pytester: Any, data: Any, name: str = "corpus.yaml") -> None:
    pytester.path.joinpath(name).write_text(yaml.safe_dump(data, sort_keys=False), encoding="utf-8")


def write_responses(pytester: Any, responses: list[dict[str, Any]], name: str = "responses.jsonl") -> None:
    pytester.path.joinpath(name).write_text(
        "".join(json.dumps(r) + "\n" for r in responses), encoding="utf-8"
    )


# A replay of corpus.yaml with responses.jsonl in which a question under 1 in steps_score fails.
REPLAY_WITH_THRESHOLD = [
    "--graphrag-corpus", "corpus.yaml", "--graphrag-responses", "responses.jsonl",
    "--graphrag-threshold", "steps_score>=1",
]  # fmt: skip


def write_project_where_q3_fails(pytester: Any) -> Any:
    """The plugin tests' corpus with good responses except q3's (another row): q3 fails."""
    write_corpus(pytester, corpus())
    responses = good_responses()
    responses[2] = response("q3", rows=[["s4", "Delta"]])
    write_responses(pytester, responses)
    return pytester
