"""Dry-run estimates: the judge calls a run would send, their tokens and cost, as a range.

Each miss gets a synthetic reply (the smallest valid JSON) so that calls made after an earlier reply
are reached too; the rules of the range are in docs/cost.md. The high end of one call is also what
a USD budget reserves while the call is in flight (`CostCeiling`).
"""

from __future__ import annotations

import json
import math
import re
from collections.abc import Iterable, Mapping, Sequence
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
        return approximate_tokens(text), False

    def input_range(self, texts: Sequence[str], model: str, overhead: int) -> tuple[tuple[int, int], bool]:
        """((low, high) input tokens of a request sending `texts`, exact): exact counts plus the chat
        format's `overhead` at the high end, else the approximation widened both ways."""
        counts = [self.count(text, model) for text in texts]
        counted, exact = sum(tokens for tokens, _ in counts), all(exact for _, exact in counts)
        if exact:
            return (counted, counted + overhead), True
        return (math.floor(counted * 0.75), math.ceil(counted * 1.5) + overhead), False

    def chat_range(self, messages: Sequence[Mapping[str, str]], model: str) -> tuple[tuple[int, int], bool]:
        """`input_range` of a chat request: its messages' contents and the chat format's overhead."""
        contents = [str(message.get("content") or "") for message in messages]
        return self.input_range(contents, model, MESSAGE_OVERHEAD * len(messages) + REPLY_OVERHEAD)

    def _encoding(self, model: str) -> Any:
        if model not in self._encodings:
            self._encodings[model] = _tiktoken_encoding(model)
            if self._encodings[model] is not None:
                self.method = "tiktoken"
        return self._encodings[model]


def approximate_tokens(text: str) -> int:
    """A stand-in tokenizer: words and punctuation marks."""
    return len(_WORDS.findall(text))


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
        inputs, exact = self.tokens.chat_range(messages, model)
        self.exact = self.exact and exact
        reply_tokens, _ = self.tokens.count(reply, model)
        output = (max(1, reply_tokens // 2), max(self._output_cap, reply_tokens))
        self.calls.append(PlannedCall(purpose_of("chat", response_format), model, inputs, output))
        return reply

    def plan_embeddings(self, texts: Sequence[str], model: str) -> list[list[float]]:
        inputs, exact = self.tokens.input_range(texts, model, 0)
        self.exact = self.exact and exact
        self.calls.append(PlannedCall("embeddings", model, inputs, (0, 0)))
        return [[1.0] for _ in texts]


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
        (_, high), _ = self.tokens.chat_range(messages, model)
        return price.cost(high, self._output_cap)

    def embeddings(self, texts: Sequence[str], model: str) -> float:
        price = price_for(model, self._prices)
        if price is None:
            return 0.0
        (_, high), _ = self.tokens.input_range(texts, model, 0)
        return price.cost(high, 0)


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
    """The calls of one purpose and model (or of every row: the total), summed."""

    purpose: str
    model: str
    calls: int = 0
    cached: int = 0
    input_tokens: list[int] = field(default_factory=lambda: [0, 0])
    output_tokens: list[int] = field(default_factory=lambda: [0, 0])

    def add(self, counted: PlannedCall | EstimateRow) -> None:
        """Count one planned call, or another row's calls, in this row."""
        if isinstance(counted, EstimateRow):
            self.calls += counted.calls
            self.cached += counted.cached
        else:
            self.calls += 1
        for index in (0, 1):
            self.input_tokens[index] += counted.input_tokens[index]
            self.output_tokens[index] += counted.output_tokens[index]

    def cost(self, prices: Mapping[str, ModelPrice] | None) -> tuple[float, float] | None:
        price = price_for(self.model, prices)
        if price is None:
            return None
        return (
            price.cost(self.input_tokens[0], self.output_tokens[0]),
            price.cost(self.input_tokens[1], self.output_tokens[1]),
        )

    def cells(self, cost: str) -> list[str]:
        """This row in the dry run's table, `cost` its last cell."""
        counts = [str(self.calls), str(self.cached), _span(self.input_tokens), _span(self.output_tokens)]
        return [self.purpose, self.model, *counts, cost]


def estimate_rows(planner: CallPlanner) -> list[EstimateRow]:
    """Rows per (purpose, model), in first-seen order."""
    rows: dict[tuple[str, str], EstimateRow] = {}
    for call in planner.calls:
        rows.setdefault((call.purpose, call.model), EstimateRow(call.purpose, call.model)).add(call)
    for purpose, model in planner.cached:
        rows.setdefault((purpose, model), EstimateRow(purpose, model)).cached += 1
    return list(rows.values())


def estimate_lines(planner: CallPlanner, prices: Mapping[str, ModelPrice] | None = None) -> list[str]:
    """The dry run's table: calls, cache hits, token and cost ranges per purpose and model, and a total."""
    rows = estimate_rows(planner)
    costs = [row.cost(prices) for row in rows]
    header = ["metric", "model", "calls", "cached", "input tokens", "output tokens", "cost USD"]
    total = EstimateRow("total", "")
    table: list[list[str]] = []
    for row, cost in zip(rows, costs, strict=True):
        total.add(row)
        table.append(row.cells(_money(cost) if cost is not None else "price unknown"))
    table.append(total.cells(_money(_total_cost(costs))))
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
    unpriced = sorted({row.model for row, cost in zip(rows, costs, strict=True) if cost is None})
    if unpriced:
        lines.append(f"no price known for {', '.join(unpriced)}: left out of the cost")
    return lines


def batch_line(planner: CallPlanner, prices: Mapping[str, ModelPrice] | None = None) -> str:
    """What a batch run would do with the planned calls: requests, batches, cost at batch prices."""
    rows = estimate_rows(planner)
    low, high = _total_cost(row.cost(prices) for row in rows)
    targets = {(call.purpose == "embeddings", call.model) for call in planner.calls}
    return (
        f"judge batch: {sum(row.calls for row in rows)} requests in at least {len(targets)} batches (one "
        "per endpoint and model; calls that need an earlier reply go in a later batch), "
        f"{_money((low * BATCH_PRICE_FACTOR, high * BATCH_PRICE_FACTOR))} USD at batch prices "
        f"({BATCH_PRICE_FACTOR:.0%} of the listed price)"
    )


def _total_cost(costs: Iterable[tuple[float, float] | None]) -> tuple[float, float]:
    """The priced costs added in order (as the table lists them; `sum` would compensate)."""
    low = high = 0.0
    for cost in costs:
        if cost is not None:
            low, high = low + cost[0], high + cost[1]
    return low, high


def _span(pair: Sequence[int]) -> str:
    return f"{pair[0]}-{pair[1]}"


def _money(pair: Sequence[float]) -> str:
    return f"{pair[0]:.4f}-{pair[1]:.4f}"
