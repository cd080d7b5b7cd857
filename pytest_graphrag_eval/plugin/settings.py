"""The plugin's settings: the declared options registered with pytest, each layer parsed once (paths made
absolute against the layer's folder) and merged by its rule, the judge settings resolved by
`answers.judge_settings` (the answers config file between the ini file and the defaults), and the
combinations and paths that cannot work refused at start-up, before any agent or judge call. Built
once per process; it keeps resolved values only, so a reader cannot pick a raw layer by mistake."""

from __future__ import annotations

import re
import warnings
from collections.abc import Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pytest

from pytest_graphrag_eval.answers.judge_settings import JudgeOptions, first_set, resolve_judge_settings
from pytest_graphrag_eval.errors import ConfigurationError
from pytest_graphrag_eval.history.locations import resolve_history_url
from pytest_graphrag_eval.options import parsers as P
from pytest_graphrag_eval.options.declarations import OPTION_BY_DEST, OPTIONS, OptionSpec
from pytest_graphrag_eval.options.files import check_files, history_file
from pytest_graphrag_eval.options.parsers import HISTORY_PREFIX
from pytest_graphrag_eval.plugin.xdist_workers import ProcessRole, worker_count
from pytest_graphrag_eval.run.configuration import RunConfiguration

_AS_GIVEN_OR_PATH = (P.path_or_url, P.baseline)
CORPUS_SUFFIXES = (".yaml", ".yml")


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
    against which pytest made a `paths` ini value absolute already); blank left for the parser to refuse."""
    if spec.parse is P.path:
        return Path(value[0]) if isinstance(value, list) else _path_or_url(str(value), base)
    if spec.parse is P.paths:
        return [_path_or_url(str(item), base) for item in value]
    if spec.parse is P.history_url:
        return resolve_history_url(str(value), base)
    if spec.parse in _AS_GIVEN_OR_PATH:
        return _path_or_url(str(value), base)
    return value  # type: ignore[no-any-return]


def _path_or_url(text: str, base: Path) -> str:
    """A URL or `history:REF` as given, a path against `base`."""
    given = text.strip()
    return given if not given or "://" in given or given.startswith(HISTORY_PREFIX) else str(base / text)


# Judge settings that only the LLM judge uses: given while no LLM judges anything, they would be
# ignored without a word (checked when the run knows whether anything needs the LLM).
LLM_ONLY_OPTIONS = ("graphrag_judge_model", "graphrag_embedding_model", "graphrag_correctness_prompt")


class PluginSettings(RunConfiguration):
    """Everything the plugin was configured with, resolved and validated."""

    @classmethod
    def from_config(cls, config: pytest.Config, role: ProcessRole | None = None) -> PluginSettings:
        """Resolve every setting of the options table for this process (`role`: decided by the caller)."""
        role = role or ProcessRole.of(config)
        layers = read_layers(config)
        values = merge_layers(layers)
        default_cache = Path(config.rootpath) / ".graphrag-cache"
        options = judge_layers(layers)
        _check_judge_options(first_set(options))  # before the client settings refuse them less clearly
        with warnings.catch_warnings(record=True) as ignored_keys:  # a graphrag-eval file's unused keys
            warnings.simplefilter("always")
            resolved = resolve_judge_settings(
                options,
                values["answers_config"],  # type: ignore[arg-type]
                defaults=JudgeOptions(judge="none", cache_dir=default_cache),
            )
        for ignored in ignored_keys:  # shown in pytest's warnings summary, under its -W filters
            message = ignored.message
            warning = message if isinstance(message, Warning) else UserWarning(message)
            config.issue_config_time_warning(warning, stacklevel=2)
        settings = cls(
            **values,  # type: ignore[arg-type]  # each checked by its parser (options/parsers.py)
            corpus_from_cli="graphrag_corpus" in layers.cli,
            answers=resolved.answers,
            llm=resolved.llm,
            workers=worker_count(config),
            llm_only_given=tuple(
                OPTION_BY_DEST[dest].flag if dest in layers.cli else f"ini {dest}"
                for dest in LLM_ONLY_OPTIONS
                if layers.given(dest)
            ),
            shown_from=(Path(config.rootpath), Path(config.invocation_params.dir)),
        )
        settings.validate(role)
        return settings

    def validate(self, role: ProcessRole) -> None:
        """Refuse combinations of settings that cannot work together (each value is checked by its parser)."""
        self._validate_graph()
        if self.record_path is not None and self.responses_path is not None:
            raise ConfigurationError(
                "--graphrag-record records live agent answers, but --graphrag-responses (or the "
                "graphrag_responses ini key) replays recorded ones, so nothing would be recorded; use one"
            )
        history_only = {
            "graphrag_history_required": self.history_required,
            "graphrag_history_run_key": self.history_run_key,
        }
        needing = [OPTION_BY_DEST[dest].label for dest, given in history_only.items() if given]
        if needing and self.history_url is None:
            raise ConfigurationError(
                f"{needing[0]} needs a history to record the run in: pass --graphrag-history URL"
            )
        if role is ProcessRole.CONTROLLER and self.llm.dry_run:
            raise ConfigurationError("--graphrag-dry-run plans the whole run in one process: drop -n")
        if role is ProcessRole.CONTROLLER and self.llm.batch and not self.llm.dry_run:
            raise ConfigurationError(
                "--graphrag-judge-batch sends the run's judge calls from one process: drop -n"
            )
        self._check_paths()

    def _check_paths(self) -> None:
        """Corpus and output paths that would only fail at the run's end, after its agent and judge calls."""
        for path in self.corpus_paths:
            check_corpus_path(path)
        outputs = (
            (_label("report"), self.report_path),
            (_label("record"), self.record_path),
            (_label("markdown"), self.markdown_path),
            (_label("html"), self.html_path),
            (_label("review_queue"), self.review_queue_path),
        )
        inputs = (
            (_label("responses"), self.responses_path),
            (_label("judge_labels"), self.judge_labels_path),
            (_label("reviews"), self.reviews_path),
            (_label("history"), history_file(self.history_url)),
            *((_label("corpus"), corpus) for corpus in self.corpus_paths),
        )
        check_files(outputs, inputs)

    def check_llm_only_options(self, llm_judges: bool) -> None:
        """A judge setting that cannot take effect is a usage error, never ignored without a word."""
        if self.llm_only_given and not llm_judges:
            raise ConfigurationError(
                f"{self.llm_only_given[0]} sets the LLM judge, but nothing in this run is judged by an LLM "
                f"(the judge is {self.answers.judge}): add --graphrag-judge llm (or --graphrag-relevance), "
                f"or drop {self.llm_only_given[0]}"
            )

    def _validate_graph(self) -> None:
        wants = [
            flag
            for flag, on in (
                ("--graphrag-check-references", self.check_references),
                ("--graphrag-update-references", self.update_references),
                ("--graphrag-graph-coverage", self.graph_coverage),
                (f"--graphrag-execute {self.execute}", self.execute is not None),
            )
            if on
        ]
        if wants and self.sparql_endpoint is None:
            raise ConfigurationError(
                f"{wants[0]} needs a graph: pass --graphrag-sparql-endpoint (an RDF file or folder, "
                "or an http(s):// SPARQL endpoint URL), or set the graphrag_sparql_endpoint ini key"
            )
        for flag, value in (("base-iri", self.sparql_base_iri), ("service", self.sparql_service)):
            if value is not None and self.sparql_endpoint is None:
                raise ConfigurationError(
                    f"--graphrag-sparql-{flag} needs a graph: pass --graphrag-sparql-endpoint"
                )
        if self.sparql_base_iri is not None:
            if self.sparql_endpoint is not None and self.sparql_endpoint.lower().startswith(
                ("http:", "https:")
            ):
                raise ConfigurationError(
                    "--graphrag-sparql-base-iri applies to RDF files only, not to an http(s) endpoint"
                )
            if not re.match(r"[A-Za-z][A-Za-z0-9+.-]*:", self.sparql_base_iri):
                raise ConfigurationError(
                    f"graphrag_sparql_base_iri must be an absolute IRI (with a scheme, such as "
                    f"http://data.example.org/), got {self.sparql_base_iri!r}"
                )


def _check_judge_options(given: JudgeOptions) -> None:
    """Judge options that contradict each other, as the command line and the ini file give them."""
    if given.cache_only and given.use_cache is False:
        raise ConfigurationError(
            "--graphrag-cache-only answers judge calls from the cache, which --graphrag-no-cache "
            "turns off; use one"
        )
    if not given.batch:
        return
    # --graphrag-judge-batch fills the cache by sending requests, and is billed when a batch ends.
    if given.cache_only:
        raise ConfigurationError(
            "--graphrag-judge-batch sends the judge calls the cache misses, --graphrag-cache-only sends "
            "none; use one"
        )
    if given.use_cache is False:
        raise ConfigurationError(
            "--graphrag-judge-batch stores the batch's replies in the judge cache, which "
            "--graphrag-no-cache turns off; use one"
        )
    if given.max_cost_usd is not None or given.max_calls is not None:
        budget = "--graphrag-max-cost" if given.max_cost_usd is not None else "--graphrag-max-calls"
        raise ConfigurationError(
            f"--graphrag-judge-batch: a batch is billed as a whole when it ends, so {budget} cannot "
            "stop it midway; drop the budget (--graphrag-dry-run shows what the batch would cost)"
        )


def check_corpus_path(path: Path) -> None:
    """A corpus path must exist, and a corpus folder must hold at least one YAML file."""
    if not path.exists():
        raise ConfigurationError(f"graphrag corpus path not found: {path}")
    if path.is_dir() and not any(
        candidate.suffix in CORPUS_SUFFIXES and candidate.is_file() for candidate in path.rglob("*")
    ):
        raise ConfigurationError(
            f"graphrag corpus folder {path} holds no *.yaml or *.yml file; point --graphrag-corpus "
            "(or the graphrag_corpus ini key) at the corpus file or the folder that has it"
        )


def _label(setting: str) -> str:
    """How messages name the `--graphrag-<setting>` option: both of its spellings."""
    return OPTION_BY_DEST[f"graphrag_{setting}"].label
