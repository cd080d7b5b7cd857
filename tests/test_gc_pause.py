"""The collector pauses around loading and scoring give back the process's own settings."""

from __future__ import annotations

import gc
import threading

import pytest
from plugin_support import corpus, good_responses, response, write_corpus, write_responses

from pytest_graphrag_eval.aggregates import compute_aggregates
from pytest_graphrag_eval.evaluation import run_evaluation
from pytest_graphrag_eval.formats.gc_pause import paused_full_collections, paused_gc


def test_full_collections_pause_keeps_young_collections_and_restores_the_threshold() -> None:
    before = gc.get_threshold()
    young_runs: list[int] = []

    def count(phase: str, info: dict[str, int]) -> None:
        if phase == "stop":
            young_runs.append(info["generation"])

    gc.callbacks.append(count)
    try:
        with paused_full_collections():
            assert gc.get_threshold()[:2] == before[:2]
            assert gc.get_threshold()[2] > before[2]
            for _ in range(5 * before[0]):  # short-lived cycles: the young generation still collects
                cycle: list[object] = []
                cycle.append(cycle)
    finally:
        gc.callbacks.remove(count)
    assert gc.get_threshold() == before
    assert young_runs and 2 not in young_runs


def test_nested_and_concurrent_pauses_restore_the_threshold_once_all_end() -> None:
    before = gc.get_threshold()
    inside = threading.Event()
    release = threading.Event()

    def other() -> None:
        with paused_full_collections():
            inside.set()
            release.wait(10)

    thread = threading.Thread(target=other)
    thread.start()
    inside.wait(10)
    with paused_full_collections():
        with paused_full_collections():
            pass
        assert gc.get_threshold()[2] > before[2]
    assert gc.get_threshold()[2] > before[2]  # the other thread's pause is still on
    release.set()
    thread.join(10)
    assert gc.get_threshold() == before


def test_library_run_and_aggregates_leave_the_threshold_as_they_found_it() -> None:
    before = gc.get_threshold()
    corpus = [
        {"template_id": "t", "questions": [{"id": "q1", "question_text": "?", "reference_answer": "a"}]}
    ]
    results = run_evaluation(corpus, {"q1": {"actual_answer": "a"}})
    compute_aggregates(results)
    assert gc.get_threshold() == before
    assert [result["status"] for result in results] == ["success"]


def test_a_plugin_run_pauses_full_collections_until_its_config_ends(pytester: pytest.Pytester) -> None:
    """A corpus run keeps everything to its end: no full collection traverses it meanwhile."""
    write_corpus(pytester, corpus())
    write_responses(pytester, good_responses())
    pytester.makeconftest(
        "import gc, pathlib\n"
        "def pytest_sessionfinish(session):\n"
        "    pathlib.Path('threshold.txt').write_text(str(gc.get_threshold()[2]))\n"
    )
    before = gc.get_threshold()
    result = pytester.runpytest("--graphrag-corpus", "corpus.yaml", "--graphrag-responses", "responses.jsonl")
    result.assert_outcomes(passed=3)
    assert int((pytester.path / "threshold.txt").read_text()) > before[2]
    assert gc.get_threshold() == before


def test_steps_scoring_without_a_judge_makes_no_cyclic_garbage() -> None:
    """Why `run_evaluation` may pause the collector outright without a judge: nothing waits for it.

    Matches, wrong rows, unreadable outputs (an exception caught per step) and a missing step.
    """
    responses = [response("q1"), response("q2", rows=[["http://x/1", "wrong"]]), response("q3")]
    responses[2]["actual_steps"][0]["output"] = "<html>502 Bad Gateway</html>"
    answers = {r["question_id"]: r for r in responses[:3]}
    answers["q2"]["actual_steps"].append({"name": "other", "status": "error", "output": None})
    was_enabled = gc.isenabled()
    gc.collect()
    gc.disable()
    try:
        results = run_evaluation(corpus(), answers, steps_scope="all_groups")
        assert gc.collect() == 0
    finally:
        if was_enabled:
            gc.enable()
    assert [result["steps_score"] for result in results] == [1, 0, 0]
    run_evaluation(corpus(), answers)
    assert gc.isenabled() == was_enabled


def _in_generation(generation: int, target: object) -> bool:
    return any(obj is target for obj in gc.get_objects(generation=generation))


def test_what_a_paused_block_keeps_goes_to_the_oldest_generation() -> None:
    """Left young, it would be traversed by the next young and middle collections only to be found alive."""
    was_enabled = gc.isenabled()
    gc.enable()
    try:
        with paused_gc():
            kept = [[index] for index in range(1000)]
        assert _in_generation(2, kept) and _in_generation(2, kept[-1])
        assert not _in_generation(0, kept)
        assert gc.get_freeze_count() == 0
        with paused_gc():  # nested: the outer block decides, nothing moves when the inner one ends
            with paused_gc():
                young = [[1]]
            assert _in_generation(0, young)
    finally:
        if was_enabled:
            gc.enable()
        else:
            gc.disable()


def test_objects_the_process_froze_stay_frozen() -> None:
    was_enabled = gc.isenabled()
    gc.enable()
    gc.freeze()
    try:
        frozen = gc.get_freeze_count()
        with paused_gc():
            young = [[1]]
        assert gc.get_freeze_count() == frozen
        assert _in_generation(0, young)
    finally:
        gc.unfreeze()
        if not was_enabled:
            gc.disable()
