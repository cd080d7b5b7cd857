"""The same bad files through the library API: our own exception types, with the same located messages."""

from __future__ import annotations

from pathlib import Path

import pytest
from cases import CASES, Case

from pytest_graphrag_eval.corpus.reference_corpus import load_corpora, load_corpus
from pytest_graphrag_eval.corpus.responses import load_responses
from pytest_graphrag_eval.errors import GraphragEvalError
from pytest_graphrag_eval.evaluation import run_evaluation
from pytest_graphrag_eval.gates.suite_gates import gates_from_yaml
from pytest_graphrag_eval.gates.thresholds import parse_corpus_thresholds

LIBRARY_CASES = [case for case in CASES if case.library is not None]


def _write(tmp_path: Path, case: Case) -> None:
    for name, content in case.all_files().items():
        path = tmp_path / name
        path.parent.mkdir(parents=True, exist_ok=True)
        if isinstance(content, bytes):
            path.write_bytes(content)
        else:
            path.write_text(content, encoding="utf-8")


def _responses_path(case: Case) -> Path:
    args = list(case.args)
    return Path(args[args.index("--graphrag-responses") + 1])


def _load(case: Case) -> None:
    if case.library == "corpus":
        load_corpus("corpus.yaml")
    elif case.library == "corpus_settings":
        corpus = load_corpus("corpus.yaml")
        parse_corpus_thresholds(corpus)
        gates_from_yaml(corpus.settings.get("gates"), corpus.templates[0].location)
    elif case.library == "corpora":
        load_corpora(sorted(Path("corpus").glob("*.yaml")))
    elif case.library == "responses":
        load_responses(_responses_path(case))
    else:
        raise AssertionError(f"unknown library kind {case.library!r}")


@pytest.mark.parametrize("case", LIBRARY_CASES, ids=[case.id for case in LIBRARY_CASES])
def test_library_raises_our_error_or_reports_the_question(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, case: Case
) -> None:
    for name, value in case.env.items():
        monkeypatch.setenv(name, value)
    _write(tmp_path, case)
    monkeypatch.chdir(tmp_path)  # relative paths, so messages name files as the plugin shows them
    expected = list(case.expect)
    if case.library == "result":
        corpus = load_corpus("corpus.yaml")
        results = run_evaluation(corpus, load_responses(_responses_path(case)))
        failed = next(result for result in results if result["question_id"] == case.failed_question)
        text = "\n".join(f"{key}: {value}" for key, value in failed.items())
        expected = [fragment for fragment in expected if fragment != "corpus.yaml"]
    else:
        with pytest.raises(GraphragEvalError) as raised:
            _load(case)
        text = str(raised.value)
    for fragment in expected:
        assert fragment in text, f"{fragment!r} missing from: {text}"


def test_run_evaluation_rejects_bad_in_memory_input() -> None:
    from plugin_support import corpus, good_responses

    data = corpus()
    data[1]["template_id"] = "names"
    with pytest.raises(GraphragEvalError, match="duplicate template id"):
        run_evaluation(data, {})
    responses = {r["question_id"]: r for r in good_responses()}
    responses["q2"]["elapsed_sec"] = float("nan")
    with pytest.raises(GraphragEvalError, match="question 'q2', field 'elapsed_sec'"):
        run_evaluation(corpus(), responses)
