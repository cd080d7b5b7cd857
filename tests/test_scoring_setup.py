"""One scoring context per corpus file: its settings checked once, the options' tool names its default."""

from __future__ import annotations

from pathlib import Path

import pytest

from pytest_graphrag_eval import corpus_from_data
from pytest_graphrag_eval.answers import AnswerSettings
from pytest_graphrag_eval.errors import ConfigurationError
from pytest_graphrag_eval.gates.corpus_rules import corpus_rules
from pytest_graphrag_eval.run.assembly import scoring_contexts
from pytest_graphrag_eval.scorer_factory import build_scorers


def corpus(file: str, question_ids: list[str], **settings: object):
    questions = [{"id": qid, "question_text": f"{qid}?", "reference_answer": "A"} for qid in question_ids]
    return corpus_from_data(
        {**settings, "templates": [{"template_id": file, "questions": questions}]}, file=file
    )


def setup_for(*corpora):
    paths = {Path(c.file): c for c in corpora}
    rules = {path: corpus_rules(c) for path, c in paths.items()}
    return scoring_contexts(None, "all_groups", {"search": "retrieval"}, rules, paths)


def test_each_question_gets_its_corpus_files_context() -> None:
    first = corpus("a.yaml", ["q1", "q2"])
    second = corpus("b.yaml", ["q3"], tool_names={"lookup": "sparql_query"}, retrieval_k=3)
    by_id = setup_for(first, second)
    assert by_id["q1"] is by_id["q2"]  # one context per file, built once
    assert by_id["q1"].tool_names == {"search": "retrieval"} and by_id["q1"].retrieval_k == 10
    # tool names merge per key across layers: the file's mapping adds to the command line's
    assert by_id["q3"].tool_names == {"search": "retrieval", "lookup": "sparql_query"}
    assert by_id["q3"].retrieval_k == 3
    assert {context.steps_scope for context in by_id.values()} == {"all_groups"}
    assert [scorer.name for scorer in build_scorers(AnswerSettings(), None)][:3] == [
        "steps",
        "retrieval",
        "erag",
    ]


def test_a_bad_corpus_setting_names_its_file() -> None:
    bad = corpus("b.yaml", ["q3"], retrieval_k="many")
    with pytest.raises(ConfigurationError, match=r"^b\.yaml: settings: "):
        setup_for(corpus("a.yaml", ["q1"]), bad)
