"""The run's corpus files: the configured paths expanded, and the gates the files add (a file this
process did not collect, as on an xdist controller, is read here)."""

from __future__ import annotations

from collections.abc import Iterable, Mapping, Sequence
from pathlib import Path

from pytest_graphrag_eval.corpus.reference_corpus import Corpus, load_corpus
from pytest_graphrag_eval.errors import GraphragEvalError, SourceLocation
from pytest_graphrag_eval.gates.model import Gate
from pytest_graphrag_eval.gates.suite_gates import combine_gates, gates_from_yaml


def expand_corpus_paths(paths: Iterable[Path]) -> list[Path]:
    """Files as given; folders expand to their *.yaml / *.yml files, sorted for a stable order."""
    files: list[Path] = []
    for path in paths:
        resolved = Path(path).resolve()
        if resolved.is_dir():
            files.extend(
                sorted(p for p in resolved.rglob("*") if p.suffix in (".yaml", ".yml") and p.is_file())
            )
        else:
            files.append(resolved)
    return list(dict.fromkeys(files))


def run_gates(
    option_gates: Sequence[Gate], corpus_files: Iterable[Path], gates_by_file: Mapping[Path, Sequence[Gate]]
) -> list[Gate]:
    """The options' gates, then each corpus file's `gates:` in file order; duplicates dropped."""
    gates = list(option_gates)
    for path in corpus_files:
        collected = gates_by_file.get(path)
        if collected is not None:
            gates.extend(collected)
            continue
        try:
            corpus = load_corpus(path)
            gates.extend(gates_from_yaml(corpus.settings.get("gates"), SourceLocation(file=corpus.file)))
        except GraphragEvalError:
            continue  # already reported as that file's collection error
    return combine_gates(gates)


def read_corpora(files: Iterable[Path], collected: Mapping[Path, Corpus]) -> list[Corpus]:
    """The corpus files in order, those not collected read now (one that does not load is left out: it
    was reported as its collection error)."""
    corpora = []
    for path in files:
        corpus = collected.get(path)
        if corpus is None:
            try:
                corpus = load_corpus(path)
            except GraphragEvalError:
                continue
        corpora.append(corpus)
    return corpora
