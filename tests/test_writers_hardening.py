"""Writers never crash on odd text, honour the umask, and a failed gate is the last thing a run says."""

from __future__ import annotations

import json
import os
import stat
from pathlib import Path

import pytest
from plugin_support import corpus, good_responses, write_corpus, write_responses

from pytest_graphrag_eval.formats.atomic import write_text_atomic
from pytest_graphrag_eval.report.json_report import json_text

ODD_ANSWER = "Alpha \ud800 Beta \udcff"


@pytest.mark.parametrize("umask", [0o022, 0o027, 0o077])
def test_atomic_writes_get_the_umask_mode(tmp_path: Path, umask: int) -> None:
    previous = os.umask(umask)
    try:
        write_text_atomic(tmp_path / "report.json", "{}")
    finally:
        os.umask(previous)
    assert stat.S_IMODE((tmp_path / "report.json").stat().st_mode) == 0o666 & ~umask


def test_json_text_escapes_lone_surrogates_losslessly() -> None:
    text = json_text({"answer": ODD_ANSWER, "ok": "Zürich — ✓"})
    text.encode("utf-8")  # would raise on a lone surrogate
    assert "Zürich — ✓" in text
    assert json.loads(text)["answer"] == ODD_ANSWER


def test_an_answer_with_lone_surrogates_reaches_every_writer(pytester: pytest.Pytester) -> None:
    write_corpus(pytester, corpus())
    pytester.makeconftest(
        "def pytest_graphrag_respond(question, config):\n"
        f"    return {{'actual_answer': {ODD_ANSWER!r}, 'actual_steps': []}}\n"
    )
    result = pytester.runpytest(
        "--graphrag-corpus",
        "corpus.yaml",
        "--graphrag-report",
        "report.json",
        "--graphrag-record",
        "recording.jsonl",
        "--junitxml",
        "junit.xml",
        "--graphrag-threshold",
        "steps_score>=1",
    )
    output = result.stdout.str() + result.stderr.str()
    assert "Traceback" not in output and "INTERNALERROR" not in output
    result.assert_outcomes(failed=3)
    assert "Alpha \ufffd Beta \ufffd" in output, "the printed failure stays readable"
    report = json.loads((pytester.path / "report.json").read_text(encoding="utf-8"))
    assert [entry["actual_answer"] for entry in report["results"]] == [ODD_ANSWER] * 3
    recorded = (pytester.path / "recording.jsonl").read_text(encoding="utf-8").splitlines()
    assert [json.loads(line)["actual_answer"] for line in recorded] == [ODD_ANSWER] * 3
    assert "graphrag-eval summary" in output
    assert (pytester.path / "junit.xml").stat().st_size > 0


@pytest.mark.parametrize("workers", [[], ["-n", "2"]], ids=["serial", "xdist"])
def test_a_run_failing_only_on_a_gate_says_so_last(pytester: pytest.Pytester, workers: list[str]) -> None:
    write_corpus(pytester, corpus())
    write_responses(pytester, good_responses())
    result = pytester.runpytest_subprocess(
        "--graphrag-corpus",
        "corpus.yaml",
        "--graphrag-responses",
        "responses.jsonl",
        "--graphrag-gate",
        "answer_token_f1.mean>=0.99",
        *workers,
    )
    assert result.ret == pytest.ExitCode.TESTS_FAILED
    lines = [line for line in result.stdout.lines if line.strip()]
    assert "3 passed, 1 gate failed" in lines[-1]
    assert lines[-3] == "graphrag-eval: 1 suite gate(s) FAILED, so this run fails:"
    assert lines[-2].strip().startswith("FAIL  micro:answer_token_f1.mean")


def test_a_passing_gate_leaves_the_final_line_alone(pytester: pytest.Pytester) -> None:
    write_corpus(pytester, corpus())
    write_responses(pytester, good_responses())
    result = pytester.runpytest(
        "--graphrag-corpus",
        "corpus.yaml",
        "--graphrag-responses",
        "responses.jsonl",
        "--graphrag-gate",
        "steps_score.mean>=0.9",
    )
    assert result.ret == pytest.ExitCode.OK
    assert "gate failed" not in result.stdout.str()


def test_a_report_folder_broken_during_the_run_fails_the_run_with_one_line(pytester: pytest.Pytester) -> None:
    write_corpus(pytester, corpus())
    write_responses(pytester, good_responses())
    pytester.makeconftest(
        "from pathlib import Path\n"
        "def pytest_collection_finish(session):\n"
        "    Path('out').write_text('a file where the report folder should be')\n"
    )
    result = pytester.runpytest(
        "--graphrag-corpus",
        "corpus.yaml",
        "--graphrag-responses",
        "responses.jsonl",
        "--graphrag-report",
        "out/r.json",
    )
    output = result.stdout.str() + result.stderr.str()
    assert "Traceback" not in output and "INTERNALERROR" not in output
    assert result.ret == pytest.ExitCode.TESTS_FAILED
    result.stdout.fnmatch_lines(["graphrag-eval: could not write the JSON report *out/r.json: *"])


def test_each_written_file_is_named_once_at_the_end_like_junitxml(pytester: pytest.Pytester) -> None:
    write_corpus(pytester, corpus())
    write_responses(pytester, good_responses())
    result = pytester.runpytest(
        "--graphrag-corpus=corpus.yaml",
        "--graphrag-responses=responses.jsonl",
        "--graphrag-report=out/r.json",
        "--graphrag-html=out/r.html",
        "--graphrag-markdown=out/r.md",
        "--junitxml=out/junit.xml",
    )
    assert result.ret == pytest.ExitCode.OK
    generated = [line for line in result.outlines if " generated " in line]
    assert len(generated) == 4, generated
    assert generated[-1].strip("- ").startswith("generated xml file: ")  # pytest's line, for comparison
    for line, what, name in zip(
        generated[:-1],
        ("JSON report", "Markdown summary", "HTML report"),
        ("r.json", "r.md", "r.html"),
        strict=True,
    ):
        assert line.startswith("-") and line.endswith("-")
        shown = line.strip("- ").removeprefix(f"generated graphrag-eval {what}: ")
        assert Path(shown).name == name and Path(shown).is_file()
    assert not any(line.startswith("report: ") for line in result.outlines)  # the old line, once per run


def test_a_file_that_could_not_be_written_is_not_announced(pytester: pytest.Pytester) -> None:
    write_corpus(pytester, corpus())
    write_responses(pytester, good_responses())
    pytester.makeconftest(
        "from pathlib import Path\n"
        "def pytest_collection_finish(session):\n"
        "    Path('blocked').write_text('a file where the summary folder should be')\n"
    )
    result = pytester.runpytest(
        "--graphrag-corpus=corpus.yaml",
        "--graphrag-responses=responses.jsonl",
        "--graphrag-report=out/r.json",
        "--graphrag-markdown=blocked/r.md",
    )
    output = result.stdout.str()
    assert "generated graphrag-eval JSON report" in output
    assert "generated graphrag-eval Markdown summary" not in output
    assert result.ret == pytest.ExitCode.TESTS_FAILED
