"""The plugin scores graphrag-eval's own input forms as graphrag-eval does, except where documented.

The fixtures hold graphrag-eval's per-question outcomes on the inputs in
`inputs/` (recorded by record_fixtures.py with graphrag-eval 6.6.1 and 4.0.0).
This test scores the same inputs with `run_evaluation` and compares key by
key. Every difference must be listed in DOCUMENTED_DIFFERENCES with its
reason (mirrored in docs/graphrag-eval-differences.md), and every listed
difference must still occur, so the list cannot go stale.
"""

from __future__ import annotations

import json
import math
import warnings
from pathlib import Path
from typing import Any

import pytest
from graphrag_eval_outcome import comparable_outcome

from pytest_graphrag_eval.corpus.reference_corpus import load_corpus
from pytest_graphrag_eval.corpus.responses import load_responses
from pytest_graphrag_eval.evaluation import UnknownResponsesWarning, run_evaluation

HERE = Path(__file__).resolve().parent
COMPARED_KEYS = ("outcome", "status", "error", "steps_score", "matches")
SUITES = {"graphrag_eval_6x": "all_groups", "graphrag_eval_40": "last_group"}  # graphrag-eval's group scope

# (suite, question id) -> (keys that differ, reason). The reasons name the row of the differences page.
CRASH_SCORED = "graphrag-eval crashes on this input; we score it (differences page: crashes)"
DOCUMENTED_DIFFERENCES: dict[tuple[str, str], tuple[frozenset[str], str]] = {
    ("graphrag_eval_6x", "ask-no-required-columns"): (
        frozenset({"outcome", "status", "steps_score", "matches"}),
        CRASH_SCORED + ": a SPARQL reference without required_columns (KeyError)",
    ),
    ("graphrag_eval_6x", "sparql-no-required-columns-key"): (
        frozenset({"outcome", "status", "steps_score", "matches"}),
        CRASH_SCORED + ": a SPARQL reference without required_columns (KeyError)",
    ),
    ("graphrag_eval_6x", "sparql-output-as-object"): (
        frozenset({"outcome", "status", "steps_score", "matches"}),
        CRASH_SCORED + ": a step output that is a JSON object, not text (TypeError)",
    ),
    ("graphrag_eval_6x", "sparql-output-json-scalar"): (
        frozenset({"outcome", "status", "steps_score", "matches"}),
        CRASH_SCORED + ": a SPARQL step output that is JSON but not a results object (TypeError)",
    ),
    ("graphrag_eval_6x", "json-media-type-parsed-output"): (
        frozenset({"outcome", "status", "steps_score", "matches"}),
        CRASH_SCORED + ": a step output that is a JSON object, not text (TypeError)",
    ),
    ("graphrag_eval_6x", "dp-no-execution-timestamp"): (
        frozenset({"outcome", "status", "steps_score", "matches"}),
        CRASH_SCORED + ": a data-points step without execution_timestamp (KeyError); relative times "
        "cannot be anchored, so the step does not match",
    ),
    ("graphrag_eval_6x", "retrieval-no-k"): (
        frozenset({"outcome", "status", "steps_score", "matches"}),
        CRASH_SCORED + ": an actual retrieval step without args.k (KeyError); the reference's k is used",
    ),
    ("graphrag_eval_6x", "step-without-status"): (
        frozenset({"outcome", "status", "matches"}),
        CRASH_SCORED + ": an actual step without status (KeyError); that question's steps_score_error names "
        "the field (a missing status is never read as a match or a non-match)",
    ),
    ("graphrag_eval_6x", "step-without-id"): (
        frozenset({"outcome", "status", "steps_score", "matches"}),
        CRASH_SCORED + ": a matched actual step without id (KeyError); `matches` names its position",
    ),
    ("graphrag_eval_6x", "no-response"): (
        frozenset({"outcome", "status", "error", "matches"}),
        CRASH_SCORED + ": a question without response (KeyError); it is an error sample",
    ),
    ("graphrag_eval_6x", "sparql-decimal-truncation"): (
        frozenset({"steps_score", "matches"}),
        "decimal truncation: graphrag-eval truncates binary floats, so 0.29 becomes 0.28999; we truncate "
        "exact decimals",
    ),
    ("graphrag_eval_6x", "sparql-integer-vs-decimal"): (
        frozenset({"steps_score", "matches"}),
        "typed numbers: graphrag-eval compares 700000 and 700000.0 as different texts, we compare numbers",
    ),
    ("graphrag_eval_6x", "sparql-plain-whole-decimal"): (
        frozenset({"steps_score", "matches"}),
        "plain vs typed literals: graphrag-eval prints the typed 8.0 as '8.0', equal to the text; we read "
        "only the canonical numeral 8 as that number, so the text 8.0 stays text",
    ),
    ("graphrag_eval_6x", "sparql-plain-vs-typed-strict"): (
        frozenset({"steps_score", "matches"}),
        "plain vs typed literals: literal_match strict keeps a plain 8 apart from an xsd:integer 8; "
        "graphrag-eval has no such field and compares the texts",
    ),
    ("graphrag_eval_6x", "sparql-unbound-cell"): (
        frozenset({"steps_score", "matches"}),
        "unbound cells: graphrag-eval reads an unbound cell as the text 'None', we keep it unbound",
    ),
    ("graphrag_eval_6x", "sparql-concatenated-cells"): (
        frozenset({"steps_score", "matches"}),
        "rows as typed tuples: graphrag-eval joins a row's cells into one text, so 'ab'+'c' equals 'a'+'bc'",
    ),
    ("graphrag_eval_6x", "iri-sparql-literal"): (
        frozenset({"steps_score", "matches"}),
        "iri_discovery in query output: graphrag-eval searches the output text, we need an IRI binding",
    ),
    ("graphrag_eval_6x", "iri-sparql-longer-iri"): (
        frozenset({"steps_score", "matches"}),
        "iri_discovery in query output: graphrag-eval's text search also finds a longer IRI",
    ),
    ("graphrag_eval_6x", "iri-by-iri-discovery-step"): (
        frozenset({"steps_score", "matches"}),
        "iri_discovery by the agent's own iri_discovery step: graphrag-eval never matches it, we do",
    ),
    ("graphrag_eval_6x", "retrieval-later-relevant"): (
        frozenset({"steps_score", "matches"}),
        "step recall: graphrag-eval only credits the first k documents listed in the reference",
    ),
    ("graphrag_eval_6x", "value-bool-vs-number"): (
        frozenset({"steps_score", "matches"}),
        "JSON values: graphrag-eval uses Python equality, where true equals 1",
    ),
    ("graphrag_eval_6x", "value-other-name"): (
        frozenset({"steps_score", "matches"}),
        "step names: graphrag-eval's fallback rule compares outputs without the step names",
    ),
    ("graphrag_eval_6x", "sparql-other-step-name"): (
        frozenset({"steps_score", "matches"}),
        "SPARQL rule by media type: graphrag-eval applies it only to steps named sparql_query",
    ),
    ("graphrag_eval_6x", "group-assignment"): (
        frozenset({"steps_score", "matches"}),
        "group assignment: graphrag-eval takes the first match per reference step, we take the best overall",
    ),
    ("graphrag_eval_6x", "error-without-status"): (
        frozenset({"steps_score", "matches"}),
        "error samples: graphrag-eval 6.x still scores the steps of an error response, we keep it out",
    ),
    ("graphrag_eval_6x", "graph-renamed-blank-node"): (
        frozenset({"steps_score", "matches"}),
        "CONSTRUCT/DESCRIBE outputs: graphrag-eval compares the texts, we compare RDF graphs up to "
        "blank-node renaming",
    ),
    ("graphrag_eval_40", "v4-no-steps"): (
        frozenset({"steps_score"}),
        "no steps: graphrag-eval 4.0 leaves out steps_score for a response without steps, we score 0 "
        "(as graphrag-eval 6.x does)",
    ),
}


def fixture(suite: str) -> dict[str, Any]:
    return json.loads((HERE / "fixtures" / f"{suite}.json").read_text(encoding="utf-8"))


def our_outcomes(suite: str) -> dict[str, dict[str, Any]]:
    recorded = fixture(suite)
    corpus = load_corpus(HERE / "inputs" / recorded["corpus"])
    responses = load_responses(HERE / "inputs" / recorded["responses"])
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", UnknownResponsesWarning)
        results = run_evaluation(corpus, responses, steps_scope=SUITES[suite])
    return {result["question_id"]: comparable_outcome(result) for result in results}


def steps_score_errors(suite: str) -> dict[str, str]:
    """Our per-question `steps_score_error` texts, by question id."""
    recorded = fixture(suite)
    corpus = load_corpus(HERE / "inputs" / recorded["corpus"])
    responses = load_responses(HERE / "inputs" / recorded["responses"])
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", UnknownResponsesWarning)
        results = run_evaluation(corpus, responses, steps_scope=SUITES[suite])
    return {r["question_id"]: r["steps_score_error"] for r in results if "steps_score_error" in r}


def same(left: Any, right: Any) -> bool:
    if isinstance(left, float) and isinstance(right, float):
        return math.isclose(left, right, abs_tol=1e-9)
    return bool(left == right)


def differences(suite: str) -> dict[str, frozenset[str]]:
    theirs = fixture(suite)["outcomes"]
    ours = our_outcomes(suite)
    assert set(ours) == set(theirs), "the fixture and the corpus disagree on the questions: re-record"
    found = {}
    for question_id, their_outcome in theirs.items():
        keys = frozenset(
            key for key in COMPARED_KEYS if not same(ours[question_id].get(key), their_outcome.get(key))
        )
        if keys:
            found[question_id] = keys
    return found


@pytest.mark.parametrize("suite", sorted(SUITES))
def test_only_documented_differences_from_graphrag_eval(suite: str) -> None:
    found = differences(suite)
    documented = {qid: keys for (name, qid), (keys, _) in DOCUMENTED_DIFFERENCES.items() if name == suite}
    undocumented = {qid: sorted(keys) for qid, keys in found.items() if documented.get(qid) != keys}
    stale = sorted(qid for qid in documented if qid not in found)
    assert not undocumented, f"differences from graphrag-eval not documented: {undocumented}"
    assert not stale, f"documented differences that no longer occur: {stale}"


def test_most_questions_agree_exactly() -> None:
    """The suite would prove nothing if most of it were documented away."""
    total = sum(len(fixture(suite)["outcomes"]) for suite in SUITES)
    assert len(DOCUMENTED_DIFFERENCES) < total / 2


def test_our_results_on_graphrag_eval_crashes_are_scores_or_clear_errors() -> None:
    ours = our_outcomes("graphrag_eval_6x")
    crashed = [qid for qid, outcome in fixture("graphrag_eval_6x")["outcomes"].items() if "crash" in outcome]
    assert len(crashed) >= 8
    steps_errors = steps_score_errors("graphrag_eval_6x")
    for question_id in crashed:
        outcome = ours[question_id]
        clear = outcome["status"] == "error" or question_id in steps_errors
        assert clear or isinstance(outcome["steps_score"], float), question_id
    missing_status = steps_errors["step-without-status"]
    assert (
        "responses_6x.json, list item [" in missing_status
        and "question 'step-without-status'" in missing_status
    )
    assert "field 'actual_steps[0].status': is missing" in missing_status
    assert ours["no-response"]["error"] == "no response for this question"
    assert ours["step-without-id"]["matches"] == [["actual_steps[0]"]]


def test_unknown_responses_are_reported_not_scored() -> None:
    recorded = fixture("graphrag_eval_6x")
    corpus = load_corpus(HERE / "inputs" / recorded["corpus"])
    responses = load_responses(HERE / "inputs" / recorded["responses"])
    with pytest.warns(UnknownResponsesWarning, match="'not-in-corpus'"):
        results = run_evaluation(corpus, responses, steps_scope="all_groups")
    assert "not-in-corpus" not in {result["question_id"] for result in results}


def test_graphrag_eval_40_files_run_unchanged_under_pytest(pytester: pytest.Pytester) -> None:
    """A 4.0 project's own corpus and recording, replayed by the plugin with a steps threshold."""
    for name in ("corpus_40.yaml", "responses_40.jsonl"):
        pytester.path.joinpath(name).write_text((HERE / "inputs" / name).read_text(encoding="utf-8"))
    result = pytester.runpytest(
        "--graphrag-corpus", "corpus_40.yaml", "--graphrag-responses", "responses_40.jsonl",
        "--graphrag-threshold", "steps_score>=1", "--graphrag-report", "report.json",
    )  # fmt: skip
    assert "Traceback" not in result.stdout.str() + result.stderr.str()
    result.assert_outcomes(passed=3, failed=4)
    report = json.loads(pytester.path.joinpath("report.json").read_text(encoding="utf-8"))
    scores = {entry["question_id"]: entry.get("steps_score") for entry in report["results"]}
    assert scores["v4-last-group-sparql"] == 1.0 and scores["v4-text-group"] == 0.5
