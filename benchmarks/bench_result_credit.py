"""Benchmark: what partial credit (steps_result_*) and graph comparison cost next to steps_score.

SPARQL: one question whose reference and actual results have N rows x 20 columns
(8 required, the data of bench_sparql_compare.py); timed are the steps score
alone (`score_steps`, as before partial credit existed) and the whole
StepsScorer (steps score plus precision/recall/F1), for an actual result that
matches and for one with a tenth of its rows changed, so the best-mapping
search runs. Graphs: a DESCRIBE-like Turtle graph of N subjects, each with a
blank-node group, against the same graph as N-Triples with renamed blank nodes
and shuffled lines; timed is parsing both and comparing.

    python benchmarks/bench_result_credit.py           # full run
    python benchmarks/bench_result_credit.py --quick   # small CI-sized run
"""

from __future__ import annotations

import argparse
import asyncio
import json
import random
from functools import partial
from typing import Any

from bench_sparql_compare import ACTUAL_COLUMNS, REQUIRED, make_rows
from timing import announce_quick, median_seconds

from pytest_graphrag_eval import ScoringContext, corpus_from_data
from pytest_graphrag_eval.corpus.reference_corpus import Question
from pytest_graphrag_eval.formats import rdf_graphs
from pytest_graphrag_eval.formats.sparql_results import MemoizedParser
from pytest_graphrag_eval.steps.graph_compare import graph_output_score
from pytest_graphrag_eval.steps.groups import score_steps
from pytest_graphrag_eval.steps.scorer import StepsScorer

SPARQL_JSON = "application/sparql-results+json"


def results_json(variables: list[str], rows: list[list[dict[str, str]]]) -> str:
    bindings = [dict(zip(variables, row, strict=True)) for row in rows]
    return json.dumps({"head": {"vars": variables}, "results": {"bindings": bindings}})


def sparql_question(rows: int, changed: bool) -> tuple[Question, dict[str, Any]]:
    rng = random.Random(7)
    table = make_rows(rows, rng)
    variables = [f"v{index}" for index in range(ACTUAL_COLUMNS)]
    reference = {
        "name": "sparql_query",
        "output_media_type": SPARQL_JSON,
        "output": results_json(variables, table),
        "required_columns": variables[:REQUIRED],
    }
    actual_rows = [list(row) for row in table]
    if changed:
        for row in actual_rows[::10]:
            row[0] = {"type": "uri", "value": row[0]["value"] + "-changed"}
    order = list(range(ACTUAL_COLUMNS))
    rng.shuffle(order)
    actual_variables = [f"a{index}" for index in order]
    shuffled = [[row[index] for index in order] for row in actual_rows]
    output = results_json(actual_variables, shuffled)
    question = next(
        iter(
            corpus_from_data(
                [
                    {
                        "template_id": "t",
                        "questions": [{"id": "q", "question_text": "?", "reference_steps": [[reference]]}],
                    }
                ]
            ).questions()
        )
    )
    step = {"id": "s1", "name": "sparql_query", "status": "success", "output": output}
    return question, {"actual_answer": "", "actual_steps": [step]}


def score_alone(question: Question, response: dict[str, Any]) -> object:
    """The steps score alone, with a fresh parser per call as a scorer's question has."""
    parse = MemoizedParser(question.reference_reading.tables)
    return score_steps(question.reference_steps or [], response["actual_steps"], "last_group", parse=parse)


def score_whole(scorer: StepsScorer, question: Question, response: dict[str, Any]) -> object:
    """The whole steps scorer on one question, partial credit included."""
    return asyncio.run(scorer.score(question, response, ScoringContext()))


def graph_texts(subjects: int) -> tuple[str, str]:
    ex = "http://example.org/grid#"
    turtle = [f"@prefix ex: <{ex}> ."]
    lines = []
    for index in range(subjects):
        location = f"[ ex:lat {index}.5 ; ex:lon {index}.25 ]"
        turtle.append(f'ex:s{index} a ex:Substation ; ex:name "S{index}" ; ex:loc {location} .')
        lines += [
            f"<{ex}s{index}> <http://www.w3.org/1999/02/22-rdf-syntax-ns#type> <{ex}Substation> .",
            f'<{ex}s{index}> <{ex}name> "S{index}" .',
            f"<{ex}s{index}> <{ex}loc> _:agent{index} .",
            f'_:agent{index} <{ex}lat> "{index}.5"^^<http://www.w3.org/2001/XMLSchema#decimal> .',
            f'_:agent{index} <{ex}lon> "{index}.25"^^<http://www.w3.org/2001/XMLSchema#decimal> .',
        ]
    random.Random(3).shuffle(lines)
    return "\n".join(turtle), "\n".join(lines)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--quick", action="store_true", help="small sizes, for CI")
    quick = parser.parse_args().quick
    announce_quick(quick)
    sizes = [200] if quick else [1_000, 10_000]
    repeats = 1 if quick else 5
    scorer = StepsScorer()
    print("SPARQL, 20 columns (8 required): steps_score alone vs StepsScorer with partial credit")
    for rows in sizes:
        for changed in (False, True):
            question, response = sparql_question(rows, changed)
            alone = median_seconds(partial(score_alone, question, response), repeats)
            whole = median_seconds(partial(score_whole, scorer, question, response), repeats)
            result = asyncio.run(scorer.score(question, response, ScoringContext()))
            label = "a tenth changed" if changed else "matching"
            print(
                f"  {rows:>6} rows, {label:<15}  steps_score alone {alone * 1000:8.1f} ms   "
                f"with partial credit {whole * 1000:8.1f} ms   ratio {whole / alone:4.2f}   "
                f"f1 {result['steps_result_f1']:.3f}"
            )
    print("Graphs: Turtle reference vs shuffled N-Triples with renamed blank nodes (parse both and compare)")
    for subjects in [100] if quick else [1_000, 10_000]:
        turtle, ntriples = graph_texts(subjects)
        reference = {"name": "sparql_query", "output_media_type": "text/turtle", "output": turtle}
        actual = {
            "name": "sparql_query",
            "status": "success",
            "output": ntriples,
            "output_media_type": "application/n-triples",
        }

        def compare(reference: dict[str, Any] = reference, actual: dict[str, Any] = actual) -> float:
            rdf_graphs._parse_cached.cache_clear()  # time the parse, not the cache
            return graph_output_score(reference, actual)

        assert compare() == 1.0
        seconds = median_seconds(compare, repeats)
        print(f"  {subjects * 5:>6} triples, {subjects} blank nodes: {seconds * 1000:8.1f} ms")


if __name__ == "__main__":
    main()
