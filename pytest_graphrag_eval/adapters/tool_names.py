"""Renaming the agent's tools to the corpus' names before scoring (`run_sparql` -> `sparql_query`),
from the ini file, the command line or a corpus file's `tool_names` (docs/options.md)."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from pytest_graphrag_eval.errors import ConfigurationError

TOOL_NAMES_OPTION = "tool_names"


def tool_names_setting(value: Any, source: str) -> dict[str, str]:
    """A `tool_names` setting checked to be a mapping of tool names to tool names."""
    if value is None:
        return {}
    if not isinstance(value, Mapping) or not all(
        isinstance(key, str) and isinstance(name, str) and key and name for key, name in value.items()
    ):
        raise ConfigurationError(
            f"{source}: tool_names must map the agent's tool names to the corpus' names, got {value!r}"
        )
    return dict(value)


def rename_tools(response: Mapping[str, Any], mapping: Mapping[str, str]) -> Mapping[str, Any]:
    """The response with its steps' names mapped (`mapping` checked by `tool_names_setting`); the same
    object when nothing is renamed."""
    if not mapping or not isinstance(response, Mapping):  # a malformed response is reported as such later
        return response
    steps = response.get("actual_steps")
    if not isinstance(steps, list):
        return response
    if not any(isinstance(step, Mapping) and step.get("name") in mapping for step in steps):
        return response
    renamed = [
        {**step, "name": mapping[step["name"]]}
        if isinstance(step, Mapping) and step.get("name") in mapping
        else step
        for step in steps
    ]
    return {**response, "actual_steps": renamed}
