"""The example project's walk-through of a graph release (docs/knowledge-graph.md), run as documented.

On a copy of example_project/: release 2 of the grid (SAUDA moved from NO2 to NO5, a third
transformer at HAMAR) makes exactly the references it touches stale; updating rewrites them and
nothing else; the recording, its SPARQL steps re-executed on release 2, passes against them.
"""

from __future__ import annotations

import difflib
import json
import shutil
import subprocess
import sys
from pathlib import Path

import pytest
import yaml

ROOT = Path(__file__).resolve().parents[1]
STALE_ON_RELEASE_2 = [
    "transformers-hamar",  # HAMAR T3 added
    "zone-no2",  # SAUDA left NO2...
    "zone-no5",  # ...for NO5
    "ac-lines-no2-no5",  # the lines between the zones changed with it
    "capacity-no1",  # HAMAR is in NO1: one more transformer, 250 MVA more
    "capacity-no2",  # SAUDA's two transformers left NO2
    "largest-capacity-zone",
]


@pytest.fixture
def example(tmp_path: Path) -> Path:
    copy = tmp_path / "example_project"
    shutil.copytree(ROOT / "example_project", copy, ignore=shutil.ignore_patterns("reports", "__pycache__"))
    return copy


def run(example: Path, *args: str) -> subprocess.CompletedProcess[str]:
    command = [sys.executable, "-m", "pytest", "-q", "-p", "no:cacheprovider"]
    command += [
        "--graphrag-responses",
        "recordings/responses.jsonl",
        "--graphrag-report",
        "report.json",
        *args,
    ]
    return subprocess.run(command, cwd=example, capture_output=True, text=True, check=False)


def report(example: Path) -> dict:
    return json.loads((example / "report.json").read_text(encoding="utf-8"))


@pytest.mark.parametrize("workers", [None, "2"], ids=["serial", "xdist"])
def test_check_references_finds_the_questions_the_release_touched(example: Path, workers: str | None) -> None:
    release_2 = ["--graphrag-sparql-endpoint", "grid/release-2/grid.ttl"]
    fresh = run(example, "--graphrag-sparql-endpoint", "grid/grid.ttl", "--graphrag-check-references")
    assert report(example)["references"]["stale_references"] == 0, fresh.stdout
    extra = ["-n", workers] if workers else []
    checked = run(
        example, *release_2, "--graphrag-check-references", "--graphrag-gate", "stale_references<=0", *extra
    )
    assert checked.returncode == 1
    section = report(example)["references"]
    assert [entry["question_id"] for entry in section["stale"]] == STALE_ON_RELEASE_2
    assert section["graph"]["location"] == "grid/release-2/grid.ttl"
    assert "STALE  zone-no2 reference_steps[1][0]: 1 row removed (substation=" in checked.stdout


def test_update_references_then_execute_agent_rescores_the_recording(example: Path) -> None:
    release_2 = ["--graphrag-sparql-endpoint", "grid/release-2/grid.ttl"]
    before = (example / "corpus.yaml").read_text(encoding="utf-8")
    updated = run(example, *release_2, "--graphrag-update-references")
    assert updated.stdout.count("updated corpus.yaml: ") == len(STALE_ON_RELEASE_2), updated.stdout
    after = (example / "corpus.yaml").read_text(encoding="utf-8")
    # Only output lines changed: the comments, queries, ids and answers are the same text.
    changed = [
        line
        for line in difflib.unified_diff(before.splitlines(), after.splitlines(), lineterm="", n=0)
        if line[:1] in "+-" and not line.startswith(("+++", "---"))
    ]
    assert changed and all(
        line[1:].lstrip().startswith(("output: '", '"', "{", "'")) or line[1:].startswith("          ")
        for line in changed
    ), changed
    assert (
        yaml.safe_load(before)[0]["questions"][0]["question_text"]
        == yaml.safe_load(after)[0]["questions"][0]["question_text"]
    )
    # Fresh now; but the recording was made on release 1: its SPARQL outputs no longer match them...
    stale_recording = run(example, *release_2, "--graphrag-check-references")
    assert report(example)["references"]["stale_references"] == 0
    assert stale_recording.returncode == 1
    # ...until its queries are re-executed on release 2, with no agent call.
    rescored = run(example, *release_2, "--graphrag-execute", "agent")
    assert rescored.returncode == 0, rescored.stdout
    graph = report(example)["metadata"]["graph"]
    assert graph["location"] == "grid/release-2/grid.ttl" and graph["execute"] == "agent"


def test_release_2_graph_is_what_the_generator_writes() -> None:
    sys.path.insert(0, str(ROOT / "example_project" / "scripts"))
    try:
        import build_graph
    finally:
        sys.path.pop(0)
    committed = (ROOT / "example_project" / "grid" / "release-2" / "grid.ttl").read_text(encoding="utf-8")
    assert build_graph.build_turtle(2) == committed
    sys.modules.pop("build_graph", None)
    sys.modules.pop("example_files", None)
