"""The declared settings registered with pytest and read from it: each layer parsed once (paths made
absolute against the layer's folder), then merged by its rule; judge settings go to
`answers.judge_settings`, which puts the answers config file between the ini file and the defaults."""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pytest

from pytest_graphrag_eval.answers.judge_settings import JudgeOptions
from pytest_graphrag_eval.history.locations import resolve_history_url
from pytest_graphrag_eval.options import parsers as P
from pytest_graphrag_eval.options.declarations import OPTIONS, OptionSpec
from pytest_graphrag_eval.options.parsers import HISTORY_PREFIX

_AS_GIVEN_OR_PATH = (P.path_or_url, P.baseline)


def add_options(parser: pytest.Parser) -> None:
    """Register every option and ini key under one `graphrag-eval` group; parsing is ours (`parse`),
    so a bad value reads the same from the command line and the ini file."""
    group = parser.getgroup("graphrag-eval", "question-answering regression tests (pytest-graphrag-eval)")
    for spec in OPTIONS:
        takes_value = spec.action in ("store", "append")
        shape = {"default": None, "metavar": spec.shown_metavar} if takes_value else {"default": False}
        group.addoption(spec.flag, dest=spec.dest, help=spec.help, action=spec.action, **shape)
        if spec.ini:
            parser.addini(spec.ini, help=spec.help, type=spec.ini_type)


@dataclass(frozen=True)
class OptionLayers:
    """Each setting's checked value in each layer, by `dest`; a layer that does not set it has no entry."""

    cli: Mapping[str, object]
    ini: Mapping[str, object]

    def given(self, dest: str) -> bool:
        return dest in self.cli or dest in self.ini


def read_layers(config: pytest.Config) -> OptionLayers:
    """Parse every setting the command line and the ini file set (a bad value is a ConfigurationError)."""
    invocation_dir = Path(config.invocation_params.dir)
    ini_dir = Path(config.inipath).parent if config.inipath else invocation_dir
    cli: dict[str, object] = {}
    ini: dict[str, object] = {}
    for spec in OPTIONS:
        value = config.getoption(spec.dest)
        raw = None if value in (None, False, []) else _absolute(spec, value, invocation_dir)
        if raw is not None:
            cli[spec.dest] = spec.parse_layer(raw, "cli")
        value = config.getini(spec.ini) if spec.ini else None
        raw = None if value in ("", [], False, None) else _absolute(spec, value, ini_dir)
        if raw is not None:
            ini[spec.dest] = spec.parse_layer(raw, "ini")
    return OptionLayers(cli, ini)


def merge_layers(layers: OptionLayers) -> dict[str, object]:
    """Every setting without a file key, merged by its rule over its default, by `PluginSettings` field."""
    merged: dict[str, object] = {}
    for spec in OPTIONS:
        if spec.setting is None:
            continue
        present: list[Any] = [layer[spec.dest] for layer in (layers.cli, layers.ini) if spec.dest in layer]
        if not present:
            merged[spec.setting] = spec.default
        elif spec.merge == "per_key":
            merged[spec.setting] = {key: value for layer in reversed(present) for key, value in layer.items()}
        elif spec.merge == "concat":
            merged[spec.setting] = tuple(item for layer in reversed(present) for item in layer)
        else:
            merged[spec.setting] = present[0]
    return merged


def judge_layers(layers: OptionLayers) -> list[JudgeOptions]:
    """The judge settings of the command line, then of the ini file, for `resolve_judge_settings`."""
    return [
        JudgeOptions(
            **{spec.file_key: layer[spec.dest] for spec in OPTIONS if spec.file_key and spec.dest in layer}  # type: ignore[arg-type]
        )
        for layer in (layers.cli, layers.ini)
    ]


def _absolute(spec: OptionSpec, value: Any, base: Path) -> P.RawValue | None:
    """A layer's value, its paths made absolute against `base` (the invocation folder, or the ini file's,
    against which pytest made a `paths` ini value absolute already); None when it is blank."""
    if spec.parse is P.path:
        return Path(value[0]) if isinstance(value, list) else base / str(value)
    if spec.parse is P.paths:
        return [base / str(item) for item in value]
    if spec.parse is P.history_url:
        return resolve_history_url(str(value), base) or None
    if spec.parse in _AS_GIVEN_OR_PATH:
        return _path_or_url(str(value), base)
    return value  # type: ignore[no-any-return]


def _path_or_url(text: str, base: Path) -> str | None:
    """A URL or `history:REF` as given, a path against `base`; blank is unset."""
    text = text.strip()
    if not text:
        return None
    return text if "://" in text or text.startswith(HISTORY_PREFIX) else str(base / text)
