"""What the end of a run needs of the graph stage without importing it: a merge of shard reports never
needs the stage's endpoints and corpus YAML."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any


@dataclass(frozen=True)
class GraphRun:
    """What the graph adds to a finished run's report."""

    metadata: dict[str, Any] = field(default_factory=dict)
    references: dict[str, Any] | None = None
    warnings: tuple[str, ...] = ()
    lines: tuple[tuple[str, str], ...] = ()  # for the terminal: (text, colour)
    update_failures: int = 0  # --graphrag-update-references: corpus files or outputs it could not update
