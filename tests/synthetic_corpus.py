"""A deterministic synthetic corpus with recorded responses, for whole-run tests and benchmarks.

Each question has an `iri_discovery` and a SPARQL step and a reference answer;
its recorded response is right, has a wrong SPARQL row, or is an agent error,
chosen by a hash of the question id and a seed. Two seeds make a "baseline"
and a "current" recording whose differences give regressions and fixes, so a
replay run exercises thresholds, suite gates, the lexical judge and the
baseline comparison — everything a report holds — without any network.
"""

from __future__ import annotations

import hashlib
import json
from pathlib import Path
from typing import Any

import yaml

SPARQL_JSON = "application/sparql-results+json"


def synthetic_corpus(count: int, *, per_template: int = 100, rows: int = 1) -> list[dict[str, Any]]:
    """`count` questions in templates of `per_template` (the last one may be shorter); each SPARQL
    output has `rows` rows (more make larger reports, as real knowledge graphs' results do)."""
    templates = []
    for start in range(0, count, per_template):
        questions = []
        for index in range(start, min(count, start + per_template)):
            entity = f"http://example.org/entity/{index}"
            questions.append(
                {
                    "id": f"q{index:06d}",
                    "question_text": f"What is the label of entity {index}?",
                    "reference_answer": f"Entity {index} label",
                    "reference_steps": [
                        [
                            {"name": "iri_discovery", "output": entity},
                            {
                                "name": "sparql_query",
                                "output": _sparql_output(entity, f"Entity {index}", rows),
                                "output_media_type": SPARQL_JSON,
                            },
                        ]
                    ],
                }
            )
        templates.append({"template_id": f"t{start // per_template:04d}", "questions": questions})
    return templates


def synthetic_responses(count: int, *, seed: int = 0, rows: int = 1) -> list[dict[str, Any]]:
    """One recorded response per question: about 88% right, 10% with a wrong row, 2% agent errors;
    `rows` as in `synthetic_corpus`."""
    responses: list[dict[str, Any]] = []
    for index in range(count):
        question_id = f"q{index:06d}"
        draw = _draw(question_id, seed)
        entity = f"http://example.org/entity/{index}"
        if draw < 0.02:
            responses.append({"question_id": question_id, "status": "error", "error": "agent timed out"})
            continue
        label = f"Entity {index}" if draw >= 0.12 else f"Entity {index + 1}"
        answer = f"Entity {index} label" if draw >= 0.12 else f"entity {index} has no label"
        responses.append(
            {
                "question_id": question_id,
                "actual_answer": answer,
                "actual_steps": [
                    {"name": "iri_discovery", "id": "c1", "status": "success", "output": entity},
                    {
                        "name": "sparql_query",
                        "id": "c2",
                        "status": "success",
                        "output": _sparql_output(entity, label, rows),
                    },
                ],
            }
        )
    return responses


def write_synthetic_project(folder: Path, count: int, *, per_template: int = 100, rows: int = 1) -> None:
    """`corpus.yaml`, `responses.jsonl` (seed 0) and `baseline_responses.jsonl` (seed 1) in `folder`."""
    folder.mkdir(parents=True, exist_ok=True)
    corpus = synthetic_corpus(count, per_template=per_template, rows=rows)
    (folder / "corpus.yaml").write_text(yaml.safe_dump(corpus, sort_keys=False), encoding="utf-8")
    for name, seed in (("responses.jsonl", 0), ("baseline_responses.jsonl", 1)):
        responses = synthetic_responses(count, seed=seed, rows=rows)
        lines = (json.dumps(response) + "\n" for response in responses)
        (folder / name).write_text("".join(lines), encoding="utf-8")


def _draw(question_id: str, seed: int) -> float:
    """A number in [0, 1) fixed by the question id and the seed."""
    digest = hashlib.sha256(f"{seed}:{question_id}".encode()).digest()
    return int.from_bytes(digest[:8], "big") / 2**64


def _sparql_output(entity: str, label: str, rows: int) -> str:
    """The entity and its label, then `rows - 1` rows of the entity's other names (the same in the
    reference and the response, so they change no score)."""
    names = [label, *(f"{entity.rsplit('/', 1)[-1]}, also known as name {index}" for index in range(1, rows))]
    bindings = [
        {"s": {"type": "uri", "value": entity}, "label": {"type": "literal", "value": name}} for name in names
    ]
    return json.dumps({"head": {"vars": ["s", "label"]}, "results": {"bindings": bindings}})
