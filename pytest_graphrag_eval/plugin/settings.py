"""The plugin's resolved configuration, built once per process from the options table; it keeps
resolved values only, so a reader cannot pick a raw layer by mistake."""

from __future__ import annotations

import re
import warnings
from pathlib import Path

import pytest

from pytest_graphrag_eval.answers.judge_settings import JudgeOptions, first_set, resolve_judge_settings
from pytest_graphrag_eval.errors import ConfigurationError
from pytest_graphrag_eval.options.declarations import OPTION_BY_DEST
from pytest_graphrag_eval.plugin.option_values import OptionLayers, judge_layers, merge_layers, read_layers
from pytest_graphrag_eval.plugin.process_role import ProcessRole, worker_count
from pytest_graphrag_eval.run.configuration import RunConfiguration

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
            llm_only_given=_llm_only_given(layers),
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
        if role is ProcessRole.CONTROLLER and self.llm.dry_run:
            raise ConfigurationError("--graphrag-dry-run plans the whole run in one process: drop -n")
        if role is ProcessRole.CONTROLLER and self.llm.batch and not self.llm.dry_run:
            raise ConfigurationError(
                "--graphrag-judge-batch sends the run's judge calls from one process: drop -n"
            )

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


def _llm_only_given(layers: OptionLayers) -> tuple[str, ...]:
    return tuple(
        OPTION_BY_DEST[dest].flag if dest in layers.cli else f"ini {dest}"
        for dest in LLM_ONLY_OPTIONS
        if layers.given(dest)
    )
