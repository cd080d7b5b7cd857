"""The files a command reads and writes are checked together before any work, by the plugin's rule
(`options.files.check_files`): an output over a file the command reads (a shard, the history, the
labels, the input TSV), two outputs on one file, or an output whose folder cannot be made is refused
naming both options, exit status 2, and every file is left as it was (issue 42)."""

from __future__ import annotations

from collections.abc import Callable, Sequence
from pathlib import Path

import pytest
from history_support import run_report

from pytest_graphrag_eval.commands import answer, corpus, history, judge, merge
from pytest_graphrag_eval.history.store import open_history
from pytest_graphrag_eval.run.merge import merge_shard_reports

pytest_plugins = ["pytester"]

Main = Callable[[Sequence[str]], int]


def recorded_history(folder: Path) -> Path:
    url = folder / "history.db"
    with open_history(str(url)) as store:
        store.record_run(run_report(1), merge_shards=merge_shard_reports)
    return url


def refused(main: Main, argv: Sequence[str], capsys: pytest.CaptureFixture[str]) -> str:
    status = main(argv)
    err = capsys.readouterr().err
    assert status == 2, err
    assert "Traceback" not in err
    return err


def unchanged(folder: Path, before: dict[str, bytes]) -> None:
    assert snapshot(folder) == before


def snapshot(folder: Path) -> dict[str, bytes]:
    return {path.name: path.read_bytes() for path in folder.iterdir()}


@pytest.mark.parametrize(
    ("output", "expected"),
    [
        ("shard-1.json", "--report and a shard name one file"),
        ("history.db", "--report and --history name one file"),
    ],
)
def test_the_merge_never_writes_its_report_over_a_file_it_reads(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], output: str, expected: str
) -> None:
    """The merged report replaced the first shard, and over the history it left a broken database."""
    recorded_history(tmp_path)
    for index in (1, 2):
        (tmp_path / f"shard-{index}.json").write_text(f"shard {index}", encoding="utf-8")
    before = snapshot(tmp_path)
    shards = [str(tmp_path / "shard-1.json"), str(tmp_path / "shard-2.json")]
    argv = [*shards, "--history", str(tmp_path / "history.db"), "--report", str(tmp_path / output)]

    err = refused(merge.merge_main, argv, capsys)

    assert f"graphrag-eval-merge: error: {expected}, {tmp_path / output}: give each its own" in err
    unchanged(tmp_path, before)


@pytest.mark.parametrize("flag", ["--report", "--markdown", "--html"])
def test_the_merge_refuses_an_output_it_cannot_write_before_reading_the_shards(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], flag: str
) -> None:
    """It merged first, then said it could not write the file; the same for a folder given as the file."""
    (tmp_path / "afile").write_text("", encoding="utf-8")
    (tmp_path / "folder").mkdir()
    missing_shard = str(tmp_path / "no-such-shard.json")  # read only after the outputs are checked

    err = refused(merge.merge_main, [missing_shard, flag, str(tmp_path / "afile" / "out")], capsys)
    assert f"error: {flag} {tmp_path / 'afile' / 'out'}: {tmp_path / 'afile'} is a file" in err
    err = refused(merge.merge_main, [missing_shard, flag, str(tmp_path / "folder")], capsys)
    assert f"error: {flag} {tmp_path / 'folder'}: is a folder; give a file name" in err


def test_history_report_never_writes_over_the_history(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    url = recorded_history(tmp_path)
    before = url.read_bytes()

    err = refused(history.main, [str(url), "report", "last", "--html", str(url)], capsys)

    assert f"error: --html and the history name one file, {url}: give each its own" in err
    assert url.read_bytes() == before


def test_answer_correctness_never_writes_over_its_input(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    table = tmp_path / "in.tsv"
    table.write_text("Question\tReference answer\tActual answer\nq?\tNO1\tNO1\n", encoding="utf-8")
    before = snapshot(tmp_path)

    argv = ["-i", str(table), "-o", str(table), "--judge", "lexical"]
    err = refused(answer.answer_correctness_main, argv, capsys)

    assert f"error: --output and --input name one file, {table}: give each its own" in err
    unchanged(tmp_path, before)


@pytest.mark.parametrize("read", ["--labels", "--corpus", "--reviews", "--answers-config"])
def test_the_judge_command_never_writes_its_report_over_a_file_it_reads(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], read: str
) -> None:
    for name in ("corpus.yaml", "labels.yaml", "reviews.yaml", "answers.yaml"):
        (tmp_path / name).write_text("[]\n", encoding="utf-8")
    before = snapshot(tmp_path)
    files = {flag: str(tmp_path / f"{flag[2:].split('-')[0]}.yaml") for flag in (
        "--corpus", "--labels", "--reviews", "--answers-config"
    )}  # fmt: skip

    argv = [*(part for flag, path in files.items() for part in (flag, path)), "--report", files[read]]
    err = refused(judge.main, argv, capsys)

    assert f"error: --report and {read} name one file, {files[read]}: give each its own" in err
    unchanged(tmp_path, before)


def test_the_plugin_never_writes_an_output_over_its_history(pytester: pytest.Pytester) -> None:
    history_file = recorded_history(pytester.path)
    before = history_file.read_bytes()

    result = pytester.runpytest(
        "--graphrag-history=history.db", "--graphrag-markdown=history.db", "-p", "no:cacheprovider"
    )

    assert result.ret == pytest.ExitCode.USAGE_ERROR
    result.stderr.fnmatch_lines(
        ["*--graphrag-markdown (ini graphrag_markdown) and --graphrag-history (ini graphrag_history) "
         "name one file*give each its own*"]
    )  # fmt: skip
    assert history_file.read_bytes() == before


@pytest.mark.parametrize("command", ["generate", "coverage"])
def test_the_corpus_command_refuses_an_output_it_cannot_write_before_loading_the_graph(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], command: str
) -> None:
    """--out under a file ended in a FileExistsError traceback once the corpus was generated."""
    (tmp_path / "afile").write_text("", encoding="utf-8")
    (tmp_path / "read.yaml").write_text("[]\n", encoding="utf-8")
    read, output = str(tmp_path / "read.yaml"), str(tmp_path / "afile" / "out")
    flag = "--out" if command == "generate" else "--html"
    argv = [command, read, "--sparql-endpoint", str(tmp_path / "no-graph.ttl"), flag]

    err = refused(corpus.main, [*argv, output], capsys)
    assert f"error: {flag} {output}: {tmp_path / 'afile'} is a file" in err
    err = refused(corpus.main, [*argv, read], capsys)
    assert f"error: {flag} and " in err and f"name one file, {read}: give each its own" in err
    assert (tmp_path / "read.yaml").read_text(encoding="utf-8") == "[]\n"
