"""Option values written after a space, which pytest took for test paths before the plugin loaded.

In `pytest example_project --graphrag-html reports/x.html`, pytest chooses its rootdir and config
file from `reports/x.html` too once that file exists, and the project's corpus is never collected;
a plugin cannot undo that choice. So pytest's own rule (`determine_setup`) is run with and without
our values, and a value that changes the choice is a usage error naming the `--option=VALUE` form.
A path counts as if it existed, so the command fails on its first run, not its second.
"""

from __future__ import annotations

import inspect
import os
import re
import shlex
from collections.abc import Iterator, Sequence
from pathlib import Path
from typing import Any

import pytest
from _pytest.config.findpaths import determine_setup  # pytest's own rule: no second copy of it

from pytest_graphrag_eval.errors import ConfigurationError
from pytest_graphrag_eval.options import parsers as P
from pytest_graphrag_eval.options.declarations import OPTIONS

# Every option that takes a value: written after a space, the value is a positional argument to
# pytest's first look at the command line.
VALUE_FLAGS = frozenset(spec.flag for spec in OPTIONS if spec.action in ("store", "append"))
# Options whose value names a file or folder (possibly one this run writes).
PATH_FLAGS = frozenset(
    spec.flag for spec in OPTIONS if spec.parse in (P.path, P.paths, P.baseline, P.path_or_url, P.history_url)
)
_NOT_A_PATH = re.compile(r"^[A-Za-z][\w+.-]+:")  # a URL or `history:REF` (one letter: a drive)
_SETUP_PARAMETERS = frozenset(inspect.signature(determine_setup).parameters)

Setup = tuple[Path, Path | None]


def check_config_detached_values(config: pytest.Config) -> None:
    """`check_detached_values` for this run's command line, as pytest first read it (not for --help)."""
    if config.getoption("help", False) or config.getoption("file_or_dir", None) is None:
        return
    added = shlex.split(os.environ.get("PYTEST_ADDOPTS", ""))
    check_detached_values(
        [*added, *config.invocation_params.args],
        list(config.getoption("file_or_dir") or []),
        Path(config.invocation_params.dir),
        inifile=config.getoption("inifilename"),
        rootdir=config.getoption("rootdir"),
        override_ini=config.getoption("override_ini"),
    )


def check_detached_values(
    args: Sequence[str],
    positional: Sequence[str],
    invocation_dir: Path,
    *,
    inifile: str | None = None,
    rootdir: str | None = None,
    override_ini: Sequence[str] | None = None,
) -> None:
    """Raise ConfigurationError when our options' values written after a space in `args` would make
    pytest choose another rootdir or config file than the test paths (`positional`) lead to."""

    def setup(paths: Sequence[str]) -> Setup:
        keywords: dict[str, Any] = {
            "inifile": inifile,
            "override_ini": override_ini,
            "args": [str(invocation_dir / path) for path in paths],  # not against os.getcwd()
            "rootdir_cmd_arg": rootdir or None,
            "invocation_dir": invocation_dir,
        }
        # The keywords the installed pytest takes (override_ini came after pytest 8.0).
        found = determine_setup(**{name: keywords[name] for name in keywords if name in _SETUP_PARAMETERS})
        return found[0], found[1]

    detached = list(_separated_values(args))
    if not detached:
        return
    intended = setup(positional)
    standing = [(flag, value, _stand_in(flag, value, invocation_dir)) for flag, value in detached]
    if setup([*positional, *(path for _, _, path in standing)]) == intended:
        return
    culprits = [(flag, value) for flag, value, path in standing if setup([*positional, path]) != intended]
    culprits = culprits or [(flag, value) for flag, value, _ in standing]
    taken = setup([*positional, *(_stand_in(flag, value, invocation_dir) for flag, value in culprits)])
    names = ", ".join(f"{value!r} (the value of {flag})" for flag, value in culprits)
    fixed = " ".join(f"{flag}={value}" for flag, value in culprits)
    raise ConfigurationError(
        f"pytest takes {names} for a test path: it reads the command line before this plugin's options "
        f"are known, and with that path it chooses {_describe(taken)} instead of {_describe(intended)}, "
        f"so the corpus the project's config names would not be collected. "
        f"Write the option with '=': {fixed}"
    )


def _separated_values(args: Sequence[str]) -> Iterator[tuple[str, str]]:
    """(flag, value) for each of our options written as two arguments (`--` ends the options)."""
    for index, flag in enumerate(args[:-1]):
        if flag == "--":
            return
        value = args[index + 1]
        if flag in VALUE_FLAGS and not value.startswith("-"):
            yield flag, value


def _stand_in(flag: str, value: str, invocation_dir: Path) -> str:
    """What pytest will see of `value`: itself, or for a path option its closest existing folder."""
    path = invocation_dir / value.split("::")[0]
    if flag not in PATH_FLAGS or _NOT_A_PATH.match(value) or path.exists():
        return value
    return str(next((folder for folder in path.parents if folder.is_dir()), invocation_dir))


def _describe(setup: Setup) -> str:
    rootdir, inipath = setup
    return f"the rootdir {rootdir} and " + (f"the config file {inipath}" if inipath else "no config file")
