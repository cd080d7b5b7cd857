"""The first-run page's template file over its small graph (docs/examples/quickstart/), as the page
shows it: questions kept, dropped by a keep-rule and as duplicates, counted and named; the dry run."""

from __future__ import annotations

from pathlib import Path

import pytest
from generate_support import ROOT, corpus_command

from pytest_graphrag_eval.corpus.reference_corpus import load_corpus

QUICKSTART = ROOT / "docs" / "examples" / "quickstart"


def test_the_quickstart_templates_give_five_questions(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    out = tmp_path / "corpus.yaml"
    graph = QUICKSTART / "graph.ttl"
    assert (
        corpus_command("generate", QUICKSTART / "templates.yaml", "--sparql-endpoint", graph, "--out", out)
        == 0
    )
    printed = capsys.readouterr().out
    assert "bidding_zone_of_substation: 3 questions from 3 candidates\n" in printed
    assert "  dropped transformers-hamar: its answer query gave 0 rows (kept: 1..)" in printed
    questions = {question.question_id: question for question in load_corpus(out).questions()}
    assert sorted(questions) == [
        "transformers-bergen",
        "transformers-oslo",
        "zone-bergen",
        "zone-hamar",
        "zone-oslo",
    ]
    assert questions["zone-oslo"].reference_answer == "NO1" == questions["zone-hamar"].reference_answer
    assert questions["transformers-oslo"].reference_answer == "OSLO T1, OSLO T2"
    assert all(question.reference_problems == () for question in questions.values())


def test_same_question_text_is_dropped_and_counted(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    graph = tmp_path / "graph.ttl"
    twin = '\nex:oslo2 a ex:Substation ; ex:name "OSLO" ; ex:zone ex:no5 .\n'
    graph.write_text((QUICKSTART / "graph.ttl").read_text("utf-8") + twin, encoding="utf-8")
    out = tmp_path / "corpus.yaml"
    assert (
        corpus_command("generate", QUICKSTART / "templates.yaml", "--sparql-endpoint", graph, "--out", out)
        == 0
    )
    printed = capsys.readouterr().out
    assert "bidding_zone_of_substation: 3 questions from 4 candidates, 1 duplicates dropped" in printed
    assert "wrote " in printed and "5 questions, 2 duplicates dropped" in printed


def test_the_dry_run_lists_and_writes_nothing(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    graph = QUICKSTART / "graph.ttl"
    out = tmp_path / "corpus.yaml"
    assert (
        corpus_command(
            "generate", QUICKSTART / "templates.yaml", "--sparql-endpoint", graph, "--out", out, "--dry-run"
        )
        == 0
    )
    printed = capsys.readouterr().out
    assert "  zone-oslo: In which bidding zone is substation OSLO?" in printed
    assert "transformers_in_substation: 3 candidates, 10 questions" in printed
    assert not out.exists()


def generate_edited_quickstart(tmp_path: Path, old: str, new: str, out: Path) -> int:
    """The quickstart's templates with `old` replaced by `new`, generated over its graph into `out`."""
    templates = tmp_path / "templates.yaml"
    text = (QUICKSTART / "templates.yaml").read_text("utf-8")
    assert old in text
    templates.write_text(text.replace(old, new), encoding="utf-8")
    return corpus_command("generate", templates, "--sparql-endpoint", QUICKSTART / "graph.ttl", "--out", out)


def test_min_rows_zero_keeps_a_question_with_an_empty_answer(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """The docs: `min_rows` defaults to 1, "no question with an empty answer unless you write 0"."""
    out = tmp_path / "corpus.yaml"
    assert generate_edited_quickstart(tmp_path, "keep: {min_rows: 1}", "keep: {min_rows: 0}", out) == 0
    assert "transformers_in_substation: 3 questions from 3 candidates\n" in capsys.readouterr().out
    questions = {question.question_id: question for question in load_corpus(out).questions()}
    assert questions["transformers-hamar"].reference_answer == ""
    assert questions["transformers-hamar"].reference_problems == ()


def test_a_value_answer_naming_no_column_is_an_error(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """A typo in the value pattern dropped every question, each 'gave no value', the mistake unnamed."""
    out = tmp_path / "corpus.yaml"
    assert generate_edited_quickstart(tmp_path, '{value: "{{zone}}"}', '{value: "{{zoen}}"}', out) == 2
    error = capsys.readouterr().err
    assert "template 'bidding_zone_of_substation', field 'answer.value': 'zoen' is not a column" in error
    assert not out.exists()
