"""Which share of the questions this process runs: `--graphrag-shard K/N`, or pytest-split's group,
recorded alike so either report defers gates and the comparison to `graphrag-eval-merge`."""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass
from typing import Any

import pytest

from pytest_graphrag_eval.corpus.reference_corpus import Corpus
from pytest_graphrag_eval.corpus.shards import ShardSpec, assign_shards
from pytest_graphrag_eval.plugin.items import QuestionItem
from pytest_graphrag_eval.plugin.settings import PluginSettings

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
