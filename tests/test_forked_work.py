"""ForkedWork: work done by a forked child, or here; its value and its errors are the same either way.

Each case runs in a fresh interpreter: a test process has other threads (xdist's, pytester's), and
with another thread running nothing is forked (its locks would be inherited held).
"""

from __future__ import annotations

import os
import subprocess
import sys
import textwrap

import pytest

from pytest_graphrag_eval.forked_work import ForkedWork, forking_helps

FRESH_PROCESS_CAN_FORK = sys.platform == "linux" and len(os.sched_getaffinity(0)) > 1


def run_fresh(code: str) -> list[str]:
    """Run `code` in a fresh interpreter; the lines it printed."""
    done = subprocess.run(
        [sys.executable, "-c", textwrap.dedent(code)],
        capture_output=True,
        text=True,
        check=False,
        timeout=600,
    )
    assert done.returncode == 0, done.stderr
    return done.stdout.split()


@pytest.mark.skipif(not FRESH_PROCESS_CAN_FORK, reason="fork on Linux with two cores or more")
def test_the_work_is_done_by_a_child_process_and_its_value_comes_back() -> None:
    lines = run_fresh(
        """
        import os
        from pytest_graphrag_eval.forked_work import ForkedWork, forking_helps
        print(forking_helps())
        with ForkedWork(lambda: {"pid": os.getpid(), "text": "é" * 100_000}) as work:
            print(work.forked)
            value = work.result()
        print(value["pid"] != os.getpid(), value["text"] == "é" * 100_000)
        """
    )
    assert lines == ["True", "True", "True", "True"]


@pytest.mark.skipif(not FRESH_PROCESS_CAN_FORK, reason="fork on Linux with two cores or more")
def test_a_child_that_fails_leaves_the_work_to_this_process() -> None:
    """The child's failure (here: only in the child) is not the answer: the work is done again here."""
    lines = run_fresh(
        """
        import os
        from pytest_graphrag_eval.forked_work import ForkedWork
        parent = os.getpid()

        def work():
            if os.getpid() != parent:
                os._exit(3)  # the child dies without a word
            return "done here"

        with ForkedWork(work) as forked:
            print(forked.forked, forked.result())
        """
    )
    assert lines == ["True", "done", "here"]


@pytest.mark.skipif(not FRESH_PROCESS_CAN_FORK, reason="fork on Linux with two cores or more")
def test_the_works_error_is_raised_here_as_an_inline_call_raises_it() -> None:
    lines = run_fresh(
        """
        from pytest_graphrag_eval.forked_work import ForkedWork

        def work():
            raise ValueError("malformed input: field `x`")

        with ForkedWork(work) as forked:
            try:
                forked.result()
            except ValueError as error:
                print(forked.forked is False, str(error).replace(" ", "_"))
        """
    )
    assert lines == ["True", "malformed_input:_field_`x`"]


@pytest.mark.skipif(not FRESH_PROCESS_CAN_FORK, reason="fork on Linux with two cores or more")
def test_leaving_the_block_without_the_result_stops_the_child(tmp_path: object) -> None:
    lines = run_fresh(
        f"""
        import os, time
        from pytest_graphrag_eval.forked_work import ForkedWork
        started = {str(tmp_path / "child.pid")!r}

        def work():
            with open(started, "w") as file:
                file.write(str(os.getpid()))
            time.sleep(600)

        with ForkedWork(work):
            while not os.path.exists(started) or not open(started).read():
                time.sleep(0.01)
        pid = int(open(started).read())
        try:
            os.kill(pid, 0)
        except ProcessLookupError:
            print("stopped")
        """
    )
    assert lines == ["stopped"]


@pytest.mark.skipif(not FRESH_PROCESS_CAN_FORK, reason="fork on Linux with two cores or more")
def test_a_child_does_its_own_forked_work_itself() -> None:
    """A child is a daemon process, which may have no children: work it asks a child for is done in it,
    once, by `result()` (not tried in a grandchild, failed, and done again)."""
    lines = run_fresh(
        """
        import os
        from pytest_graphrag_eval.forked_work import ForkedWork
        parent = os.getpid()

        def inner():
            with ForkedWork(os.getpid) as work:
                return os.getpid(), work.forked, work.result()

        with ForkedWork(inner) as outer:
            child, forked, worker = outer.result()
        print(child != parent, forked, worker == child)
        """
    )
    assert lines == ["True", "False", "True"]


def test_with_another_thread_running_the_work_is_done_here() -> None:
    lines = run_fresh(
        """
        import os, threading
        from pytest_graphrag_eval.forked_work import ForkedWork, forking_helps
        stop = threading.Event()
        thread = threading.Thread(target=stop.wait)
        thread.start()
        with ForkedWork(os.getpid) as work:
            print(forking_helps(), work.forked, work.result() == os.getpid())
        stop.set()
        thread.join()
        """
    )
    assert lines == ["False", "False", "True"]


def test_in_this_test_process_the_value_is_the_same() -> None:
    """Here (threads running, or one core) or forked, the caller gets the value of `work()`."""
    with ForkedWork(lambda: [1, "two", {"three": 3.0}]) as work:
        assert work.forked is forking_helps()
        assert work.result() == [1, "two", {"three": 3.0}]
