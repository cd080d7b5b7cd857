from __future__ import annotations

import json
from pathlib import Path

import pytest
from compare_support import report, result

from pytest_graphrag_eval.compare.baseline import load_baseline
from pytest_graphrag_eval.errors import InputError


def write(tmp_path: Path, content: object) -> Path:
    path = tmp_path / "main.json"
    path.write_text(content if isinstance(content, str) else json.dumps(content), encoding="utf-8")
    return path


def test_loads_a_report(tmp_path: Path) -> None:
    data = report([result("q1"), result("q2", "failed")])
    assert load_baseline(write(tmp_path, data)) == data


def test_missing_file_names_the_path(tmp_path: Path) -> None:
    with pytest.raises(InputError, match=r"nowhere\.json: cannot read baseline report: No such file"):
        load_baseline(tmp_path / "nowhere.json")


def test_not_json_names_file_and_line(tmp_path: Path) -> None:
    path = write(tmp_path, '{"format_version": 2,\n "results": [,]}')
    with pytest.raises(InputError, match=r"main\.json:2: the baseline report is not JSON"):
        load_baseline(path)


@pytest.mark.parametrize(
    ("text", "reason"),
    [
        ('{"format_version": 2, "n": 1' + "0" * 4400 + "}", "a number of more than 4300 digits"),
        ('{"a": ' * 100_000 + "1" + "}" * 100_000, "nested too deeply"),
    ],
)
def test_json_past_pythons_bounds_names_the_file_and_the_bound(
    tmp_path: Path, text: str, reason: str
) -> None:
    """CPython refuses such text with a plain ValueError or RecursionError, not a JSONDecodeError."""
    with pytest.raises(InputError, match=rf"main\.json: the baseline report is not JSON: {reason}"):
        load_baseline(write(tmp_path, text))


@pytest.mark.parametrize(
    "content", [[1, 2], {"results": []}, {"format_version": 2}, {"format_version": "2", "results": []}]
)
def test_not_a_report(tmp_path: Path, content: object) -> None:
    with pytest.raises(InputError, match=r"main\.json"):
        load_baseline(write(tmp_path, content))


def test_version_1_asks_to_regenerate(tmp_path: Path) -> None:
    old = {"format_version": 1, "results": [{"template_id": "t1", "question_id": "q1"}]}
    with pytest.raises(InputError, match=r"format_version 1.*regenerate it"):
        load_baseline(write(tmp_path, old))


def test_bad_outcome_names_the_question(tmp_path: Path) -> None:
    data = report([result("q1", "broken")])
    with pytest.raises(InputError, match=r"template 't1', question 'q1', field 'outcome'"):
        load_baseline(write(tmp_path, data))


def test_duplicate_question(tmp_path: Path) -> None:
    data = report([result("q1"), result("q1")])
    with pytest.raises(InputError, match="appears twice"):
        load_baseline(write(tmp_path, data))


def test_result_without_ids(tmp_path: Path) -> None:
    with pytest.raises(InputError, match=r"results\[0\] has no string `question_id`"):
        load_baseline(write(tmp_path, report([{"template_id": "t1", "outcome": "passed"}])))
