"""PageBuilding: a large HTML page built by two forked children is the page `page_bytes` builds,
also with its drill-downs begun ahead from the results (`DrillDownsAhead`), which it takes only for
a report they are the drill-downs of; and drill-downs packed chunk by chunk are the same bytes as
packed whole.

The PageBuilding cases run in a fresh interpreter (`run_fresh`): a test process has other threads,
and with another thread running nothing is forked.
"""

from __future__ import annotations

import base64
import gzip
import io

import pytest
from test_forked_work import FRESH_PROCESS_CAN_FORK, run_fresh

from pytest_graphrag_eval.report.html_report import render
from pytest_graphrag_eval.report.html_report.render import (
    DrillDownsAhead,
    detail_lines,
    pack_details,
    pack_lines,
)

REPORT = """
    from pytest_graphrag_eval.report.html_report import PageBuilding, page_bytes

    def result(index):
        text = "é </script> answer " + str(index) + ("\\ud800" if index == 7 else "")
        return {
            "template_id": f"t{index % 13}",
            "question_id": f"q{index}",
            "question_text": text,
            "actual_answer": text,
            "reference_answer": "ref",
            "status": "success" if index % 11 else "error",
            "outcome": "passed" if index % 3 else "failed",
            "answer_f1": (index % 10) / 10,
            "reference_steps": [[{"name": "retrieval", "args": {"query": "q"}, "output": "o"}]],
            "actual_steps": [{"id": "s1", "name": "retrieval", "status": "success", "output": text}],
        }

    def report(questions):
        return {
            "format_version": 2,
            "results": [result(index) for index in range(questions)],
            "metadata": {"steps_scope": "last_group"},
            "aggregates": {},
            "gates": [],
        }
"""


forks = pytest.mark.skipif(not FRESH_PROCESS_CAN_FORK, reason="fork on Linux with two cores or more")


def with_report(code: str) -> list[str]:
    """`code` run in a fresh interpreter after `REPORT`; the lines it printed."""
    return run_fresh(REPORT + code)


@pytest.mark.parametrize(
    ("questions", "forked"),
    [
        pytest.param(
            1_200,
            True,
            marks=forks,
        ),
        (20, False),  # a small page is built in this process
    ],
)
def test_a_page_built_by_two_children_or_here_is_the_page_built_here(questions: int, forked: bool) -> None:
    lines = with_report(
        f"""
    built = report({questions})
    with PageBuilding(built) as building:
        print(building.forked)
        page = building.result()
    print(page == page_bytes(built), b"\\\\ud800" in page)
    """
    )
    assert lines == [str(forked), "True", "True"]


@forks
def test_drill_downs_begun_ahead_make_the_page_built_here_and_only_for_their_own_report() -> None:
    lines = with_report(
        """
    from pytest_graphrag_eval.report.html_report import DrillDownsAhead

    built = report(1_200)
    # the report as the run finishes it: a new list of the very results, and more metadata
    finished = {**built, "results": list(built["results"]), "metadata": {**built["metadata"], "graph": "g"}}
    other_scope = {**finished, "metadata": {"steps_scope": "all"}}
    for final in (finished, other_scope):
        with DrillDownsAhead.start(built["results"], built["metadata"]) as ahead:
            print(ahead.work.forked, ahead.serves(final))
            with PageBuilding(final, ahead) as building:
                print(building.result() == page_bytes(final))
    """
    )
    assert lines == ["True", "True", "True", "True", "False", "True"]


@forks
def test_drill_downs_begun_with_question_changes_make_the_page_of_a_report_with_that_comparison() -> None:
    lines = with_report(
        """
    from pytest_graphrag_eval.report.html_report import DrillDownsAhead

    built = report(1_200)
    changes = [
        {
            "question_id": result["question_id"],
            "template_id": result["template_id"],
            "classification": "regressed" if index % 7 == 0 else "unchanged",
            "baseline_outcome": "passed",
            "current_outcome": result["outcome"],
            "deltas": {"answer_f1": {"baseline": 1.0, "current": result["answer_f1"], "delta": -0.5}},
        }
        for index, result in enumerate(built["results"])
    ]
    comparison = {"questions": [dict(change) for change in changes], "regressed": [], "metrics": {}}
    finished = {**built, "results": list(built["results"]), "comparison": comparison}
    edited = [*changes[:-1], {**changes[-1], "classification": "fixed"}]
    other = {**finished, "comparison": {**comparison, "questions": edited}}
    for final in (finished, other):
        with DrillDownsAhead.start(built["results"], built["metadata"], changes) as ahead:
            print(ahead.work.forked, ahead.serves(final))
            with PageBuilding(final, ahead) as building:
                print(building.result() == page_bytes(final))
    """
    )
    assert lines == ["True", "True", "True", "True", "False", "True"]


def test_drill_downs_begun_ahead_serve_only_a_report_of_the_same_results_without_more() -> None:
    results: list[dict[str, object]] = [
        {"template_id": "t", "question_id": f"q{index}"} for index in range(3)
    ]
    ahead = DrillDownsAhead(results, {"steps_scope": "last_group"})
    own = {"results": list(results), "metadata": {"steps_scope": "last_group", "graph": "g"}}
    assert ahead.serves(own)
    assert not ahead.serves({**own, "comparison": {"questions": []}})  # a change in each drill-down
    assert not ahead.serves({**own, "history": {"runs": []}})  # past outcomes in each drill-down
    assert not ahead.serves({**own, "metadata": {"steps_scope": "all"}})
    assert not ahead.serves({**own, "results": [*results[:2], dict(results[2])]})  # an equal copy is not them
    assert not ahead.serves({**own, "results": results[:2]})
    assert not ahead.serves({"results": results})  # no metadata: the scope is not the same
    assert DrillDownsAhead.start(results, {}) is None  # a small report's page is built when asked for


def test_drill_downs_begun_with_question_changes_serve_only_a_comparison_of_those_changes() -> None:
    results: list[dict[str, object]] = [
        {"template_id": "t", "question_id": f"q{index}"} for index in range(3)
    ]
    changes = [
        {"template_id": "t", "question_id": f"q{index}", "classification": "fixed"} for index in range(3)
    ]
    ahead = DrillDownsAhead(results, {"steps_scope": "last_group"}, changes)
    own = {
        "results": list(results),
        "metadata": {"steps_scope": "last_group"},
        "comparison": {"questions": [dict(change) for change in changes], "metrics": {"f1": {}}},
    }
    assert ahead.serves(own)  # equal changes; the comparison's statistics are not in a drill-down
    assert not ahead.serves({**own, "comparison": None})
    assert not ahead.serves({**own, "comparison": {"questions": changes[:2]}})
    assert not ahead.serves(
        {**own, "comparison": {"questions": [*changes[:2], {**changes[2], "deltas": {}}]}}
    )
    assert not ahead.serves({**own, "history": {"runs": []}})


@forks
def test_a_malformed_large_report_fails_as_the_page_built_here_does() -> None:
    """The children fail; the page is then built here, and raises the error that names the field."""
    lines = with_report(
        """
    from pytest_graphrag_eval.errors import InputError
    broken = report(1_200)
    del broken["results"][5]["template_id"]
    messages = []
    for build in (lambda: PageBuilding(broken).result(), lambda: page_bytes(broken)):
        try:
            build()
        except InputError as error:
            messages.append(str(error))
    print(len(messages) == 2 and messages[0] == messages[1], "template_id" in messages[0])
    """
    )
    assert lines == ["True", "True"]


@pytest.mark.parametrize("questions", [0, 1, 499, 500, 501, 1_001])
def test_drill_downs_packed_chunk_by_chunk_are_the_lines_packed_whole(questions: int) -> None:
    details = [
        {"question_text": f"é {index} </script>", "scores": [["f1", index / 7]]} for index in range(questions)
    ]
    lines = detail_lines(details)
    packed = pack_details(details[start : start + 500] for start in range(0, len(details), 500))
    assert packed == pack_lines(lines)
    assert gzip.decompress(base64.b64decode(packed)) == lines


def test_without_the_speed_extra_the_drill_downs_are_packed_by_the_standard_library(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """zlib-ng (`speed`) and zlib deflate to other bytes; both are gzip the page inflates alike."""
    details = [{"question_text": f"q {index}", "answer": "yes " * (index % 9)} for index in range(1_200)]
    chunks = [details[start : start + 500] for start in range(0, len(details), 500)]
    lines = detail_lines(details)
    packed = pack_details(iter(chunks))
    monkeypatch.setattr(render, "GZIP_WRITER", gzip.GzipFile)
    by_zlib = pack_details(iter(chunks))
    assert by_zlib == pack_lines(lines)
    whole = io.BytesIO()
    with gzip.GzipFile(fileobj=whole, mode="wb", compresslevel=6, mtime=0) as stream:
        stream.write(lines)
    assert base64.b64decode(by_zlib) == whole.getvalue()
    assert gzip.decompress(base64.b64decode(packed)) == gzip.decompress(base64.b64decode(by_zlib)) == lines
    assert packed != by_zlib  # the extra is installed here: the page's packed bytes are zlib-ng's


@pytest.mark.parametrize("chunk", [1, 500, 777, 3_000])
def test_drill_downs_over_several_deflate_blocks_pack_alike_however_they_are_chunked(chunk: int) -> None:
    """zlib-ng's bytes depend on the pieces it is given: it is always given the same ones."""
    details = [{"question_text": f"question {index} " + "x" * (index % 1_500)} for index in range(3_000)]
    lines = detail_lines(details)
    assert len(lines) > 2 * render._DEFLATE_BLOCK
    packed = pack_details(details[start : start + chunk] for start in range(0, len(details), chunk))
    assert packed == pack_lines(lines)
