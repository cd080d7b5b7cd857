"""AnswerSettings validation and from_mapping (ini / YAML values)."""

from __future__ import annotations

from pathlib import Path

import pytest

from pytest_graphrag_eval.answers import AnswerSettings, CustomMetric, OutputField
from pytest_graphrag_eval.errors import ConfigurationError
from pytest_graphrag_eval.scorer_factory import build_scorers

POLITENESS = {
    "name": "politeness",
    "inputs": ["question", "actual_answer"],
    "instructions": "Rate how polite the answer is.",
    "outputs": {"score": {"type": "number", "min": 0, "max": 1}, "reason": "text"},
}


def test_defaults_are_offline() -> None:
    settings = AnswerSettings()
    assert (settings.judge, settings.relevance, settings.repeats, settings.needs_llm) == (
        "lexical",
        False,
        1,
        False,
    )


def test_from_mapping_converts_ini_strings_and_resolves_paths(tmp_path: Path) -> None:
    (tmp_path / "prompt.txt").write_text("{question}{reference_answer}{actual_answer}", encoding="utf-8")
    settings = AnswerSettings.from_mapping(
        {
            "judge": "llm",
            "relevance": "yes",
            "relevance-backend": "native",
            "relevance_questions": "5",
            "repeats": " 3 ",
            "correctness_prompt_file": "prompt.txt",
            "judge_model": "gpt-4.1-mini",
            "embedding_model": "",
        },
        base_dir=tmp_path,
    )
    assert settings.relevance is True and settings.relevance_questions == 5 and settings.repeats == 3
    assert settings.correctness_prompt_file == tmp_path / "prompt.txt"
    assert settings.correctness_template.source == str(tmp_path / "prompt.txt")
    assert settings.embedding_model is None and settings.needs_llm


def test_custom_metrics_from_yaml_list_or_file(tmp_path: Path) -> None:
    from_list = AnswerSettings.from_mapping({"custom_metrics": [POLITENESS]})
    (tmp_path / "metrics.yaml").write_text(
        "custom_metrics:\n"
        "  - name: politeness\n"
        "    inputs: [question, actual_answer]\n"
        "    instructions: Rate how polite the answer is.\n"
        "    outputs:\n"
        "      score: {type: number, min: 0, max: 1}\n"
        "      reason: text\n",
        encoding="utf-8",
    )
    from_file = AnswerSettings.from_mapping({"custom_metrics": "metrics.yaml"}, base_dir=tmp_path)
    assert from_list == from_file
    assert from_file.custom_metrics[0].outputs == (
        OutputField("score", "number", minimum=0.0, maximum=1.0),
        OutputField("reason", "text"),
    )


@pytest.mark.parametrize(
    ("raw", "message"),
    [
        ({"judge": "gpt"}, "judge: must be one of none, lexical, llm, got 'gpt'"),
        ({"relevance": "maybe"}, "relevance: must be true or false"),
        ({"repeats": "0"}, "repeats: must be a whole number >= 1"),
        ({"relevance_questions": "three"}, "relevance_questions: must be a whole number"),
        ({"relevance_backend": "deepeval"}, "relevance_backend: must be one of native, ragas"),
        ({"output_mode": "xml"}, "output_mode: must be one of json_schema, json_object"),
        ({"judges": "llm"}, "my.ini: unknown answers option 'judges'"),
        ({"correctness_prompt_file": "nope.txt"}, "nope.txt: cannot read it"),
        ({"custom_metrics": "missing.yaml"}, "cannot read custom metrics file"),
        ({"custom_metrics": {"name": "x"}}, "must be a list of custom metric mappings"),
    ],
)
def test_bad_values_are_configuration_errors(tmp_path: Path, raw: dict, message: str) -> None:
    with pytest.raises(ConfigurationError) as info:
        AnswerSettings.from_mapping(raw, base_dir=tmp_path, source="my.ini")
    assert message in str(info.value)


@pytest.mark.parametrize(
    ("change", "message"),
    [
        ({"name": "Polite-ness"}, "lower-case letters"),
        ({"name": "answer_politeness"}, "names starting with 'answer' are reserved"),
        ({"name": "erag_politeness"}, "names starting with 'erag' are reserved"),
        ({"inputs": ["question", "context"]}, "unknown input(s) context"),
        ({"inputs": []}, "inputs must be a non-empty list"),
        ({"instructions": " "}, "instructions must not be empty"),
        ({"outputs": {}}, "outputs must be a non-empty list"),
        ({"outputs": {"error": "text"}}, "output field 'error'"),
        ({"outputs": {"score": "float"}}, "type must be one of number, integer, boolean, text"),
        ({"outputs": {"ok": {"type": "boolean", "max": 1}}}, "only numbers can have min/max"),
        ({"outputs": {"score": {"type": "number", "min": 2, "max": 1}}}, "min is greater than max"),
        ({"outputs": {"score": {"type": "number", "min": "low"}}}, "min: must be a number"),
        (  # float(10**400) raised OverflowError
            {"outputs": {"score": {"type": "number", "max": 10**400}}},
            "max: must be a number, got an integer beyond a float's range",
        ),
        ({"outputs": {"score": {"type": "number", "min": float("nan")}}}, "min: must be a number, got nan"),
        ({"outputs": {"score": {"kind": "number"}}}, "unknown key(s) kind"),
        ({"steps_name": "sparql"}, "steps_name needs 'steps' among the inputs"),
        ({"extra": 1}, "unknown key(s) extra"),
    ],
)
def test_bad_custom_metric_declarations(change: dict, message: str) -> None:
    with pytest.raises(ConfigurationError) as info:
        AnswerSettings.from_mapping({"custom_metrics": [{**POLITENESS, **change}]})
    assert message in str(info.value)


def test_custom_metric_result_keys_must_not_clash() -> None:
    first = CustomMetric("tone_a", ("actual_answer",), "Rate.", (OutputField("b"),))
    second = CustomMetric("tone", ("actual_answer",), "Rate.", (OutputField("a_b"),))
    with pytest.raises(ConfigurationError, match="result key 'tone_a_b' clashes"):
        AnswerSettings(custom_metrics=(first, second))


def test_llm_metrics_without_a_client_are_a_configuration_error() -> None:
    with pytest.raises(ConfigurationError, match="need an LLM judge: set OPENAI_API_KEY"):
        build_scorers(AnswerSettings(judge="llm"), None)
    with pytest.raises(ConfigurationError, match="need an LLM judge"):
        build_scorers(AnswerSettings(relevance=True), None)


def test_offline_settings_build_without_a_client() -> None:
    defaults = ["steps", "retrieval", "erag"]
    assert [scorer.name for scorer in build_scorers(AnswerSettings(), None)] == [
        *defaults,
        "answer_match",
        "answer_eval",
    ]
    assert [scorer.name for scorer in build_scorers(AnswerSettings(judge="none"), None)] == [
        *defaults,
        "answer_match",
    ]
