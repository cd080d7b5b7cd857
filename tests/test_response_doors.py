"""Every door responses come in by gives the same results.

graphrag-eval 4.0's response shape (JSONL, the agent's steps under `steps`) and 6.x's (a JSON list
of responses with `actual_steps`), from the conformance inputs, go through the library as a file
(`load_responses`), as graphrag-eval's dict keyed by question id and as a plain list, and through
the plugin as a responses file and as the live hook's returns. The results must be identical, except
that a per-question error names its own door (file and line, in-memory position, agent hook).
"""

from __future__ import annotations

import json
import re
import warnings
from pathlib import Path
from typing import Any

import pytest

from pytest_graphrag_eval import load_corpus, load_responses, run_evaluation
from pytest_graphrag_eval.answers.scorers import DeterministicAnswerScorer
from pytest_graphrag_eval.evaluation import UnknownResponsesWarning
from pytest_graphrag_eval.scorer_factory import default_scorers

INPUTS = Path(__file__).resolve().parent / "conformance" / "inputs"
SUITES = {  # graphrag-eval version: corpus, responses, the steps scope with that version's group semantics
    "graphrag-eval-4.0": ("corpus_40.yaml", "responses_40.jsonl", "last_group"),
    "graphrag-eval-6.x": ("corpus_6x.yaml", "responses_6x.json", "all_groups"),
}
PLUGIN_ONLY_KEYS = ("nodeid", "outcome", "content_hash", "thresholds", "failures")
SOURCES = re.compile(
    r"\S*responses_(?:40|6x)\.jsonl?(?::\d+)?(?:, list item \[\d+\])?"
    r"|in-memory responses(?:\[\d+\])?"
    r"|agent hook pytest_graphrag_respond"
)
HOOK_CONFTEST = """
import json

RECORDS = {{record["question_id"]: record for record in json.loads({records!r})}}


def pytest_graphrag_respond(question, config):
    return RECORDS.get(question.question_id)
"""


def raw_records(path: Path) -> list[dict[str, Any]]:
    """The responses as the agent wrote them, read with the json module only (not our loader)."""
    text = path.read_text(encoding="utf-8")
    if text.lstrip().startswith("["):
        records: list[dict[str, Any]] = json.loads(text)
        return records
    return [json.loads(line) for line in text.splitlines() if line.strip()]


def library_results(suite: str, responses: Any) -> list[dict[str, Any]]:
    corpus_name, _, scope = SUITES[suite]
    scorers = [*default_scorers(), DeterministicAnswerScorer()]  # what the plugin runs without a judge
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", UnknownResponsesWarning)
        results = run_evaluation(
            load_corpus(INPUTS / corpus_name), responses, steps_scope=scope, scorers=scorers
        )
    return json.loads(json.dumps(results))  # as the plugin's JSON report holds them


def plugin_results(pytester: pytest.Pytester, suite: str, *, live: bool) -> list[dict[str, Any]]:
    """The plugin's JSON report results, replaying the responses file or calling the hook (which
    returns the records as written; a conftest hook is not called when a responses file is given)."""
    corpus_name, responses_name, scope = SUITES[suite]
    pytester.path.joinpath(corpus_name).write_bytes((INPUTS / corpus_name).read_bytes())
    pytester.path.joinpath(responses_name).write_bytes((INPUTS / responses_name).read_bytes())
    pytester.makeconftest(HOOK_CONFTEST.format(records=json.dumps(raw_records(INPUTS / responses_name))))
    args = [
        "--graphrag-corpus",
        corpus_name,
        "--graphrag-steps-scope",
        scope,
        "--graphrag-report",
        "report.json",
    ]
    if not live:
        args += ["--graphrag-responses", responses_name]
    result = pytester.runpytest(*args)
    assert result.ret in (pytest.ExitCode.OK, pytest.ExitCode.TESTS_FAILED), result.stdout.str()
    report = json.loads((pytester.path / "report.json").read_text(encoding="utf-8"))
    return [{k: v for k, v in entry.items() if k not in PLUGIN_ONLY_KEYS} for entry in report["results"]]


def without_door(results: list[dict[str, Any]], measured_elapsed: set[str]) -> list[dict[str, Any]]:
    """The results with every source name replaced by `<source>`, and the `elapsed_sec` the plugin
    measured around the hook dropped for the responses that did not report one."""
    shown = []
    for result in results:
        entry = {key: SOURCES.sub("<source>", v) if isinstance(v, str) else v for key, v in result.items()}
        if result["question_id"] in measured_elapsed and "elapsed_sec" in entry:
            assert isinstance(entry.pop("elapsed_sec"), float)
        shown.append(entry)
    return shown


DOOR_NAMES = {  # how a per-question error names each door
    "library, file": "responses_6x.json, list item [",
    "library, dict by question id": "in-memory responses, question 'step-without-status'",
    "library, list": "in-memory responses[",
    "plugin, file": "responses_6x.json, list item [",
    "plugin, live hook": "agent hook pytest_graphrag_respond, question 'step-without-status'",
}


@pytest.mark.parametrize("suite", SUITES)
def test_every_door_gives_the_same_results(pytester: pytest.Pytester, suite: str) -> None:
    path = INPUTS / SUITES[suite][1]
    records = raw_records(path)
    doors = {
        "library, file": library_results(suite, load_responses(path)),
        "library, dict by question id": library_results(suite, {r["question_id"]: r for r in records}),
        "library, list": library_results(suite, records),
        "plugin, file": plugin_results(pytester, suite, live=False),
        "plugin, live hook": plugin_results(pytester, suite, live=True),
    }
    unmeasured = {r["question_id"] for r in records if "elapsed_sec" not in r}
    expected = without_door(doors["library, file"], set())
    assert len(expected) >= 7
    assert any(result.get("steps_score") == 1.0 for result in expected), "the steps are read in every door"
    for door, results in doors.items():
        measured = unmeasured if door == "plugin, live hook" else set()
        assert without_door(results, measured) == expected, door
    if suite == "graphrag-eval-6.x":
        for door, results in doors.items():
            error = next(r for r in results if r["question_id"] == "step-without-status")["steps_score_error"]
            assert DOOR_NAMES[door] in error and "field 'actual_steps[0].status': is missing" in error, door
