"""The sdist carries a test suite that collects and runs: the tests with their conftest and data.

It is built as a release would be (`python -m build --sdist`) from the files git tracks (as they are in
the working tree, edits included), so that what the project declares decides its content, not what a
contributor's tools left beside it (a `.coverage`, a `.report.json`); unpacked, its files are compared with
the tracked files; pytest then collects the whole suite from the unpacked tree, the same tests as from
the repository, and runs the tests that read the docs, the example project and the data files.
"""

from __future__ import annotations

import re
import shutil
import subprocess
import sys
import tarfile
from pathlib import Path

import pytest

pytestmark = pytest.mark.slow

ROOT = Path(__file__).resolve().parent.parent
# Written by the build from pyproject.toml: not tracked in git.
BUILD_METADATA = re.compile(r"^(PKG-INFO|setup\.cfg|pytest_graphrag_eval\.egg-info/.*)$")
# Tests that read what a bare package would lack: the docs, README, .ci scripts, example project, data.
READERS = [
    "tests/test_docs_links.py",
    "tests/test_readme_consistency.py",
    "tests/test_evaluation_seed_examples.py",
    "tests/test_example_reports_stable.py",
]


def _tracked_files() -> set[str]:
    """The files git tracks that the working tree still has (a deletion not yet committed is left out)."""
    listing = subprocess.run(["git", "ls-files", "-z"], cwd=ROOT, capture_output=True, text=True, check=True)
    return {path for path in listing.stdout.split("\0") if path and (ROOT / path).is_file()}


@pytest.fixture(scope="module")
def tracked_tree(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """A copy of the tracked files, without what is untracked or ignored in the checkout."""
    if shutil.which("git") is None or not (ROOT / ".git").exists():
        pytest.skip("builds the sdist from a git checkout")
    tree = tmp_path_factory.mktemp("tracked") / "pytest-graphrag-eval"
    for path in _tracked_files():
        (tree / path).parent.mkdir(parents=True, exist_ok=True)
        shutil.copy2(ROOT / path, tree / path)
    return tree


@pytest.fixture(scope="module")
def unpacked(tracked_tree: Path, tmp_path_factory: pytest.TempPathFactory) -> Path:
    out = tmp_path_factory.mktemp("sdist")
    built = subprocess.run(
        [sys.executable, "-m", "build", "--sdist", "--outdir", str(out), str(tracked_tree)],
        capture_output=True,
        text=True,
        timeout=600,
        check=False,
    )
    assert built.returncode == 0, built.stdout[-3000:] + built.stderr[-3000:]
    (archive,) = out.glob("*.tar.gz")
    with tarfile.open(archive) as tar:
        tar.extractall(out, filter="data")
    (tree,) = (path for path in out.iterdir() if path.is_dir())
    return tree


def _collected(where: Path, *args: str) -> tuple[int, str]:
    """How many tests pytest collects in `where` (the package imported from there), and its output."""
    completed = subprocess.run(
        [sys.executable, "-m", "pytest", "--collect-only", "-q", "-p", "no:cacheprovider", *args],
        cwd=where,
        capture_output=True,
        text=True,
        timeout=600,
        check=False,
    )
    output = completed.stdout + completed.stderr
    assert completed.returncode == 0, output[-3000:]
    match = re.search(r"^(\d+) tests? collected", output, re.MULTILINE)
    assert match, output[-3000:]
    return int(match.group(1)), output


def test_the_sdist_holds_the_source_tree_and_nothing_else(unpacked: Path) -> None:
    tracked = _tracked_files()
    shipped = {
        path.relative_to(unpacked).as_posix()
        for path in unpacked.rglob("*")
        if path.is_file() and not BUILD_METADATA.match(path.relative_to(unpacked).as_posix())
    }
    assert shipped - tracked == set()  # nothing the build makes beyond its metadata
    assert tracked - shipped == set()  # nothing MANIFEST.in leaves out


def test_the_suite_collects_from_the_sdist_as_from_the_repository(unpacked: Path, tracked_tree: Path) -> None:
    count, _ = _collected(unpacked)
    repository_count, _ = _collected(tracked_tree)
    assert count == repository_count > 1000


def test_tests_reading_docs_and_data_pass_from_the_sdist(unpacked: Path) -> None:
    completed = subprocess.run(
        [sys.executable, "-m", "pytest", "-q", "-p", "no:cacheprovider", *READERS],
        cwd=unpacked,
        capture_output=True,
        text=True,
        timeout=900,
        check=False,
    )
    assert completed.returncode == 0, completed.stdout[-4000:] + completed.stderr[-2000:]
    assert re.search(r"\d+ passed", completed.stdout)
