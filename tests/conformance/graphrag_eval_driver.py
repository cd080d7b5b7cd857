"""Run graphrag-eval on cases read from stdin; print its per-question outcomes as JSON.

Runs under the interpreter that has graphrag-eval installed (Python 3.12), not
under the project's own: record_fixtures.py and the differential benchmark
start it as a subprocess. Input: `{"cases": [{"key", "corpus", "responses"}]}`
where `corpus` is a graphrag-eval dataset (a list of templates) and
`responses` maps question ids to response records. Every question is scored
on its own, so a crash of graphrag-eval on one input is recorded as that
question's outcome instead of ending the run.

Step `execution_timestamp`s arrive as ISO 8601 text (JSON has no date type);
graphrag-eval expects a datetime there, so they are parsed first, as a caller
of graphrag-eval has to.
"""

from __future__ import annotations

import asyncio
import copy
import importlib.metadata
import inspect
import json
import sys
from datetime import datetime
from typing import Any

from graphrag_eval import run_evaluation  # type: ignore[import-not-found]


def main() -> None:
    payload = json.load(sys.stdin)
    outcomes = {case["key"]: score_case(case["corpus"], case["responses"]) for case in payload["cases"]}
    version = importlib.metadata.version("graphrag-eval")
    json.dump({"graphrag_eval_version": version, "outcomes": outcomes}, sys.stdout, default=str)


def score_case(corpus: list[dict[str, Any]], responses: dict[str, Any]) -> dict[str, Any]:
    """Outcome of every question of `corpus`, keyed by question id."""
    outcomes: dict[str, Any] = {}
    for template in corpus:
        for question in template["questions"]:
            single = [{**template, "questions": [copy.deepcopy(question)]}]
            try:
                results = run_evaluation(single, with_datetimes(responses))
                if inspect.iscoroutine(results):  # graphrag-eval 6.x is async, 4.0 is not
                    results = asyncio.run(results)
                outcomes[question["id"]] = project(results[0])
            except Exception as error:  # graphrag-eval's own failure on this input is the outcome
                outcomes[question["id"]] = {"outcome": "crash", "crash": f"{type(error).__name__}: {error}"}
    return outcomes


def project(result: dict[str, Any]) -> dict[str, Any]:
    """The keys the conformance comparison looks at."""
    groups = result.get("reference_steps")
    return {
        "outcome": "result",
        "status": result.get("status"),
        "error": result.get("error"),
        "steps_score": result.get("steps_score"),
        "matches": None if groups is None else [[step.get("matches") for step in group] for group in groups],
    }


def with_datetimes(responses: dict[str, Any]) -> dict[str, Any]:
    copied = copy.deepcopy(responses)
    for response in copied.values():
        for key in ("actual_steps", "steps"):
            for step in response.get(key) or []:
                stamp = step.get("execution_timestamp") if isinstance(step, dict) else None
                if isinstance(stamp, str):
                    step["execution_timestamp"] = datetime.fromisoformat(stamp)
    return copied


if __name__ == "__main__":
    main()
