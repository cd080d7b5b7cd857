"""How the suite starts a pytest of its own that a test will interrupt with SIGINT.

A suite started in the background from a non-interactive shell (`pytest &`, `nohup`, some CI runners)
has SIGINT ignored, and every child inherits that disposition; Python then installs no handler, so a
child sent SIGINT goes on as if nothing happened and the test waits out its timeout. A test that sends
SIGINT therefore starts its child through `interruptible_pytest`, which gives SIGINT Python's own
handler (KeyboardInterrupt, as at a terminal) before pytest starts.
"""

from __future__ import annotations

import sys

RESTORE_CTRL_C = "import signal; signal.signal(signal.SIGINT, signal.default_int_handler)"


def interruptible_pytest(*args: str) -> list[str]:
    """The command for `python -m pytest *args` in which SIGINT raises KeyboardInterrupt."""
    start = f"{RESTORE_CTRL_C}; import runpy; runpy.run_module('pytest', run_name='__main__', alter_sys=True)"
    return [sys.executable, "-c", start, *args]
