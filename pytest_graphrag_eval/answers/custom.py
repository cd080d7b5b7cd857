"""Custom LLM metrics declared in configuration (as graphrag-eval 6 offers): one judge call each,
inputs as data blocks, reply fields checked like any judge reply."""

from __future__ import annotations

import json
import re
from typing import Any

from pytest_graphrag_eval.answers.llm_correctness import repeat_cache_extra
from pytest_graphrag_eval.answers.metric import AnswerInputs, LLMJudgedMetric, response_format
from pytest_graphrag_eval.answers.prompts import DATA_RULE, data_block, render_alternatives
from pytest_graphrag_eval.answers.settings import CustomMetric, OutputField
from pytest_graphrag_eval.llm.judge import Judge, Usage
from pytest_graphrag_eval.llm.replies import (
    flag_field,
    integer_field,
    number_field,
    parse_object,
    scalar_field,
    text_field,
)

_SCHEMA_TYPES: dict[str, Any] = {
    "number": "number",
    "integer": "integer",
    "boolean": "boolean",
    "text": "string",
    "value": ["number", "string", "boolean"],
}
_SCHEMA_NAME = re.compile(r"[^A-Za-z0-9_-]")


def describe_field(spec: OutputField) -> str:
    """One line of the reply contract, e.g. `- score: number from 0 to 1, how polite`."""
    kind = {"boolean": "0 or 1", "text": "text", "value": "a number or a text"}.get(spec.type, spec.type)
    if spec.minimum is not None and spec.maximum is not None:
        kind += f" from {spec.minimum:g} to {spec.maximum:g}"
    elif spec.minimum is not None:
        kind += f" >= {spec.minimum:g}"
    elif spec.maximum is not None:
        kind += f" <= {spec.maximum:g}"
    return f"- {spec.name}: {kind}" + (f", {spec.description}" if spec.description else "")


def parse_fields(fields: tuple[OutputField, ...], text: str) -> dict[str, Any]:
    """Check a custom metric reply field by field; out-of-range values are rejected."""
    data = parse_object(text)
    values: dict[str, Any] = {}
    for spec in fields:
        if spec.type == "number":
            values[spec.name] = number_field(data, spec.name, spec.minimum, spec.maximum)
        elif spec.type == "integer":
            minimum = None if spec.minimum is None else int(spec.minimum)
            maximum = None if spec.maximum is None else int(spec.maximum)
            values[spec.name] = integer_field(data, spec.name, minimum, maximum)
        elif spec.type == "boolean":
            values[spec.name] = flag_field(data, spec.name)
        elif spec.type == "value":
            values[spec.name] = scalar_field(data, spec.name)
        else:
            values[spec.name] = text_field(data, spec.name)
    return values


def render_steps(steps: list[dict[str, Any]], steps_name: str | None, keys: tuple[str, ...]) -> str:
    """Steps (their `keys` fields, only `steps_name` ones if given) as JSON, JSON-text fields decoded so the
    judge reads one document rather than escaped strings."""
    kept = [
        {key: step[key] if key == "name" else _decoded(step[key]) for key in keys if key in step}
        for step in steps
        if isinstance(step, dict) and (steps_name is None or step.get("name") == steps_name)
    ]
    return json.dumps(kept, ensure_ascii=False, indent=1, default=str)


def _decoded(value: Any) -> Any:
    if isinstance(value, str):
        try:
            return json.loads(value)
        except (ValueError, RecursionError):
            return value
    return value


class CustomLLMMetric(LLMJudgedMetric):
    """A configured metric judged by the LLM (`<name>_judge` = `llm:<model>`)."""

    cost_key = None

    def __init__(
        self,
        client: Judge,
        spec: CustomMetric,
        model: str,
        output_mode: str = "json_schema",
        temperature: float = 0.0,
    ):
        super().__init__(client, model, output_mode=output_mode, temperature=temperature)
        self.spec = spec
        self.label_key = f"{spec.name}_judge"
        self.error_key = f"{spec.name}_error"
        self.spread_keys = tuple(
            spec.output_key(field.name) for field in spec.outputs if field.type in ("number", "integer")
        )
        properties = {field.name: {"type": _SCHEMA_TYPES[field.type]} for field in spec.outputs}
        self.response_format = response_format(_SCHEMA_NAME.sub("_", spec.name)[:64], properties, output_mode)
        self.system_message = (
            DATA_RULE
            + "\n\nReply with one JSON object and nothing else. Its fields:\n"
            + "\n".join(describe_field(field) for field in spec.outputs)
        )

    def applies(self, inputs: AnswerInputs) -> bool:
        """Every declared input is present (each input is named as the `AnswerInputs` field holding it)."""
        return all(getattr(inputs, name) is not None for name in self.spec.inputs)

    def prompt(self, inputs: AnswerInputs) -> str:
        """The instructions followed by each declared input as a data block."""
        texts = {
            "question": inputs.question,
            "reference_answer": render_alternatives(inputs.reference_answer or ""),
            "actual_answer": inputs.actual_answer or "",
            "steps": render_steps(inputs.steps or [], self.spec.steps_name, self.spec.steps_keys),
            "reference_steps": "\n\n".join(  # one JSON list per group, groups apart by a blank line
                render_steps(list(group), self.spec.steps_name, self.spec.steps_keys)
                for group in inputs.reference_steps or []
            ),
        }
        blocks = [data_block(name, texts[name]) for name in self.spec.inputs]
        return "\n\n".join([self.spec.instructions.strip(), *blocks])

    async def judged_keys(self, inputs: AnswerInputs, repeat: int, usage: Usage) -> dict[str, Any]:
        values = await self.ask(
            self.system_message,
            self.prompt(inputs),
            lambda text: parse_fields(self.spec.outputs, text),
            usage,
            self.response_format,
            cache_key_extra=repeat_cache_extra(repeat),
        )
        return {self.spec.output_key(name): value for name, value in values.items()}
