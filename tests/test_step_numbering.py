"""A reference step is named one way in every message and report: its 0-based path in the corpus field.

The baseline summary said "group 1 step 1" for the step the failure report, the HTML report, the corpus
errors and the reference check call `[0][0]` / `reference_steps[0][0]`.
"""

from __future__ import annotations

from pathlib import Path

import pytest

from pytest_graphrag_eval.corpus.reference_corpus import load_corpus
from pytest_graphrag_eval.corpus.reference_steps import step_path
from pytest_graphrag_eval.errors import CorpusError
from pytest_graphrag_eval.report.html_report.steps import step_table
from pytest_graphrag_eval.report.run_terminal import stopped_matching

STEP = {"name": "sparql_query", "args": {"query": "ASK {}"}, "output": '{"head": {}, "boolean": true}'}


def _result(matches: str | None) -> dict:
    return {
        "question_id": "q1",
        "status": "success",
        "reference_steps": [[{**STEP, "matches": None}], [{**STEP, "matches": matches}]],
        "actual_steps": [{**STEP, "id": "call_1", "status": "success"}],
    }


def test_the_baseline_summary_names_a_lost_step_as_the_html_report_does() -> None:
    lost = stopped_matching(_result("call_1"), _result(None))
    assert lost == ["reference_steps[1][0] (sparql_query)"] == [f"{step_path(1, 0)} (sparql_query)"]
    table = step_table(_result(None), "all_groups")
    assert table is not None
    labels = [row["label"] for row in table["reference"]]
    assert labels == ["[0][0]", "[1][0]"] and step_path(1, 0).endswith(labels[1])


def test_an_empty_group_is_named_by_its_path(tmp_path: Path) -> None:
    corpus = tmp_path / "corpus.yaml"
    corpus.write_text(
        "- template_id: t\n  questions:\n    - id: q1\n      question_text: Q?\n      reference_answer: A\n"
        "      reference_steps:\n        - - name: sparql_query\n        - []\n",
        encoding="utf-8",
    )
    with pytest.raises(CorpusError) as error:
        load_corpus(corpus)
    assert "reference_steps[1]" in str(error.value) and "group 1" not in str(error.value)
