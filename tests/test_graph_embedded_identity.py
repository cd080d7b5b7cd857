"""The embedded graph is described as it was loaded: its content hash is taken from the bytes the store
read, so a file changed after loading does not change the fingerprint of the graph that answered."""

from __future__ import annotations

from pathlib import Path

from pytest_graphrag_eval.graph.embedded import EmbeddedEndpoint, files_identity


def test_the_content_hash_is_of_the_files_as_loaded(tmp_path: Path) -> None:
    graph = tmp_path / "graph.nt"
    graph.write_text('<urn:a> <urn:b> "loaded" .\n', encoding="utf-8")
    as_loaded = files_identity(graph)
    endpoint = EmbeddedEndpoint.load(graph)
    graph.write_text('<urn:a> <urn:b> "edited afterwards" .\n', encoding="utf-8")
    described = endpoint.describe()
    endpoint.close()
    assert described["content_hash"] == as_loaded["content_hash"] != files_identity(graph)["content_hash"]
    assert described["files"] == ["graph.nt"]
