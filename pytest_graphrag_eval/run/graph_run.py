"""What the end of a run needs of the graph stage without importing it: a merge of shard reports never
needs the stage's endpoints and corpus YAML."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any, Protocol


class GraphOptions(Protocol):
    """The run's graph settings (the plugin's `PluginSettings` has them)."""

    @property
    def sparql_endpoint(self) -> str | None: ...
    @property
    def sparql_timeout(self) -> float: ...
    @property
    def sparql_concurrency(self) -> int: ...
    @property
    def sparql_base_iri(self) -> str | None: ...
    @property
    def sparql_service(self) -> str | None: ...
    @property
    def check_references(self) -> bool: ...
    @property
    def update_references(self) -> bool: ...
    @property
    def graph_coverage(self) -> bool: ...
    @property
    def execute(self) -> str | None: ...
    @property
    def execute_reference(self) -> bool: ...
    @property
    def execute_agent(self) -> bool: ...
    @property
    def uses_graph(self) -> bool: ...


@dataclass(frozen=True)
class GraphRun:
    """What the graph adds to a finished run's report."""

    metadata: dict[str, Any] = field(default_factory=dict)
    references: dict[str, Any] | None = None
    warnings: tuple[str, ...] = ()
    lines: tuple[tuple[str, str], ...] = ()  # for the terminal: (text, colour)
    update_failures: int = 0  # --graphrag-update-references: corpus files or outputs it could not update
