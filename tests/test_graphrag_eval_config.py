"""graphrag-eval 6.x evaluation config files as our answers config.

Every file under tests/data/graphrag_eval_configs is checked against what graphrag-eval 6.6.1 made
of it (graphrag_eval_verdicts.json, written by record_verdicts.py in that folder): the same files
are accepted and rejected, and an accepted file switches on the same answer metrics and custom
output keys. The few files graphrag-eval accepts and we cannot run are listed in DIFFERENCES.
"""

from __future__ import annotations

import json
import warnings
from pathlib import Path
from typing import Any

import pytest

from pytest_graphrag_eval.answers import AnswerSettings
from pytest_graphrag_eval.answers.config_file import (
    AnswersConfig,
    is_graphrag_eval_config,
    load_answers_config,
    translate,
)
from pytest_graphrag_eval.errors import ConfigurationError, ConfigurationWarning
from pytest_graphrag_eval.llm import LLMSettings

CONFIGS = Path(__file__).parent / "data" / "graphrag_eval_configs"
RECORD = json.loads((CONFIGS / "graphrag_eval_verdicts.json").read_text(encoding="utf-8"))
VERDICTS: dict[str, dict[str, Any]] = RECORD["verdicts"]

# Accepted by graphrag-eval, rejected here on purpose (docs/graphrag-eval-config.md says why).
DIFFERENCES = {
    "unsupported_provider.yaml": "llm.generation.provider: 'anthropic' is not supported",
    "split_endpoints.yaml": "llm.embedding.base_url: differs from llm.generation.base_url",
    "prompt_without_question.yaml": "answer_correctness.prompt: missing placeholder(s) {question}",
}

# Where our message points for each file graphrag-eval rejects (its own location is in the record).
REJECTIONS = {
    "bad_correctness_without_llm.yaml": "answer_correctness: enabled, but there is no llm section",
    "bad_custom_bad_steps_key.yaml": "custom_evaluations[0] (query_check).steps_keys: must be a non-empty",
    "bad_custom_empty_list.yaml": "custom_evaluations: must be a non-empty list",
    "bad_custom_output_not_text.yaml": "custom_evaluations[0] (tone).outputs: must map each output name",
    "bad_custom_reserved_name.yaml": "result key(s) answer_relevance_error",
    "bad_custom_reserved_output.yaml": "result key(s) answer_f1 are reserved",
    "bad_custom_steps_without_name.yaml": "custom_evaluations[0] (query_check).steps_name: required when",
    "bad_custom_unknown_input.yaml": "custom_evaluations[0] (tone).inputs: unknown input(s) context",
    "bad_custom_unknown_key.yaml": "custom_evaluations[0]: unknown key(s) instruction",
    "bad_custom_without_llm.yaml": "custom_evaluations: needs the llm section",
    "bad_enabled_not_boolean.yaml": "answer_correctness.enabled: must be true or false, got 'sometimes'",
    "bad_max_tokens.yaml": "llm.generation.max_tokens: must be at least 1, got 0",
    "bad_missing_model.yaml": "llm.generation.model: required: a text",
    "bad_not_a_mapping.yaml": "the answers config must be a YAML mapping, got list",
    "bad_prompt_placeholder.yaml": "answer_correctness.prompt: unknown placeholder {reference}",
    "bad_relevance_without_embedding.yaml": "answer_relevance: enabled, but the llm section has no embedding",
    "bad_temperature.yaml": "llm.generation.temperature: must be from 0.0 to 2.0, got 3.5",
}


def load(name: str) -> tuple[AnswersConfig, AnswerSettings]:
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", ConfigurationWarning)
        config = load_answers_config(CONFIGS / name)
        settings = AnswerSettings.from_mapping(config.answers, base_dir=CONFIGS, source=str(config.path))
        return config, settings


def test_the_record_covers_every_config_file() -> None:
    assert RECORD["note"].startswith("graphrag-eval 6.6.1")
    assert sorted(VERDICTS) == sorted(path.name for path in CONFIGS.glob("*.yaml"))
    assert set(REJECTIONS) == {name for name, verdict in VERDICTS.items() if not verdict["accepted"]}
    assert all(VERDICTS[name]["accepted"] for name in DIFFERENCES)


@pytest.mark.parametrize("name", sorted(name for name in VERDICTS if VERDICTS[name]["accepted"]))
def test_files_graphrag_eval_accepts_switch_on_the_same_metrics(name: str) -> None:
    if name in DIFFERENCES:
        with pytest.raises(ConfigurationError) as info:
            load(name)
        assert str(info.value).startswith(str(CONFIGS / name))
        assert DIFFERENCES[name] in str(info.value)
        return
    verdict = VERDICTS[name]
    _, settings = load(name)
    assert (settings.judge == "llm") == verdict["answer_correctness"]
    assert settings.relevance == verdict["answer_relevance"]
    assert settings.retrieval_judges == verdict["llm_metrics"]
    output_keys = sorted(
        metric.output_key(field.name) for metric in settings.custom_metrics for field in metric.outputs
    )
    assert output_keys == verdict["custom_output_keys"]


@pytest.mark.parametrize("name", sorted(REJECTIONS))
def test_files_graphrag_eval_rejects_are_rejected_naming_file_and_key(name: str) -> None:
    with pytest.raises(ConfigurationError) as info:
        load(name)
    message = str(info.value)
    assert message.startswith(str(CONFIGS / name)), message
    assert REJECTIONS[name] in message


def test_full_config_maps_every_value() -> None:
    config, settings = load("full.yaml")
    assert settings.judge_model == "gpt-4o-mini" and settings.embedding_model == "text-embedding-3-small"
    assert settings.temperature == 0.2
    assert config.llm == {
        "model": "gpt-4o-mini",
        "embedding_model": "text-embedding-3-small",
        "max_tokens": 4096,
    }
    assert "Candidate answer: {actual_answer}" in settings.correctness_template.text
    tone, query = settings.custom_metrics
    assert (tone.name, tone.inputs, tone.prefix_outputs) == ("tone", ("question", "actual_answer"), False)
    assert [(field.name, field.type) for field in tone.outputs] == [
        ("tone_score", "value"),
        ("tone_reason", "value"),
    ]
    assert tone.outputs[0].description == "a number from 0 (opinionated) to 1 (neutral)"
    assert query.inputs == ("question", "reference_answer", "steps")
    assert (query.steps_name, query.steps_keys) == ("sparql_query", ("args", "output"))


def test_endpoint_keys_become_client_settings_and_extras_are_named_in_a_warning() -> None:
    with pytest.warns(ConfigurationWarning) as caught:
        config = load_answers_config(CONFIGS / "local_server.yaml")
    message = str(caught[0].message)
    assert message.startswith(str(CONFIGS / "local_server.yaml"))
    assert "llm.generation.top_p" in message and "llm.generation.seed" in message
    settings = LLMSettings.from_env({"OPENAI_API_KEY": "env-key"}, **config.llm)
    assert settings.base_url == "http://localhost:8000/v1"
    assert settings.api_key == "local-key"  # the file's key wins over the environment, as with LiteLLM
    assert (settings.model, settings.embedding_model) == ("qwen2.5-7b-instruct", "bge-small")
    assert "local-key" not in repr(config) and "local-key" not in repr(settings)


def test_azure_config() -> None:
    config, settings = load("azure.yaml")
    client = LLMSettings.from_env(
        {"AZURE_OPENAI_API_KEY": "k", "OPENAI_API_VERSION": "2023-05-15"}, **config.llm
    )
    assert client.is_azure and client.azure_endpoint == "https://example-resource.openai.azure.com"
    assert client.api_key == "k" and client.base_url is None
    assert (client.api_version, client.model, client.max_tokens) == ("2024-10-21", "judge-deployment", 2048)
    assert settings.judge == "llm" and not settings.relevance


def test_keys_graphrag_eval_ignores_are_warned_about_not_dropped() -> None:
    with pytest.warns(ConfigurationWarning) as caught:
        load_answers_config(CONFIGS / "unknown_sections.yaml")
    message = str(caught[0].message)
    for key in (
        "custom_evaluation (not a graphrag-eval config section)",
        "llm.cache",
        "answer_relevance.questions",
    ):
        assert key in message


def test_a_clean_file_gives_no_warning() -> None:
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        load_answers_config(CONFIGS / "full.yaml")


def test_our_own_answers_config_is_read_as_before(tmp_path: Path) -> None:
    path = tmp_path / "answers.yaml"
    path.write_text("judge: lexical\nrelevance_questions: 4\n", encoding="utf-8")
    config = load_answers_config(path)
    assert config.answers == {"judge": "lexical", "relevance_questions": 4} and config.llm == {}
    settings = AnswerSettings.from_mapping(config.answers)
    assert (settings.judge, settings.relevance_questions) == ("lexical", 4)


def test_mixing_both_forms_is_an_error(tmp_path: Path) -> None:
    path = tmp_path / "mixed.yaml"
    path.write_text("judge: llm\nllm:\n  generation: {provider: openai, model: m}\n", encoding="utf-8")
    with pytest.raises(ConfigurationError, match=r"mixes graphrag-eval sections \(llm\) with .*\(judge\)"):
        load_answers_config(path)


@pytest.mark.parametrize(
    ("data", "message"),
    [
        ({"llm": "openai"}, "llm: must be a mapping"),
        ({"llm": {"embedding": {"provider": "openai", "model": "e"}}}, "llm.generation: required"),
        ({"llm": {"generation": {"provider": "openai", "model": 4}}}, "llm.generation.model: must be a text"),
        (
            {"llm": {"generation": {"provider": "azure", "model": "d"}}},
            "azure provider needs the endpoint URL",
        ),
        ({"llm": {"generation": {"provider": "hosted_vllm", "model": "m"}}}, "needs the server's base_url"),
        (
            {"llm": {"generation": {"provider": "openai", "model": "m", "temperature": "warm"}}},
            "llm.generation.temperature: must be a number, got 'warm'",
        ),
        (
            {"llm": {"generation": {"provider": "openai", "model": "m", "max_tokens": 10**400}}},
            "llm.generation.max_tokens: must be a number, got an integer beyond a float's range",
        ),
        (
            {"llm": {"generation": {"provider": "openai", "model": "m", "base_url": "a", "api_base": "b"}}},
            "llm.generation.api_base: differs from base_url",
        ),
        (
            {
                "llm": {
                    "generation": {"provider": "openai", "model": "m", "api_key": "one"},
                    "embedding": {"provider": "openai", "model": "e", "api_key": "two"},
                }
            },
            "llm.embedding.api_key: differs from llm.generation.api_key",
        ),
        (
            {
                "llm": {"generation": {"provider": "openai", "model": "m"}},
                "answer_correctness": {"prompt": 3},
            },
            "must be the prompt text",
        ),
        ({"answer_relevance": "yes"}, "answer_relevance: must be a mapping"),
        (
            {
                "llm": {"generation": {"provider": "openai", "model": "m"}},
                "custom_evaluations": [
                    {"name": "x y", "inputs": ["question"], "instructions": "i", "outputs": {"a": "b"}}
                ],
            },
            "the name must be letters, digits and '_'",
        ),
    ],
)
def test_malformed_sections(data: dict[str, Any], message: str) -> None:
    assert is_graphrag_eval_config(data)
    with pytest.raises(ConfigurationError) as info:
        translated = translate(data, "eval.yaml")
        AnswerSettings.from_mapping(translated.answers, source="eval.yaml")
    assert str(info.value).startswith("eval.yaml: ")
    assert message in str(info.value)


def test_a_shared_api_key_may_be_given_once() -> None:
    translated = translate(
        {
            "llm": {
                "generation": {"provider": "openai", "model": "m", "api_key": "one"},
                "embedding": {"provider": "openai", "model": "e"},
            }
        },
        "eval.yaml",
    )
    assert translated.llm["api_key"] == "one" and translated.answers["relevance"] is True


def test_the_new_answer_options_in_our_own_form(tmp_path: Path) -> None:
    settings = AnswerSettings.from_mapping(
        {
            "retrieval_judges": "true",
            "temperature": "0.4",
            "correctness_prompt": "{question}{reference_answer}{actual_answer}",
        }
    )
    assert settings.retrieval_judges and settings.needs_llm and settings.temperature == 0.4
    assert settings.correctness_template.source == "answers option correctness_prompt"
    prompt_file = tmp_path / "prompt.txt"
    prompt_file.write_text("{question}{reference_answer}{actual_answer}", encoding="utf-8")
    for raw, message in (
        ({"temperature": "hot"}, "temperature: must be a number"),
        ({"temperature": 2.5}, "temperature: must be from 0 to 2"),
        ({"retrieval_judges": "maybe"}, "retrieval_judges: must be true or false"),
        (
            {"correctness_prompt": "{question}", "correctness_prompt_file": str(prompt_file)},
            "exclude each other",
        ),
    ):
        with pytest.raises(ConfigurationError, match=message):
            AnswerSettings.from_mapping(raw)


def test_embedding_client_options_that_cannot_apply_are_named() -> None:
    generation = {"provider": "openai", "model": "m", "timeout": 30}
    embedding = {"provider": "openai", "model": "e", "timeout": 10, "max_retries": 2}
    translated = translate({"llm": {"generation": generation, "embedding": embedding}}, "eval.yaml")
    assert translated.llm["timeout"] == 30.0 and "max_retries" not in translated.llm
    assert translated.ignored == (
        "llm.embedding.timeout (the judge client uses llm.generation's for both)",
        "llm.embedding.max_retries (the judge client uses llm.generation's for both)",
    )
