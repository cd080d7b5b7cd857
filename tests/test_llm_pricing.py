"""Price lookup, cost arithmetic and price-table overrides."""

from __future__ import annotations

import json

import pytest

from pytest_graphrag_eval.errors import ConfigurationError
from pytest_graphrag_eval.llm import DEFAULT_PRICES, ModelPrice, load_prices, parse_prices, price_for


def test_cost_arithmetic() -> None:
    assert ModelPrice(0.15, 0.60).cost(2_000, 1_000) == pytest.approx(0.0009)
    assert ModelPrice(0.02).cost(1_000_000) == pytest.approx(0.02)
    assert ModelPrice(5.0, 15.0).cost(0, 0) == 0.0


@pytest.mark.parametrize(
    ("model", "expected"),
    [
        ("gpt-4o-mini", "gpt-4o-mini"),
        ("gpt-4o-mini-2024-07-18", "gpt-4o-mini"),
        ("gpt-4o-2024-08-06", "gpt-4o"),
        ("gpt-4.1-mini-2025-04-14", "gpt-4.1-mini"),
        ("gpt-4.1-nano", "gpt-4.1-nano"),
        ("gpt-3.5-turbo-0125", "gpt-3.5-turbo"),
        ("text-embedding-3-large", "text-embedding-3-large"),
    ],
)
def test_dated_snapshots_are_priced_as_their_base_model(model: str, expected: str) -> None:
    assert price_for(model) == DEFAULT_PRICES[expected]


@pytest.mark.parametrize(
    "model", ["llama3", "gpt-4o-minimal", "gpt-4o-audio-preview", "my-azure-deployment", "gpt-4"]
)
def test_unknown_models_have_no_price(model: str) -> None:
    assert price_for(model) is None


def test_overrides_take_precedence_and_add_models() -> None:
    prices = {"gpt-4o-mini": ModelPrice(1.0, 1.0), "judge-deploy": ModelPrice(2.0, 3.0)}
    assert price_for("gpt-4o-mini-2024-07-18", prices) == ModelPrice(1.0, 1.0)
    assert price_for("judge-deploy", prices) == ModelPrice(2.0, 3.0)
    assert price_for("gpt-4o", prices) == DEFAULT_PRICES["gpt-4o"]


def test_load_prices_json_and_yaml(tmp_path) -> None:
    as_json = tmp_path / "prices.json"
    as_json.write_text(json.dumps({"judge": {"input": 1, "output": 2.5}, "embedder": {"input": 0.1}}))
    as_yaml = tmp_path / "prices.yaml"
    as_yaml.write_text("judge:\n  input: 1\n  output: 2.5\nembedder:\n  input: 0.1\n")
    expected = {"judge": ModelPrice(1.0, 2.5), "embedder": ModelPrice(0.1, 0.0)}
    assert load_prices(as_json) == expected
    assert load_prices(as_yaml) == expected


@pytest.mark.parametrize(
    ("data", "message"),
    [
        ([1, 2], "must be a mapping"),
        ({"m": 3}, "expected a mapping"),
        ({"m": {"output": 1}}, "expected a mapping with 'input'"),
        ({"m": {"input": -1}}, "non-negative"),
        ({"m": {"input": "cheap"}}, "non-negative"),
        ({"m": {"input": 1, "cached": 0.5}}, "unknown keys"),
    ],
)
def test_invalid_price_tables_name_the_problem(data: object, message: str) -> None:
    with pytest.raises(ConfigurationError, match=message):
        parse_prices(data, source="prices.json")


def test_unreadable_price_files(tmp_path) -> None:
    with pytest.raises(ConfigurationError, match=r"missing\.json"):
        load_prices(tmp_path / "missing.json")
    broken = tmp_path / "broken.yaml"
    broken.write_text("a: [unclosed\n")
    with pytest.raises(ConfigurationError, match=r"broken\.yaml"):
        load_prices(broken)


def test_batch_price_is_half_the_listed_or_overridden_price() -> None:
    assert ModelPrice(2.0, 8.0).batch() == ModelPrice(1.0, 4.0)
    override = price_for("judge-deployment", {"judge-deployment": ModelPrice(3.0, 12.0)})
    assert override is not None and override.batch().cost(1_000_000, 1_000_000) == pytest.approx(7.5)
