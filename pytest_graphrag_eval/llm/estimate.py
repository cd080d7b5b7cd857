"""Dry-run estimates: the judge calls a run would send, their tokens and cost, as a range.

Each miss gets a synthetic reply (the smallest valid JSON) so that calls made after an earlier reply
are reached too; the rules of the range are in docs/cost.md. The high end of one call is also what
a USD budget reserves while the call is in flight (`CostCeiling`).
"""

from __future__ import annotations

import json
import math
import re
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

from pytest_graphrag_eval.llm.pricing import BATCH_PRICE_FACTOR, ModelPrice, price_for

DEFAULT_OUTPUT_CAP = 400
MESSAGE_OVERHEAD = 4
REPLY_OVERHEAD = 3
_WORDS = re.compile(r"\w+|[^\w\s]")
_PLACEHOLDER_BY_TYPE: dict[str, int | float | bool | str] = {
    "integer": 1,
    "number": 1.0,
    "boolean": False,
    "string": "x",
}


@dataclass(frozen=True)
class PlannedCall:
    """One judge call a dry run would send; token counts are ranges (low, high)."""

    purpose: str
    model: str
    input_tokens: tuple[int, int]
    output_tokens: tuple[int, int]


class TokenCounter:
    """The model's tokenizer through tiktoken when available, else a stated approximation."""

    def __init__(self) -> None:
        self._encodings: dict[str, Any] = {}
        self.method = "approximation"

    def count(self, text: str, model: str) -> tuple[int, bool]:
        """(tokens, exact): exact when the model's own tokenizer counted them."""
        encoding = self._encoding(model)
        if encoding is not None:
            return len(encoding.encode(text, disallowed_special=())), True
        return len(_WORDS.findall(text)), False

    def count_all(self, texts: Sequence[str], model: str) -> tuple[int, bool]:
        """(tokens of all `texts`, exact for every one)."""
        counts = [self.count(text, model) for text in texts]
        return sum(tokens for tokens, _ in counts), all(exact for _, exact in counts)

    def _encoding(self, model: str) -> Any:
        if model not in self._encodings:
            self._encodings[model] = _tiktoken_encoding(model)
            if self._encodings[model] is not None:
                self.method = "tiktoken"
        return self._encodings[model]


def _tiktoken_encoding(model: str) -> Any:
    try:
        import tiktoken

        return tiktoken.encoding_for_model(model)
    except Exception:  # not installed, an unknown model, or its encoding file cannot be fetched offline
        return None


class CallPlanner:
    """Records the calls a dry run would send and makes the synthetic replies that keep scorers going."""

    def __init__(self, max_output_tokens: int | None = None) -> None:
        self.calls: list[PlannedCall] = []
        self.cached: list[tuple[str, str]] = []  # (purpose, model) of calls the cache would answer
        self.tokens = TokenCounter()
        self._output_cap = max_output_tokens or DEFAULT_OUTPUT_CAP
        self.exact = True

    def record_cached(
        self, kind: str, model: str, response_format: Mapping[str, object] | None = None
    ) -> None:
        self.cached.append((purpose_of(kind, response_format), model))

    def plan_chat(
        self, messages: Sequence[Mapping[str, str]], model: str, response_format: Mapping[str, object] | None
    ) -> str:
        """Record a chat call; return the synthetic reply the scorer gets instead of the model's."""
        reply = synthetic_reply(response_format)
        counted, exact = self._count([str(message.get("content") or "") for message in messages], model)
        overhead = MESSAGE_OVERHEAD * len(messages) + REPLY_OVERHEAD
        low, high = _input_range(counted, exact, overhead)
        reply_tokens, _ = self.tokens.count(reply, model)
        output = (max(1, reply_tokens // 2), max(self._output_cap, reply_tokens))
        self.calls.append(PlannedCall(purpose_of("chat", response_format), model, (low, high), output))
        return reply

    def plan_embeddings(self, texts: Sequence[str], model: str) -> list[list[float]]:
        counted, exact = self._count(texts, model)
        low, high = _input_range(counted, exact, 0)
        self.calls.append(PlannedCall("embeddings", model, (low, high), (0, 0)))
        return [[1.0] for _ in texts]

    def _count(self, texts: Sequence[str], model: str) -> tuple[int, bool]:
        total, exact = self.tokens.count_all(texts, model)
        self.exact = self.exact and exact
        return total, exact


class CostCeiling:
    """The high end of one request's cost, reserved by a budgeted run while the request is in flight.

    Concurrent requests can then overspend by at most one of them (replies within the reply cap).
    """

    def __init__(self, prices: Mapping[str, ModelPrice] | None, max_output_tokens: int | None) -> None:
        self.tokens = TokenCounter()
        self._prices = prices
        self._output_cap = max_output_tokens or DEFAULT_OUTPUT_CAP

    def chat(self, messages: Sequence[Mapping[str, str]], model: str) -> float:
        price = price_for(model, self._prices)
        if price is None:
            return 0.0
        counted, exact = self.tokens.count_all(
            [str(message.get("content") or "") for message in messages], model
        )
        _, high = _input_range(counted, exact, MESSAGE_OVERHEAD * len(messages) + REPLY_OVERHEAD)
        return price.cost(high, self._output_cap)

    def embeddings(self, texts: Sequence[str], model: str) -> float:
        price = price_for(model, self._prices)
        if price is None:
            return 0.0
        counted, exact = self.tokens.count_all(texts, model)
        return price.cost(_input_range(counted, exact, 0)[1], 0)


def _input_range(counted: int, exact: bool, overhead: int) -> tuple[int, int]:
    if exact:
        return counted, counted + overhead
    return math.floor(counted * 0.75), math.ceil(counted * 1.5) + overhead


def purpose_of(kind: str, response_format: Mapping[str, object] | None) -> str:
    """What a call is for: its reply schema's name (e.g. answer_correctness), else its kind."""
    schema = (response_format or {}).get("json_schema")
    name = schema.get("name") if isinstance(schema, Mapping) else None
    return str(name) if name else kind


def synthetic_reply(response_format: Mapping[str, object] | None) -> str:
    """The smallest valid reply to a JSON-schema call (1 for integers, "x" for text), else `{}`."""
    schema = (response_format or {}).get("json_schema")
    body = schema.get("schema") if isinstance(schema, Mapping) else None
    properties = body.get("properties") if isinstance(body, Mapping) else None
    if not isinstance(properties, Mapping):
        return "{}"
    return json.dumps(
        {
            name: _PLACEHOLDER_BY_TYPE.get(str(spec.get("type")) if isinstance(spec, Mapping) else "", "x")
            for name, spec in properties.items()
        }
    )


@dataclass
class EstimateRow:
    """The calls of one purpose and model, summed."""

    purpose: str
    model: str
    calls: int = 0
    cached: int = 0
    input_tokens: list[int] = field(default_factory=lambda: [0, 0])
    output_tokens: list[int] = field(default_factory=lambda: [0, 0])

    def cost(self, prices: Mapping[str, ModelPrice] | None) -> tuple[float, float] | None:
        price = price_for(self.model, prices)
        if price is None:
            return None
        return (
            price.cost(self.input_tokens[0], self.output_tokens[0]),
            price.cost(self.input_tokens[1], self.output_tokens[1]),
        )


def estimate_rows(planner: CallPlanner) -> list[EstimateRow]:
    """Rows per (purpose, model), in first-seen order, then a total row."""
    rows: dict[tuple[str, str], EstimateRow] = {}
    for call in planner.calls:
        row = rows.setdefault((call.purpose, call.model), EstimateRow(call.purpose, call.model))
        row.calls += 1
        for index in (0, 1):
            row.input_tokens[index] += call.input_tokens[index]
            row.output_tokens[index] += call.output_tokens[index]
    for purpose, model in planner.cached:
        rows.setdefault((purpose, model), EstimateRow(purpose, model)).cached += 1
    return list(rows.values())


def estimate_lines(planner: CallPlanner, prices: Mapping[str, ModelPrice] | None = None) -> list[str]:
    """The dry run's table: calls, cache hits, token and cost ranges per purpose and model, and a total."""
    rows = estimate_rows(planner)
    header = ["metric", "model", "calls", "cached", "input tokens", "output tokens", "cost USD"]
    table: list[list[str]] = []
    total_in, total_out, total_cost, unpriced = [0, 0], [0, 0], [0.0, 0.0], []
    for row in rows:
        cost = row.cost(prices)
        if cost is None:
            unpriced.append(row.model)
        else:
            total_cost = [total_cost[0] + cost[0], total_cost[1] + cost[1]]
        total_in = [total_in[0] + row.input_tokens[0], total_in[1] + row.input_tokens[1]]
        total_out = [total_out[0] + row.output_tokens[0], total_out[1] + row.output_tokens[1]]
        table.append(
            [
                row.purpose,
                row.model,
                str(row.calls),
                str(row.cached),
                _span(row.input_tokens),
                _span(row.output_tokens),
                _money(cost) if cost is not None else "price unknown",
            ]
        )
    calls = sum(row.calls for row in rows)
    cached = sum(row.cached for row in rows)
    table.append(
        ["total", "", str(calls), str(cached), _span(total_in), _span(total_out), _money(tuple(total_cost))]
    )
    widths = [max(len(line[i]) for line in [header, *table]) for i in range(len(header))]
    lines = [
        "  ".join(cell.ljust(width) for cell, width in zip(line, widths, strict=True)).rstrip()
        for line in [header, *table]
    ]
    method = (
        "the model's tokenizer (tiktoken); high adds the chat format's per-message overhead"
        if planner.exact and planner.tokens.method == "tiktoken"
        else "approximated as words and punctuation marks (low x0.75, high x1.5 plus per-message "
        "overhead; install tiktoken for the model's own tokenizer)"
    )
    lines.append(f"input tokens: {method}")
    lines.append(
        f"output tokens: low half the smallest valid reply, high {planner._output_cap} per call "
        "(the reply cap); corrective retries of invalid replies are not included"
    )
    if unpriced:
        lines.append(f"no price known for {', '.join(sorted(set(unpriced)))}: left out of the cost")
    return lines


def batch_line(planner: CallPlanner, prices: Mapping[str, ModelPrice] | None = None) -> str:
    """What a batch run would do with the planned calls: requests, batches, cost at batch prices."""
    rows = estimate_rows(planner)
    calls = sum(row.calls for row in rows)
    low = high = 0.0
    for row in rows:
        cost = row.cost(prices)
        if cost is not None:
            low, high = low + cost[0] * BATCH_PRICE_FACTOR, high + cost[1] * BATCH_PRICE_FACTOR
    targets = {(call.purpose == "embeddings", call.model) for call in planner.calls}
    return (
        f"judge batch: {calls} requests in at least {len(targets)} batches (one per endpoint and model; "
        "calls that need an earlier reply go in a later batch), "
        f"{_money((low, high))} USD at batch prices ({BATCH_PRICE_FACTOR:.0%} of the listed price)"
    )


def _span(pair: Sequence[int]) -> str:
    return f"{pair[0]}-{pair[1]}"


def _money(pair: Sequence[float]) -> str:
    return f"{pair[0]:.4f}-{pair[1]:.4f}"
