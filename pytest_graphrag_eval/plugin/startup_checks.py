"""Paths that would only fail at the run's end, after its agent and judge calls were spent, refused
at start-up as usage errors naming the path."""

from __future__ import annotations

import os
from pathlib import Path

from pytest_graphrag_eval.errors import ConfigurationError
from pytest_graphrag_eval.plugin.settings import PluginSettings

CORPUS_SUFFIXES = (".yaml", ".yml")


def check_startup(settings: PluginSettings) -> None:
    """Raise ConfigurationError for corpus paths and output paths that cannot work."""
    for path in settings.corpus_paths:
        check_corpus_path(Path(path))
    outputs: tuple[tuple[str, Path | None], ...] = (
        ("--graphrag-report (ini graphrag_report)", settings.report_path),
        ("--graphrag-record", settings.record_path),
        ("--graphrag-markdown (ini graphrag_markdown)", settings.markdown_path),
        ("--graphrag-html (ini graphrag_html)", settings.html_path),
        ("--graphrag-review-queue (ini graphrag_review_queue)", settings.review_queue_path),
    )
    for option, output in outputs:
        if output is not None and (problem := output_path_problem(Path(output))):
            raise ConfigurationError(f"{option} {output}: {problem}")


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


def output_path_problem(path: Path) -> str | None:
    """Why a file could not be written at `path` (its folder would be created if missing), or None."""
    if path.is_dir():
        return "is a folder; give a file name"
    existing = next((folder for folder in path.parents if folder.exists()), None)
    if existing is None:
        return None
    if not existing.is_dir():
        return f"{existing} is a file, so the report's folder cannot be created"
    if not os.access(existing, os.W_OK | os.X_OK):
        return f"the folder {existing} is not writable"
    if path.exists() and not os.access(path, os.W_OK):
        return "the file exists and is not writable"
    return None
