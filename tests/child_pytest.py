"""How the suite starts a pytest of its own: the plugins it leaves out, and SIGINT as at a terminal.

The [test] extra installs pytest plugins that no run a test starts needs: langsmith's comes with ragas
(through langchain) and assert-rewrote ~340 modules in every pytest process (3.6 s of a 3-question
run), hypothesis' serves the suite's own property tests only, anyio's no test. tests/conftest.py puts
`CHILD_RUN_OPTIONS` in PYTEST_ADDOPTS for every pytest a test starts; .ci/run does for the benchmarks'
runs (`python tests/child_pytest.py` prints them). A run that wants one names it (`-p NAME` unblocks).

A suite started in the background from a non-interactive shell (`pytest &`, `nohup`, some CI runners)
has SIGINT ignored, and every child inherits that disposition; Python then installs no handler, so a
child sent SIGINT goes on as if nothing happened and the test waits out its timeout. A test that sends
SIGINT therefore starts its child through `interruptible_pytest`, which gives SIGINT Python's own
handler (KeyboardInterrupt, as at a terminal) before pytest starts.
"""

from __future__ import annotations

import sys

PLUGINS_LEFT_OUT_OF_CHILD_RUNS = ("langsmith_plugin", "hypothesispytest", "anyio")
CHILD_RUN_OPTIONS = " ".join(f"-p no:{name}" for name in PLUGINS_LEFT_OUT_OF_CHILD_RUNS)
RESTORE_CTRL_C = "import signal; signal.signal(signal.SIGINT, signal.default_int_handler)"


def interruptible_pytest(*args: str) -> list[str]:
    """The command for `python -m pytest *args` in which SIGINT raises KeyboardInterrupt."""
    start = f"{RESTORE_CTRL_C}; import runpy; runpy.run_module('pytest', run_name='__main__', alter_sys=True)"
    return [sys.executable, "-c", start, *args]


if __name__ == "__main__":
    print(CHILD_RUN_OPTIONS)
