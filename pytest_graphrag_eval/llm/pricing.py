"""Token prices (USD per 1M tokens, public list prices) and cost arithmetic.

Override them for a contract (`LLMSettings(prices=...)`, `load_prices`). Batch API requests cost
`BATCH_PRICE_FACTOR` of the price. An unknown model costs 0.0 and is flagged, not silently wrong.
"""

from __future__ import annotations

import json
import re
from collections.abc import Mapping
from dataclasses import dataclass
from pathlib import Path

from pytest_graphrag_eval.errors import ConfigurationError


@dataclass(frozen=True)
class ModelPrice:
    """USD per one million input (prompt) and output (completion) tokens."""

    input_per_million: float
    output_per_million: float = 0.0

    def cost(self, input_tokens: int, output_tokens: int = 0) -> float:
        return (input_tokens * self.input_per_million + output_tokens * self.output_per_million) / 1_000_000

    def batch(self) -> ModelPrice:
        """The price of the same tokens sent through the Batch API."""
        return ModelPrice(
            self.input_per_million * BATCH_PRICE_FACTOR, self.output_per_million * BATCH_PRICE_FACTOR
        )


BATCH_PRICE_FACTOR = 0.5


# List prices (USD / 1M tokens, standard tier); they change — override for your contract.
DEFAULT_PRICES: Mapping[str, ModelPrice] = {
    "gpt-4o-mini": ModelPrice(0.15, 0.60),
    "gpt-4o": ModelPrice(2.50, 10.00),
    "gpt-4.1": ModelPrice(2.00, 8.00),
    "gpt-4.1-mini": ModelPrice(0.40, 1.60),
    "gpt-4.1-nano": ModelPrice(0.10, 0.40),
    "o3-mini": ModelPrice(1.10, 4.40),
    "o4-mini": ModelPrice(1.10, 4.40),
    "gpt-4-turbo": ModelPrice(10.00, 30.00),
    "gpt-3.5-turbo": ModelPrice(0.50, 1.50),
    "text-embedding-3-small": ModelPrice(0.02),
    "text-embedding-3-large": ModelPrice(0.13),
    "text-embedding-ada-002": ModelPrice(0.10),
}


_SNAPSHOT_SUFFIX = re.compile(r"-(?:\d{4}-\d{2}-\d{2}|\d{4})$")


def price_for(model: str, prices: Mapping[str, ModelPrice] | None = None) -> ModelPrice | None:
    """The price of `model` (`prices` first), or None; a dated snapshot is priced as its base name."""
    base = _SNAPSHOT_SUFFIX.sub("", model)
    for table in (prices or {}, DEFAULT_PRICES):
        for name in (model, base):
            if name in table:
                return table[name]
    return None


def load_prices(path: str | Path) -> dict[str, ModelPrice]:
    """Read a price file (JSON, or YAML by extension): `{model: {input: ..., output: ...}}` in USD per 1M."""
    path = Path(path)
    try:
        text = path.read_text(encoding="utf-8")
        if path.suffix.lower() in {".yaml", ".yml"}:
            import yaml

            data = yaml.safe_load(text)
        else:
            data = json.loads(text)
    except (OSError, ValueError, RecursionError) as exc:  # yaml.YAMLError: Exception, handled below
        raise ConfigurationError(f"{path}: cannot read price table: {exc}") from exc
    except Exception as exc:
        raise ConfigurationError(f"{path}: cannot parse price table: {exc}") from exc
    return parse_prices(data, source=str(path))


def parse_prices(data: object, source: str = "<prices>") -> dict[str, ModelPrice]:
    """Validate a `{model: {input, output}}` mapping into ModelPrice values."""
    if not isinstance(data, Mapping):
        raise ConfigurationError(f"{source}: price table must be a mapping of model name to prices")
    result: dict[str, ModelPrice] = {}
    for model, entry in data.items():
        if not isinstance(entry, Mapping) or "input" not in entry:
            raise ConfigurationError(
                f"{source}: model {model!r}: expected a mapping with 'input' (and 'output')"
            )
        unknown = set(entry) - {"input", "output"}
        if unknown:
            raise ConfigurationError(f"{source}: model {model!r}: unknown keys {sorted(unknown)}")
        values = [entry["input"], entry.get("output", 0.0)]
        if not all(isinstance(v, int | float) and not isinstance(v, bool) and v >= 0 for v in values):
            raise ConfigurationError(f"{source}: model {model!r}: prices must be non-negative numbers")
        result[str(model)] = ModelPrice(float(values[0]), float(values[1]))
    return result
