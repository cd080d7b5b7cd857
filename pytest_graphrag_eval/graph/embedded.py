"""The embedded endpoint: RDF files (rules: docs/knowledge-graph.md) loaded once into a pyoxigraph store,
queried read-only. Under pytest-xdist the controller loads into a store on disk that workers open
read-only (a tenth of loading's time, benchmarks/bench_reference_check.py), sharing one copy."""

from __future__ import annotations

import hashlib
import time
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

from pytest_graphrag_eval.graph.endpoint import EndpointError, QueryForm, QueryResult
from pytest_graphrag_eval.graph.rdf_text import canonical_ntriples, solutions_json
from pytest_graphrag_eval.graph.readonly import (
    NO_SERVICE,
    first_line,
    import_pyoxigraph,
    query_form,
    result_form,
)
from pytest_graphrag_eval.graph.service import ServicePolicy, may_call_out

RDF_EXTENSIONS = (".ttl", ".nt", ".nq", ".trig", ".n3", ".rdf", ".owl", ".xml", ".jsonld")


class EmbeddedEndpoint:
    """A pyoxigraph store (in memory, or on disk opened read-only) holding the graph of some RDF files."""

    def __init__(
        self,
        store: Any,
        path: Path,
        service: ServicePolicy = NO_SERVICE,
        identity: dict[str, Any] | None = None,
    ):
        self._store = store
        self.path = path
        self.service = service
        self.triples = len(store)
        self.loaded_at = datetime.now(UTC).isoformat(timespec="seconds")
        self._identity = identity  # of the bytes loaded; None: read from the files when described

    @classmethod
    def load(
        cls,
        path: Path,
        *,
        directory: Path | None = None,
        base_iri: str | None = None,
        service: ServicePolicy = NO_SERVICE,
    ) -> EmbeddedEndpoint:
        """Load every RDF file at `path` into memory, or into a store in `directory` (for sharing), each
        hashed, then parsed as it is read: never held whole; EndpointError names the file (and line)."""
        pyoxigraph = import_pyoxigraph()
        files = rdf_files(path)
        store = pyoxigraph.Store(str(directory)) if directory is not None else pyoxigraph.Store()
        digests = []
        for file in files:
            digests.append(_digest(file))
            try:
                with open(file, "rb") as stream:
                    store.bulk_load(
                        stream,
                        format=pyoxigraph.RdfFormat.from_extension(file.suffix[1:]),
                        base_iri=base_iri or file.resolve().as_uri(),
                    )
            except SyntaxError as error:
                where = f"{file}:{error.lineno}" if error.lineno else str(file)
                raise EndpointError(f"{where}: the RDF file does not parse: {first_line(error)}") from None
            except Exception as error:  # whatever the engine raises names the file
                raise EndpointError(f"{file}: the RDF file cannot be loaded: {first_line(error)}") from None
        if directory is not None:
            store.flush()
        return cls(store, path, service, _identity(path, files, digests))

    @classmethod
    def open_shared(
        cls, directory: Path, path: Path, service: ServicePolicy = NO_SERVICE
    ) -> EmbeddedEndpoint:
        """Open read-only the store another process loaded from `path` into `directory`."""
        pyoxigraph = import_pyoxigraph()
        try:
            store = pyoxigraph.Store.read_only(str(directory))
        except OSError as error:
            raise EndpointError(
                f"cannot open the shared graph store {directory}: {first_line(error)}"
            ) from None
        return cls(store, path, service)

    def execute(self, query: str) -> QueryResult:
        """Run a read-only query, parsed once: text that may hold SERVICE is checked by the policy first,
        the rest goes to the store, whose grammar has no Update; a text it refuses is parsed by
        `query_form` for every endpoint's refusal (QueryRefused)."""
        checked = (
            query_form(query, self.service) if not isinstance(query, str) or may_call_out(query) else None
        )
        started = time.perf_counter()
        try:
            results = self._store.query(query)
            form = checked if checked is not None else result_form(results)
            text = solutions_json(results) if form is not QueryForm.CONSTRUCT else canonical_ntriples(results)
        except Exception as error:  # anything the engine raises (a SERVICE answering HTML: RuntimeError)
            failure = first_line(error)
        else:
            return QueryResult(form, text, time.perf_counter() - started)
        # pyoxigraph's results must be freed on the thread that made them: not kept by this frame (which
        # the error's traceback holds), nor by the engine's error as context (raised outside the handler).
        results = None
        if checked is None:
            query_form(query, self.service)  # a text that is no read-only query: refused, saying why
        raise EndpointError(f"the query failed in the embedded store: {failure}")

    def describe(self) -> dict[str, Any]:
        return {
            "kind": "embedded",
            **(self._identity or files_identity(self.path)),
            "triples": self.triples,
            "loaded_at": self.loaded_at,
        }

    def close(self) -> None:
        """Release the store (an on-disk one is closed when its last reference goes)."""
        self._store = None


def files_identity(path: Path) -> dict[str, Any]:
    """The RDF files at `path` (relative names) and one SHA-256 over their names and contents."""
    files = rdf_files(path)
    return _identity(path, files, [_digest(file) for file in files])


def _identity(path: Path, files: list[Path], digests: list[bytes]) -> dict[str, Any]:
    """`files_identity` of `files` at `path`, given the SHA-256 digest of each file's contents."""
    root = path if path.is_dir() else path.parent
    digest = hashlib.sha256()
    for file, contents in zip(files, digests, strict=True):
        digest.update(_relative(file, root).encode("utf-8") + b"\0" + contents)
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
        _refuse_two_releases(path, files)
        return files
    if not path.exists():
        raise EndpointError(f"{path}: no such RDF file or folder (and not an http(s):// URL)")
    if path.suffix.lower() not in RDF_EXTENSIONS:
        raise EndpointError(
            f"{path}: not an RDF file name (its extension must be one of {', '.join(RDF_EXTENSIONS)})"
        )
    return [path]


def _refuse_two_releases(folder: Path, files: list[Path]) -> None:
    """Two RDF files of one name under a folder are two releases of one file: never merged silently."""
    first: dict[str, Path] = {}
    for file in files:
        seen = first.setdefault(file.name, file)
        if seen is not file:
            raise EndpointError(
                f"{folder}: holds {_relative(seen, folder)} and {_relative(file, folder)}, two RDF files of "
                "the same name (two releases of one graph?); loading the folder would merge them into one "
                "graph. Point --graphrag-sparql-endpoint at one of them, or at a folder holding one release"
            )


def _digest(file: Path) -> bytes:
    try:
        with open(file, "rb") as stream:
            return hashlib.file_digest(stream, "sha256").digest()
    except OSError as error:
        raise EndpointError(f"{file}: cannot read the RDF file: {error.strerror or error}") from None


def _relative(file: Path, root: Path) -> str:
    try:
        return str(file.relative_to(root))
    except ValueError:
        return str(file)
