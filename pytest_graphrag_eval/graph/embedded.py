"""The embedded endpoint: RDF files loaded once into an in-memory pyoxigraph store, queried read-only.

A file or a folder (every RDF file under it, sorted by path) in any format pyoxigraph reads by
extension: Turtle, N-Triples, N-Quads, TriG, N3, RDF/XML, JSON-LD. A file that does not parse is an
error naming the file and line. The store is never written after loading, and only read-only
queries reach it (`readonly.py`). Under pytest-xdist each worker loads its own copy: loading is
measured by `benchmarks/bench_reference_check.py` and for corpus-sized graphs costs less than
starting the worker.
"""

from __future__ import annotations

import hashlib
import time
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

from pytest_graphrag_eval.graph.endpoint import EndpointError, QueryForm, QueryResult
from pytest_graphrag_eval.graph.rdf_text import canonical_ntriples, solutions_json
from pytest_graphrag_eval.graph.readonly import first_line, import_pyoxigraph, query_form

RDF_EXTENSIONS = (".ttl", ".nt", ".nq", ".trig", ".n3", ".rdf", ".owl", ".xml", ".jsonld")


class EmbeddedEndpoint:
    """An in-memory pyoxigraph store holding the graph of some RDF files."""

    def __init__(self, store: Any, files: list[Path], content_hash: str, triples: int, root: Path):
        self._store = store
        self.files = files
        self.content_hash = content_hash
        self.triples = triples
        self.root = root
        self.loaded_at = datetime.now(UTC).isoformat(timespec="seconds")

    @classmethod
    def load(cls, path: Path) -> EmbeddedEndpoint:
        """Load every RDF file at `path`; EndpointError names the file (and line) that fails."""
        pyoxigraph = import_pyoxigraph()
        files = rdf_files(path)
        root = path if path.is_dir() else path.parent
        store = pyoxigraph.Store()
        for file in files:
            data = _read(file)
            try:
                store.bulk_load(data, format=pyoxigraph.RdfFormat.from_extension(file.suffix[1:]))
            except SyntaxError as error:
                where = f"{file}:{error.lineno}" if error.lineno else str(file)
                raise EndpointError(f"{where}: the RDF file does not parse: {first_line(error)}") from None
            except (ValueError, OSError) as error:
                raise EndpointError(f"{file}: the RDF file cannot be loaded: {first_line(error)}") from None
        return cls(store, files, files_identity(path)["content_hash"], len(store), root)

    def execute(self, query: str) -> QueryResult:
        form = query_form(query)
        started = time.perf_counter()
        try:
            results = self._store.query(query)
            text = solutions_json(results) if form is not QueryForm.CONSTRUCT else canonical_ntriples(results)
        except (SyntaxError, OSError, ValueError) as error:
            raise EndpointError(f"the query failed in the embedded store: {first_line(error)}") from None
        return QueryResult(form, text, time.perf_counter() - started)

    def describe(self) -> dict[str, Any]:
        return {
            "kind": "embedded",
            "files": [_relative(file, self.root) for file in self.files],
            "content_hash": self.content_hash,
            "triples": self.triples,
            "loaded_at": self.loaded_at,
        }

    def close(self) -> None:
        """Nothing to release: the store is freed with the object."""


def files_identity(path: Path) -> dict[str, Any]:
    """The RDF files at `path` (relative names) and one SHA-256 over their names and contents."""
    files = rdf_files(path)
    root = path if path.is_dir() else path.parent
    digest = hashlib.sha256()
    for file in files:
        digest.update(_relative(file, root).encode("utf-8") + b"\0" + hashlib.sha256(_read(file)).digest())
    return {
        "files": [_relative(file, root) for file in files],
        "content_hash": "sha256:" + digest.hexdigest(),
    }


def rdf_files(path: Path) -> list[Path]:
    """The RDF files at `path`: the file itself, or those under a folder, sorted."""
    if path.is_dir():
        files = sorted(p for p in path.rglob("*") if p.is_file() and p.suffix.lower() in RDF_EXTENSIONS)
        if not files:
            raise EndpointError(
                f"{path}: the folder holds no RDF file (looked for {', '.join(RDF_EXTENSIONS)})"
            )
        return files
    if not path.exists():
        raise EndpointError(f"{path}: no such RDF file or folder (and not an http(s):// URL)")
    if path.suffix.lower() not in RDF_EXTENSIONS:
        raise EndpointError(
            f"{path}: not an RDF file name (its extension must be one of {', '.join(RDF_EXTENSIONS)})"
        )
    return [path]


def _read(file: Path) -> bytes:
    try:
        return file.read_bytes()
    except OSError as error:
        raise EndpointError(f"{file}: cannot read the RDF file: {error.strerror or error}") from None


def _relative(file: Path, root: Path) -> str:
    try:
        return str(file.relative_to(root))
    except ValueError:
        return str(file)
