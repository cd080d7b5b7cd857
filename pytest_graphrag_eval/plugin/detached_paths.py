"""Path values that pytest took for test paths before the plugin was loaded.

pytest chooses its rootdir and config file from the positional arguments of the
command line before any plugin option is known. In `--graphrag-baseline ../base.json`
the value therefore looks like a test path; when it lies outside the current
folder, or exists (a report the last run wrote) outside the folder the other
arguments name, the rootdir moves up past the project's own config file, another
one is read, and the corpus that file names is never collected ("no tests ran").
The choice cannot be undone from a plugin, so the run stops and says how to write it.
"""

from __future__ import annotations

import itertools
import os
from collections.abc import Iterator, Sequence
from pathlib import Path

from pytest_graphrag_eval.errors import ConfigurationError
from pytest_graphrag_eval.plugin.options import OPTIONS

PATH_FLAGS = frozenset(spec.flag for spec in OPTIONS if spec.metavar == "PATH")
# The files pytest reads its configuration from, and the section that makes a shared file count.
_CONFIG_FILES: tuple[tuple[str, str | None], ...] = (
    ("pytest.toml", None),
    (".pytest.toml", None),
    ("pytest.ini", None),
    (".pytest.ini", None),
    ("pyproject.toml", "[tool.pytest"),
    ("tox.ini", "[pytest]"),
    ("setup.cfg", "[tool:pytest]"),
)


def check_detached_path_values(
    args: Sequence[str], invocation_dir: Path, rootpath: Path, inipath: Path | None
) -> None:
    """Raise ConfigurationError when a separated path value made pytest read another config file than
    the one the other arguments lead to (an existing value inside the project counts too: a report
    written by the last run moves the rootdir up to the common ancestor)."""
    if "-c" in args or any(arg.startswith(("-c", "--config-file", "--rootdir")) for arg in args):
        return  # the user chose the config file or rootdir; nothing was guessed
    invocation_dir = invocation_dir.resolve()
    taken = [
        (flag, value)
        for flag, value in _separated_values(args)
        if (invocation_dir / value).exists()
        or not (invocation_dir / value).resolve().is_relative_to(invocation_dir)
    ]
    if not taken:
        return
    intended = _intended_config_file(_positional_paths(args, invocation_dir), invocation_dir)
    if intended is None or (inipath is not None and intended == inipath.resolve()):
        return
    flag, value = taken[0]
    read = f"read {inipath}" if inipath is not None else "read no config file"
    raise ConfigurationError(
        f"pytest took {value!r}, the value of {flag}, for a test path before this plugin was loaded: "
        f"it chose the rootdir {rootpath} and {read} instead of {intended}, so the corpus that file names "
        f"would not be collected. Write the option with '=': {flag}={value}"
    )


def _positional_paths(args: Sequence[str], invocation_dir: Path) -> list[Path]:
    """The existing paths among the arguments that are not options nor our path options' values."""
    paths = []
    for index, arg in enumerate(args):
        if arg.startswith("-") or (index > 0 and args[index - 1] in PATH_FLAGS):
            continue
        path = (invocation_dir / arg.split("::")[0]).resolve()
        if path.exists():
            paths.append(path)
    return paths


def _intended_config_file(paths: Sequence[Path], invocation_dir: Path) -> Path | None:
    """The config file pytest finds from the common ancestor of `paths` (the current folder if none)."""
    folders = [path if path.is_dir() else path.parent for path in paths] or [invocation_dir]
    ancestor = Path(os.path.commonpath([str(folder) for folder in folders]))
    for folder in (ancestor, *ancestor.parents):
        for name, section in _CONFIG_FILES:
            candidate = folder / name
            if candidate.is_file() and (section is None or _mentions(candidate, section)):
                return candidate
    return None


def _separated_values(args: Sequence[str]) -> Iterator[tuple[str, str]]:
    """(flag, value) for each of our path options written as two arguments."""
    for flag, value in itertools.pairwise(args):
        if flag in PATH_FLAGS and not value.startswith("-"):
            yield flag, value


def _mentions(path: Path, section: str) -> bool:
    try:
        return section in path.read_text(encoding="utf-8", errors="replace")
    except OSError:
        return False
