"""Regenerating a corpus after a graph release: surviving ids kept, changed references updated, new
and retired questions reported; from the embedded store and from a real Oxigraph server on loopback.

Release 2 of the example grid moves SAUDA from bidding zone NO2 to NO5 and adds a third transformer
at HAMAR: of the 34 questions "transformers of substation S in zone Z", HAMAR's changes, SAUDA's in
NO2 is retired and SAUDA's in NO5 is new.
"""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import pytest
import yaml
from generate_support import RELEASE_1, RELEASE_2, corpus_command, transformers_by_zone
from oxigraph_server import OxigraphServer

from pytest_graphrag_eval.generate.answer_reader import rows_of
from pytest_graphrag_eval.graph.factory import open_endpoint


def questions(path: Path) -> dict[str, dict]:
    return {
        question["id"]: question
        for template in yaml.safe_load(path.read_text("utf-8"))
        for question in template["questions"]
    }


def regenerate(
    tmp_path: Path, first: str, second: str, capsys: pytest.CaptureFixture[str]
) -> tuple[dict, dict, str]:
    templates = transformers_by_zone(tmp_path)
    out = tmp_path / "corpus.yaml"
    assert corpus_command("generate", templates, "--sparql-endpoint", first, "--out", out) == 0
    before = questions(out)
    capsys.readouterr()
    assert corpus_command("generate", templates, "--sparql-endpoint", second, "--out", out) == 0
    return before, questions(out), capsys.readouterr().out


def check_release_2(before: dict, after: dict, printed: str) -> None:
    assert len(before) == len(after) == 34
    assert set(before) - set(after) == {"trafos-no2-sauda"}
    assert set(after) - set(before) == {"trafos-no5-sauda"}
    for ident in set(before) & set(after):  # a survivor keeps its id, text and everything but its outputs
        assert after[ident]["question_text"] == before[ident]["question_text"]
        assert after[ident]["provenance"]["bindings"] == before[ident]["provenance"]["bindings"]
    changed = [
        ident
        for ident in set(before) & set(after)
        if before[ident]["reference_steps"] != after[ident]["reference_steps"]
    ]
    assert changed == ["trafos-no1-hamar"]
    assert after["trafos-no1-hamar"]["reference_answer"] == "HAMAR T1, HAMAR T2, HAMAR T3"
    assert before["trafos-no1-hamar"]["reference_answer"] == "HAMAR T1, HAMAR T2"
    assert "since the previous corpus: 32 unchanged, 1 updated, 1 new, 1 retired" in printed
    assert "  updated: trafos-no1-hamar\n  new: trafos-no5-sauda\n  retired: trafos-no2-sauda\n" in printed


def test_regeneration_on_release_2_keeps_ids_updates_and_reports(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    before, after, printed = regenerate(tmp_path, str(RELEASE_1), str(RELEASE_2), capsys)
    check_release_2(before, after, printed)
    release_1, release_2 = (
        before["trafos-no1-hamar"]["provenance"]["graph"],
        after["trafos-no1-hamar"]["provenance"]["graph"],
    )
    assert release_1.startswith("sha256:") and release_2.startswith("sha256:") and release_1 != release_2


def test_every_stored_output_is_the_query_result_on_the_release_it_came_from(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    _, after, _ = regenerate(tmp_path, str(RELEASE_1), str(RELEASE_2), capsys)
    endpoint = open_endpoint(str(RELEASE_2))
    try:
        for question in after.values():
            step = question["reference_steps"][1][0]
            assert endpoint.execute(step["args"]["query"]).text == step["output"]
            names = [row["trafoName"]["value"] for row in rows_of(step["output"])[1]]
            assert question["reference_answer"] == ", ".join(names)
    finally:
        endpoint.close()


def test_a_sample_keeps_its_questions_while_the_graph_supports_them(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    templates = transformers_by_zone(tmp_path, "sample: {count: 6, seed: 11, stratify: zone}")
    out = tmp_path / "corpus.yaml"
    assert corpus_command("generate", templates, "--sparql-endpoint", RELEASE_1, "--out", out) == 0
    first = questions(out)
    zones = sorted({question["provenance"]["bindings"]["zone"] for question in first.values()})
    assert len(first) == 6 and zones == ["NO1", "NO2", "NO3", "NO4", "NO5"]  # stratified: every zone
    # Regenerated on release 1 with another seed: the previous questions are tried first, so all stay.
    templates.write_text(templates.read_text("utf-8").replace("seed: 11", "seed: 12"), encoding="utf-8")
    assert corpus_command("generate", templates, "--sparql-endpoint", RELEASE_1, "--out", out) == 0
    assert set(questions(out)) == set(first)
    assert corpus_command("generate", templates, "--sparql-endpoint", RELEASE_2, "--out", out) == 0
    second = questions(out)
    assert len(second) == 6
    assert set(first) - {"trafos-no2-sauda"} <= set(second)  # every survivor the graph still supports


@pytest.fixture(scope="module")
def servers() -> Iterator[tuple[OxigraphServer, OxigraphServer]]:
    with OxigraphServer([RELEASE_1]) as first, OxigraphServer([RELEASE_2]) as second:
        yield first, second


def test_regeneration_through_an_oxigraph_server(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], servers: tuple[OxigraphServer, OxigraphServer]
) -> None:
    before, after, printed = regenerate(tmp_path, servers[0].url, servers[1].url, capsys)
    check_release_2(before, after, printed)
    graph = after["trafos-no1-hamar"]["provenance"]["graph"]
    assert graph.startswith(servers[1].url) and graph.endswith(" triples)")
    # The server's outputs are the embedded store's, byte for byte.
    embedded = tmp_path / "embedded"
    embedded.mkdir()
    _, from_files, _ = regenerate(embedded, str(RELEASE_1), str(RELEASE_2), capsys)
    for ident, question in after.items():
        assert question["reference_steps"] == from_files[ident]["reference_steps"]
