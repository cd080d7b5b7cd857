"""The run's corpus files: the configured paths expanded, each file registered once at collection
(rules parsed, question ids unique across files); an xdist controller receives their identity and
gates from its workers instead, and reads a file no process of its run collected itself. And which
share of their questions this process runs: `--graphrag-shard K/N`, or pytest-split's group, recorded
alike so either report defers gates and the comparison to `graphrag-eval-merge`."""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pytest

from pytest_graphrag_eval.corpus.reference_corpus import Corpus, Question, check_unique_question, load_corpus
from pytest_graphrag_eval.corpus.shards import ShardSpec, assign_shards
from pytest_graphrag_eval.errors import GraphragEvalError, SourceLocation
from pytest_graphrag_eval.formats.json_types import JsonObject, Order
from pytest_graphrag_eval.gates.corpus_rules import CorpusRules, corpus_rules
from pytest_graphrag_eval.gates.model import Gate
from pytest_graphrag_eval.gates.suite_gates import combine_gates, gates_from_yaml
from pytest_graphrag_eval.plugin.items import QuestionItem
from pytest_graphrag_eval.plugin.settings import CORPUS_SUFFIXES, PluginSettings
from pytest_graphrag_eval.plugin.xdist_workers import CorpusFileShipment
from pytest_graphrag_eval.run.run_identity import corpus_file_record, file_sha256, run_identity

SHARD_OPTION = "--graphrag-shard"
PYTEST_SPLIT = "pytest-split"


@dataclass(frozen=True)
class RunShard:
    """This run's shard and who selected its questions."""

    spec: ShardSpec
    selected_by: str

    def to_dict(self) -> dict[str, Any]:
        return {"index": self.spec.index, "count": self.spec.count, "selected_by": self.selected_by}


def select_shard(config: pytest.Config, settings: PluginSettings) -> RunShard | None:
    """`--graphrag-shard`, else pytest-split's `--splits`/`--group` when that plugin is active."""
    if settings.shard is not None:
        return RunShard(settings.shard, SHARD_OPTION)
    splits = config.getoption("splits", None)
    group = config.getoption("group", None)
    if isinstance(splits, int) and isinstance(group, int) and 1 <= group <= splits:
        return RunShard(ShardSpec(group, splits), PYTEST_SPLIT)
    return None


def deselect_other_shards(
    config: pytest.Config, items: list[pytest.Item], shard: RunShard | None, corpora: Iterable[Corpus]
) -> None:
    """With --graphrag-shard, keep the question items of this shard (and every other test); report the
    rest deselected. pytest-split deselects by itself."""
    if shard is None or shard.selected_by != SHARD_OPTION:
        return
    spec = shard.spec
    shards = assign_shards(
        (
            (template.template_id, [question.question_id for question in template.questions])
            for corpus in corpora
            for template in corpus.templates
        ),
        spec.count,
    )
    keep: list[pytest.Item] = []
    drop: list[pytest.Item] = []
    for item in items:
        other = isinstance(item, QuestionItem) and shards.get(item.question.question_id) != spec.index
        (drop if other else keep).append(item)
    if drop:
        config.hook.pytest_deselected(items=drop)
        items[:] = keep


def shard_note(shard: RunShard | None, questions: int) -> str | None:
    """The terminal line that says why a shard shows no gates (None: not a shard, or nothing ran)."""
    if shard is None or not questions:
        return None
    return (
        f"graphrag-eval: shard {shard.spec} ({questions} questions, selected by {shard.selected_by}): "
        "gates and the baseline comparison are decided on the whole run by graphrag-eval-merge"
    )


class CorpusRegistry:
    """The configured corpus files and what collection learnt of each."""

    def __init__(self, paths: Iterable[Path]):
        self.files = _expand(paths)
        self._index = {path: index for index, path in enumerate(self.files)}
        self._resolved: dict[Path, Path] = {}
        self.corpora: dict[Path, Corpus] = {}  # by resolved file path
        self.rules: dict[Path, CorpusRules] = {}  # each collected file's thresholds, gates, scoring settings
        self.shipped: dict[Path, CorpusFileShipment] = {}  # each file's identity and gates
        self._questions_by_id: dict[str, Question] = {}

    def is_corpus_file(self, path: Path) -> bool:
        return self._resolve(path) in self._index

    def register(self, corpus: Corpus, path: Path) -> CorpusRules:
        """Keep a collected corpus and its rules; a bad rule or a repeated question id is a CorpusError."""
        rules = corpus_rules(corpus)
        for question in corpus.questions():
            check_unique_question(question, self._questions_by_id)
        resolved = self._resolve(path)
        self.corpora[resolved], self.rules[resolved] = corpus, rules
        record = corpus_file_record(corpus.file or str(path), file_sha256(resolved), len(corpus.positions))
        self.shipped[resolved] = CorpusFileShipment(record, rules.gates)
        return rules

    def receive(self, files: dict[Path, CorpusFileShipment]) -> None:
        """xdist controller: the files a worker collected."""
        for path, file in files.items():
            self.shipped.setdefault(path, file)

    def collected_corpora(self) -> list[Corpus]:
        """Every corpus file a process of the run collected, in file order (read again on a controller;
        one that does not load is left out: it was reported as its collection error)."""
        corpora = []
        for path in (path for path in self.files if path in self.shipped):
            corpus = self.corpora.get(path)
            if corpus is None:
                try:
                    corpus = load_corpus(path)
                except GraphragEvalError:
                    continue
            corpora.append(corpus)
        return corpora

    def add_args(self, config: pytest.Config, corpus_from_cli: bool) -> None:
        """Make pytest visit configured corpus files the given arguments do not already cover."""
        if config.args_source == pytest.Config.ArgsSource.ARGS and not corpus_from_cli:
            return
        invocation_dir = Path(config.invocation_params.dir)
        covered = [(invocation_dir / arg.split("::")[0]).resolve() for arg in config.args]
        for corpus_file in self.files:
            if not any(corpus_file == path or path in corpus_file.parents for path in covered):
                config.args.append(str(corpus_file))

    def order_of(self, item: QuestionItem) -> Order:
        """A sort key that is the same in every process: corpus file, then position in it."""
        file_index = self._index.get(self._resolve(item.path), -1)
        return (file_index, str(item.path), item.corpus.positions[item.question.question_id])

    def gates(self, option_gates: Sequence[Gate]) -> list[Gate]:
        """The options' gates, then each corpus file's `gates:` in file order; duplicates dropped."""
        gates = list(option_gates)
        for path in self.files:
            shipped = self.shipped.get(path)
            if shipped is not None:
                gates.extend(shipped.gates)
                continue
            try:
                corpus = load_corpus(path)
                gates.extend(gates_from_yaml(corpus.settings.get("gates"), SourceLocation(file=corpus.file)))
            except GraphragEvalError:
                continue  # already reported as that file's collection error
        return combine_gates(gates)

    def identity(
        self,
        answered: Iterable[Order],
        reported: Iterable[Order],
        settings_record: JsonObject,
        shard: RunShard | None,
    ) -> JsonObject:
        """The report metadata that lets graphrag-eval-merge check and merge shards."""
        records = {path: file.record for path, file in self.shipped.items()}
        shard_record = shard.to_dict() if shard is not None else None
        return run_identity(self.files, records, answered, reported, settings_record, shard_record)

    def _resolve(self, path: Path) -> Path:
        """`path.resolve()`, remembered: items ask for their file's path once per question."""
        if path not in self._resolved:
            self._resolved[path] = path.resolve()
        return self._resolved[path]


def _expand(paths: Iterable[Path]) -> list[Path]:
    """Files as given; folders expand to their *.yaml / *.yml files, sorted for a stable order."""
    files: list[Path] = []
    for path in paths:
        resolved = path.resolve()
        if resolved.is_dir():
            files.extend(
                sorted(p for p in resolved.rglob("*") if p.suffix in CORPUS_SUFFIXES and p.is_file())
            )
        else:
            files.append(resolved)
    return list(dict.fromkeys(files))
