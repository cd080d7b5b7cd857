"""Per-question thresholds: grammar, YAML forms, precedence, and check messages."""

from __future__ import annotations

import json
import math
import re
import textwrap
from pathlib import Path

import pytest
from hypothesis import given
from hypothesis import strategies as st

from pytest_graphrag_eval.corpus.reference_corpus import Corpus, load_corpus
from pytest_graphrag_eval.errors import ConfigurationError, CorpusError, SourceLocation
from pytest_graphrag_eval.gates.expressions import METRIC_NAME, OPERATORS, format_number
from pytest_graphrag_eval.gates.thresholds import (
    THRESHOLD_SOURCES,
    CorpusThresholds,
    Threshold,
    ThresholdResolver,
    check_thresholds,
    parse_corpus_thresholds,
    parse_threshold,
    parse_threshold_list,
    thresholds_from_yaml,
)

# --- parsing -----------------------------------------------------------------


@pytest.mark.parametrize(
    ("text", "metric", "op", "limit"),
    [
        ("steps_score>=0.8", "steps_score", ">=", 0.8),
        ("  answer_f1 >  0.7 ", "answer_f1", ">", 0.7),
        ("elapsed_sec<=30", "elapsed_sec", "<=", 30.0),
        ("retrieval_recall@10==1", "retrieval_recall@10", "==", 1.0),
        ("erag_P_10 < 5e-1", "erag_P_10", "<", 0.5),
        ("total_tokens<=1.5E+3", "total_tokens", "<=", 1500.0),
        ("x>=.5", "x", ">=", 0.5),
        ("x>=3.", "x", ">=", 3.0),
        ("delta>=-2", "delta", ">=", -2.0),
        ("ndcg_cut.10>=0.25", "ndcg_cut.10", ">=", 0.25),
    ],
)
def test_parse_valid(text: str, metric: str, op: str, limit: float) -> None:
    assert parse_threshold(text, "cli") == Threshold(metric, op, limit, "cli")


@pytest.mark.parametrize(
    ("text", "reason"),
    [
        ("steps_score", "no comparison operator"),
        ("steps_score=>0.8", "unknown operator '=>'"),
        ("steps_score=0.8", "unknown operator '='"),
        ("steps_score!=0.8", "unknown operator '!='"),
        (">=0.8", "nothing before the operator"),
        ("steps_score>=", "no number after the operator"),
        ("steps_score>=high", "'high' is not a number"),
        ("steps_score>=nan", "'nan' is not a number"),
        ("steps_score>=1e999", "not a finite number"),
        ("steps_score>=1_000", "is not a number"),
        ("steps score>=0.8", "'steps score' is not a metric name"),
        ("10recall>=0.8", "'10recall' is not a metric name"),
        ("", "no comparison operator"),
    ],
)
@pytest.mark.parametrize("source", ["cli", "ini"])
def test_parse_invalid_names_option_and_text(text: str, reason: str, source: str) -> None:
    with pytest.raises(ConfigurationError) as info:
        parse_threshold(text, source)
    message = str(info.value)
    option = "--graphrag-threshold" if source == "cli" else "graphrag_thresholds"
    assert message.startswith(option) if source == "cli" else option in message
    assert repr(text) in message
    assert reason in message


def test_parse_rejects_unknown_source() -> None:
    with pytest.raises(ValueError, match="source must be one of"):
        parse_threshold("steps_score>=1", "env")


@pytest.mark.parametrize(
    ("number", "text"), [(30.0, "30"), (0.8, "0.8"), (-0.0, "0"), (1e20, "1e+20"), (2.5e-7, "2.5e-07")]
)
def test_format_number(number: float, text: str) -> None:
    assert format_number(number) == text


@given(
    metric=st.from_regex(METRIC_NAME, fullmatch=True),
    op=st.sampled_from(sorted(OPERATORS)),
    limit=st.floats(allow_nan=False, allow_infinity=False),
    source=st.sampled_from(THRESHOLD_SOURCES),
    pad=st.sampled_from(["", " ", "\t", "  "]),
)
def test_format_then_parse_roundtrips(metric: str, op: str, limit: float, source: str, pad: str) -> None:
    threshold = Threshold(metric, op, limit, source)
    assert parse_threshold(threshold.expression, source) == threshold
    spaced = f"{pad}{metric}{pad}{op}{pad}{format_number(limit)}{pad}"
    assert parse_threshold(spaced, source) == threshold


def test_parse_list_later_expression_for_a_metric_wins() -> None:
    parsed = parse_threshold_list(["steps_score>=0.8", "answer_f1>=0.5", "steps_score>=0.9"], "cli")
    assert parsed == {
        "steps_score": Threshold("steps_score", ">=", 0.9, "cli"),
        "answer_f1": Threshold("answer_f1", ">=", 0.5, "cli"),
    }
    assert parse_threshold_list(None, "ini") == {}


# --- YAML forms --------------------------------------------------------------

HERE = SourceLocation("corpus.yaml", 7, "tpl", "q1")


def test_yaml_list_and_single_string() -> None:
    assert thresholds_from_yaml(["steps_score>=0.8", "elapsed_sec <= 30"], "question", HERE) == {
        "steps_score": Threshold("steps_score", ">=", 0.8, "question"),
        "elapsed_sec": Threshold("elapsed_sec", "<=", 30.0, "question"),
    }
    assert thresholds_from_yaml("answer_f1>0.5", "template", HERE) == {
        "answer_f1": Threshold("answer_f1", ">", 0.5, "template")
    }
    assert thresholds_from_yaml(None, "corpus", HERE) == {}


def test_yaml_mapping_forms() -> None:
    value = {
        "steps_score": ">= 0.8",
        "answer_f1": 0.7,
        "retrieval_recall@10": "0.5",
        "elapsed_sec": "<30",
        "total_tokens": 2000,
        "answer_relevance": None,
    }
    assert thresholds_from_yaml(value, "template", HERE) == {
        "steps_score": Threshold("steps_score", ">=", 0.8, "template"),
        "answer_f1": Threshold("answer_f1", ">=", 0.7, "template"),
        "retrieval_recall@10": Threshold("retrieval_recall@10", ">=", 0.5, "template"),
        "elapsed_sec": Threshold("elapsed_sec", "<", 30.0, "template"),
        "total_tokens": Threshold("total_tokens", ">=", 2000.0, "template"),
        "answer_relevance": None,
    }


@pytest.mark.parametrize(
    ("value", "field", "reason"),
    [
        (["steps_score>>0.8"], "thresholds[0]", "unknown operator '>>'"),
        (["answer_f1>=0.5", 0.8], "thresholds[1]", "expected text, got float"),
        (["steps_score>=0.5", "steps_score>=0.9"], "thresholds[1]", "a second threshold for 'steps_score'"),
        ({"steps_score": "=>0.8"}, "thresholds.steps_score", "unknown operator '=>'"),
        ({"steps_score": True}, "thresholds.steps_score", "expected a number"),
        ({"steps_score": [0.8]}, "thresholds.steps_score", "got list"),
        ({"steps score": 0.8}, "thresholds.steps score", "not a metric name"),
        (0.8, "thresholds", "must be a list of expressions"),
    ],
)
def test_yaml_errors_name_location_and_field(value: object, field: str, reason: str) -> None:
    with pytest.raises(CorpusError) as info:
        thresholds_from_yaml(value, "question", HERE)
    assert info.value.location == HERE
    assert info.value.field == field
    message = str(info.value)
    assert message.startswith("corpus.yaml:7, template 'tpl', question 'q1', field ")
    assert reason in message


# --- precedence across the five sources ---------------------------------------

PRECEDENCE_CORPUS = """\
templates:
  - template_id: tpl
    thresholds:
      d: 0.4
      e: 0.4
      a: null
    questions:
      - id: q1
        question_text: First?
        thresholds:
          - e>=0.5
      - id: q2
        question_text: Second?
        thresholds:
          b: null
  - template_id: other
    questions:
      - id: q3
        question_text: Third?
thresholds:
  c: ">=0.3"
  d: ">=0.3"
  e: ">=0.3"
"""


def write(tmp_path: Path, text: str, name: str = "corpus.yaml") -> Path:
    path = tmp_path / name
    path.write_text(textwrap.dedent(text), encoding="utf-8")
    return path


def resolve_thresholds(
    ini: list[str],
    cli: list[str],
    corpus: Corpus | None = None,
    template_id: str | None = None,
    question_id: str | None = None,
) -> dict[str, Threshold]:
    """One question's thresholds as the plugin resolves them: the options, then the corpus's parsed layers."""
    resolver = ThresholdResolver({**parse_threshold_list(ini, "ini"), **parse_threshold_list(cli, "cli")})
    layers = parse_corpus_thresholds(corpus) if corpus is not None else CorpusThresholds(None, {}, {}, {})
    return resolver.for_parsed(layers, template_id, question_id)


def resolved_sources(tmp_path: Path, question_id: str) -> dict[str, tuple[float, str]]:
    corpus = load_corpus(write(tmp_path, PRECEDENCE_CORPUS))
    template, question = next(
        (template, question)
        for template in corpus.templates
        for question in template.questions
        if question.question_id == question_id
    )
    resolved = resolve_thresholds(
        ["a>=0.1", "b>=0.1", "c>=0.1", "d>=0.1", "e>=0.1"],
        ["b>=0.2", "c>=0.2", "d>=0.2", "e>=0.2"],
        corpus,
        template.template_id,
        question.question_id,
    )
    return {metric: (threshold.limit, threshold.source) for metric, threshold in resolved.items()}


def test_most_specific_source_wins_per_metric(tmp_path: Path) -> None:
    assert resolved_sources(tmp_path, "q1") == {
        "b": (0.2, "cli"),
        "c": (0.3, "corpus"),
        "d": (0.4, "template"),
        "e": (0.5, "question"),
    }


def test_null_removes_and_siblings_inherit_template(tmp_path: Path) -> None:
    assert resolved_sources(tmp_path, "q2") == {
        "c": (0.3, "corpus"),
        "d": (0.4, "template"),
        "e": (0.4, "template"),
    }


def test_other_template_gets_only_corpus_and_options(tmp_path: Path) -> None:
    assert resolved_sources(tmp_path, "q3") == {
        "a": (0.1, "ini"),
        "b": (0.2, "cli"),
        "c": (0.3, "corpus"),
        "d": (0.3, "corpus"),
        "e": (0.3, "corpus"),
    }


def test_resolve_without_corpus_records() -> None:
    resolved = resolve_thresholds(["steps_score>=0.5"], ["steps_score>=0.7"])
    assert resolved == {"steps_score": Threshold("steps_score", ">=", 0.7, "cli")}


def test_resolve_names_cli_option_on_bad_text() -> None:
    with pytest.raises(ConfigurationError, match=r"^--graphrag-threshold: invalid threshold 'x=1'"):
        resolve_thresholds([], ["x=1"])


def test_bad_question_threshold_names_file_line_question_and_field(tmp_path: Path) -> None:
    path = write(
        tmp_path,
        """\
        - template_id: tpl
          questions:
            - id: fine
              question_text: Fine?
            - id: broken
              question_text: Broken?
              thresholds: ["steps_score>=0.8", "answer_f1 => 0.5"]
        """,
    )
    corpus = load_corpus(path)
    with pytest.raises(CorpusError) as info:
        resolve_thresholds([], [], corpus, "tpl", "broken")
    assert str(info.value) == (
        f"{path}:5, template 'tpl', question 'broken', field 'thresholds[1]': "
        "invalid threshold 'answer_f1 => 0.5': unknown operator '=>' (use one of >=, <=, >, <, ==)"
    )


def test_bad_template_threshold_names_template(tmp_path: Path) -> None:
    path = write(
        tmp_path,
        """\
        - template_id: tpl
          thresholds: {steps_score: "high"}
          questions:
            - {id: q1, question_text: "Q?"}
        """,
    )
    corpus = load_corpus(path)
    with pytest.raises(CorpusError, match=rf"^{path}:1, template 'tpl', field 'thresholds.steps_score': "):
        resolve_thresholds([], [], corpus, "tpl", "q1")


def test_bad_corpus_threshold_names_file(tmp_path: Path) -> None:
    path = write(
        tmp_path,
        """\
        thresholds: [steps_score]
        templates:
          - template_id: tpl
            questions:
              - {id: q1, question_text: "Q?"}
        """,
    )
    corpus = load_corpus(path)
    with pytest.raises(CorpusError, match=rf"^{path}, field 'thresholds\[0\]': .*no comparison operator"):
        resolve_thresholds([], [], corpus, "tpl", "q1")


# --- checking a result --------------------------------------------------------


def check_one(result: dict[str, object], text: str, source: str = "cli"):
    (check,) = check_thresholds(result, [parse_threshold(text, source)])
    return check


@pytest.mark.parametrize(
    ("text", "actual", "passed"),
    [
        ("steps_score>=0.8", 0.8, True),
        ("steps_score>0.8", 0.8, False),
        ("elapsed_sec<=30", 30, True),
        ("elapsed_sec<30", 30, False),
        ("steps_score==1", 1, True),
        ("steps_score==1", 0.99, False),
        ("steps_score>=0", math.nan, False),
    ],
)
def test_comparison_boundaries(text: str, actual: float, passed: bool) -> None:
    metric = text.split("<")[0].split(">")[0].split("=")[0]
    check = check_one({"status": "success", metric: actual}, text)
    assert check.passed is passed
    assert check.metric == metric


def test_pass_and_fail_messages() -> None:
    result = {"status": "success", "steps_score": 0.5, "elapsed_sec": 12.25}
    passed = check_one(result, "elapsed_sec<=30", "ini")
    failed = check_one(result, "steps_score>=0.8", "question")
    assert (passed.passed, passed.actual, passed.message) == (
        True,
        12.25,
        "elapsed_sec = 12.25 <= 30 (ini threshold)",
    )
    assert (failed.passed, failed.actual, failed.message) == (
        False,
        0.5,
        "steps_score = 0.5, required >= 0.8, question threshold",
    )


@pytest.mark.parametrize(
    ("result", "text", "expected"),
    [
        (
            {"status": "success", "steps_score_error": "reference step 0 has no output"},
            "steps_score>=0.8",
            'steps_score was not computed: steps_score_error: "reference step 0 has no output"',
        ),
        (
            {"status": "success", "answer_eval_error": "judge replied with invalid JSON"},
            "answer_f1>=0.7",
            'answer_f1 was not computed: answer_eval_error: "judge replied with invalid JSON"',
        ),
        (
            {"status": "success", "retrieval_error": "retrieval scorer failed: KeyError"},
            "retrieval_recall@10>=0.5",
            'retrieval_recall@10 was not computed: retrieval_error: "retrieval scorer failed: KeyError"',
        ),
        (
            {"status": "success", "answer_relevance_error": "timeout"},
            "answer_relevance_cost<=0.01",
            'answer_relevance_cost was not computed: answer_relevance_error: "timeout"',
        ),
        (
            {"status": "error", "error": "agent crashed"},
            "steps_score>=0.8",
            'steps_score was not computed: the agent returned an error: "agent crashed"',
        ),
        (
            {"status": "success", "steps_score": True},
            "steps_score>=0.8",
            "steps_score is not a number: True",
        ),
    ],
)
def test_metric_that_was_not_computed_fails_with_its_error(
    result: dict[str, object], text: str, expected: str
) -> None:
    check = check_one(result, text)
    assert (check.passed, check.actual) == (False, None)
    assert check.message.startswith(expected)
    assert re.search(r" \(required [<>=]+ [\d.]+, cli threshold\)$", check.message)


@pytest.mark.parametrize(
    ("metric", "hint"),
    [
        ("answer_f1", "--graphrag-judge"),
        ("answer_relevance", "--graphrag-judge"),
        ("retrieval_recall@10", "need a reference step named retrieval"),
        ("erag_P_10", "eRAG configured"),
        ("steps_score", "no reference_steps"),
        ("elapsed_sec", "did not report elapsed_sec"),
        ("steps_scor", "check the metric name; did you mean 'steps_score'?"),
    ],
)
def test_absent_metric_fails_with_hint(metric: str, hint: str) -> None:
    result = {"status": "success", "question_id": "q", "total_tokens": 10}
    if metric != "steps_score":
        result["steps_score"] = 1.0
    check = check_one(result, f"{metric}>=0.5", "template")
    assert not check.passed
    assert check.message.startswith(f"{metric} was not computed: ")
    assert hint in check.message
    assert check.message.endswith("(required >= 0.5, template threshold)")


def test_checks_follow_resolved_order_and_serialise() -> None:
    thresholds = resolve_thresholds(["steps_score>=0.8", "answer_f1>=0.5"], ["elapsed_sec<=30"])
    checks = check_thresholds({"status": "success", "steps_score": 1.0, "elapsed_sec": 40.0}, thresholds)
    assert [check.metric for check in checks] == ["answer_f1", "elapsed_sec", "steps_score"]
    assert [check.passed for check in checks] == [False, False, True]
    dumped = json.loads(json.dumps([check.to_dict() for check in checks]))
    assert dumped[1] == {
        "expression": "elapsed_sec<=30",
        "metric": "elapsed_sec",
        "op": "<=",
        "limit": 30.0,
        "actual": 40.0,
        "passed": False,
        "source": "cli",
        "message": "elapsed_sec = 40, required <= 30, cli threshold",
    }


def test_resolver_reuses_parsed_layers_and_matches_a_fresh_resolver() -> None:
    from pytest_graphrag_eval.corpus.reference_corpus import corpus_from_data

    corpus = corpus_from_data(
        {
            "thresholds": {"steps_score": 0.5, "answer_f1": ">=0.2"},
            "templates": [
                {
                    "template_id": "t",
                    "thresholds": ["steps_score>=0.7"],
                    "questions": [
                        {"id": "q1", "question_text": "?", "thresholds": {"answer_f1": None}},
                        {"id": "q2", "question_text": "?"},
                    ],
                }
            ],
        },
        file="corpus.yaml",
    )
    ini, cli = ["steps_score>=0.1", "elapsed_sec<=9"], ["elapsed_sec<=5"]
    resolver = ThresholdResolver({**parse_threshold_list(ini, "ini"), **parse_threshold_list(cli, "cli")})
    template, parsed = corpus.templates[0], parse_corpus_thresholds(corpus)
    for question in template.questions:
        expected = resolve_thresholds(ini, cli, corpus, template.template_id, question.question_id)
        assert resolver.for_parsed(parsed, template.template_id, question.question_id) == expected
    first = resolver.for_parsed(parsed, template.template_id, template.questions[0].question_id)
    assert {metric: (t.op, t.limit, t.source) for metric, t in first.items()} == {
        "elapsed_sec": ("<=", 5.0, "cli"),
        "steps_score": (">=", 0.7, "template"),
    }
