"""Which endpoint a `--graphrag-sparql-endpoint` value names, and opening it: apart from endpoint.py so
that the interface knows none of its implementations."""

from __future__ import annotations

import contextlib
from collections.abc import Mapping
from pathlib import Path
from typing import Any

from pytest_graphrag_eval.graph.embedded import EmbeddedEndpoint, files_identity
from pytest_graphrag_eval.graph.endpoint import SparqlEndpoint
from pytest_graphrag_eval.graph.http import HttpEndpoint, shown_url
from pytest_graphrag_eval.graph.readonly import NO_SERVICE
from pytest_graphrag_eval.graph.service import ServicePolicy


def identify_graph(spec: str, root: Path | None = None) -> dict[str, Any]:
    """Which graph `spec` names, without loading it (the URL without credentials, or the files and their
    content hash), so two runs can tell whether they saw the same data."""
    if is_remote(spec):
        return {"kind": "http", "url": shown_url(spec)}
    path = Path(spec)
    location = str(path)
    if root is not None and path.is_absolute():
        with contextlib.suppress(ValueError):
            location = str(path.relative_to(root))
    return {"kind": "embedded", "location": location, **files_identity(path)}


def is_remote(spec: str) -> bool:
    return spec.lower().startswith(("http://", "https://"))


def open_endpoint(
    spec: str,
    *,
    base_dir: Path | None = None,
    options: Mapping[str, Any] | None = None,
    base_iri: str | None = None,
    service: ServicePolicy = NO_SERVICE,
) -> SparqlEndpoint:
    """An HTTP endpoint for an `http(s)://` URL (`options`: its keyword arguments), else an embedded
    store loaded from the file or folder."""
    if is_remote(spec):
        return HttpEndpoint(spec, service=service, **dict(options or {}))
    path = Path(spec)
    if not path.is_absolute() and base_dir is not None:
        path = base_dir / path
    return EmbeddedEndpoint.load(path, base_iri=base_iri, service=service)
