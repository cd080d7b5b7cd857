"""The contract between the evaluation loop and the scorers.

A scorer returns a flat dict of result keys for one question, reporting what it could not compute as
`<metric>_error`, never as a low score; async so LLM-backed ones run concurrently. Built-in scorers
declare their keys (`produces`), gathered once by `result_keys.py`, so a key is described once.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any, Literal, Protocol, get_args, runtime_checkable

if TYPE_CHECKING:
    from pytest_graphrag_eval.corpus.reference_corpus import Question
    from pytest_graphrag_eval.errors import SourceLocation
    from pytest_graphrag_eval.formats.sparql_results import SelectRowCounts
    from pytest_graphrag_eval.llm.judge import Judge


DEFAULT_RETRIEVAL_K = 10
"""The retrieval metrics' cut-off when neither the reference step nor the corpus sets one."""


class BuiltERag(Protocol):
    """eRAG as built once from a corpus's `erag:` settings (`retrieval.erag_config.ERagSetup`)."""

    @property
    def generator(self) -> object: ...
    @property
    def metric(self) -> object: ...
    @property
    def metrics(self) -> tuple[str, ...]: ...
    @property
    def concurrency(self) -> int: ...
    @property
    def uses_llm(self) -> bool: ...


@dataclass
class ScoringContext:
    """What scorers may use besides the question and response, every value already checked.

    `response_source` names where the response came from, for errors; `row_counts`, when set, collects
    the SELECT outputs' row counts for the aggregates.
    """

    steps_scope: str = "last_group"
    judge: Judge | None = None
    tool_names: Mapping[str, str] = field(default_factory=dict)
    retrieval_k: int = DEFAULT_RETRIEVAL_K
    erag: BuiltERag | None = None
    response_source: SourceLocation | None = None
    row_counts: SelectRowCounts | None = None

    def for_response(self, source: SourceLocation | None) -> ScoringContext:
        """This context with `response_source` set: a shallow copy, cheaper per question than
        `dataclasses.replace`."""
        scoped = object.__new__(type(self))
        scoped.__dict__.update(self.__dict__)
        scoped.response_source = source
        return scoped


class ScoredResults(list[dict[str, Any]]):
    """`run_evaluation`'s results, carrying the `row_counts` scoring parsed so `compute_aggregates`
    need not parse the outputs again."""

    def __init__(self, results: Iterable[dict[str, Any]], row_counts: SelectRowCounts | None = None):
        super().__init__(results)
        self.row_counts = row_counts


@runtime_checkable
class Scorer(Protocol):
    """One metric family; `name` labels it in reports and errors (built-ins also declare `produces`)."""

    name: str

    async def score(
        self, question: Question, response: dict[str, Any], context: ScoringContext
    ) -> dict[str, Any]:
        """Return result keys for this question; never raise for bad agent output."""
        ...


Role = Literal["score", "count", "tokens", "cost", "seconds", "text", "data", "error"]
"""What a key holds: a quality score, a count, tokens, US dollars, seconds, a label or text, a copied
structure (steps, references), or the reason a metric is missing."""
ROLES: tuple[Role, ...] = get_args(Role)
SPREAD_SUFFIXES = ("_stdev", "_min", "_max")
"""Added to a judged metric's name when it is judged several times (answers/stability.py)."""
# The naming rule of usage numbers, for keys nobody declared; every declared key follows it too.
USAGE_SUFFIXES = (("_count", "count"), ("_cost", "cost"), ("_tokens", "tokens"), ("_sec", "seconds"))


@dataclass(frozen=True)
class ResultKey:
    """One result key a scorer may write, or with `prefix` a family of keys starting with `name`.

    `missing` says why it may be absent when a threshold needs it; `column` and `in_summary` place it
    in the terminal summary.
    """

    name: str
    role: Role
    prefix: bool = False
    missing: str = ""
    error_key: str = ""
    column: int | None = None
    in_summary: bool = True

    def __post_init__(self) -> None:
        if self.role not in ROLES:
            raise ValueError(f"result key {self.name!r}: role must be one of {', '.join(ROLES)}")
        if (self.column is not None or not self.in_summary) and self.role != "score":
            raise ValueError(f"result key {self.name!r}: only scores have a summary column")

    def covers(self, key: str) -> bool:
        return key.startswith(self.name) if self.prefix else key == self.name


class KeyCatalogue:
    """Declared result keys, looked up by key name: an exact declaration first, then the longest family."""

    def __init__(self, declarations: Iterable[ResultKey]) -> None:
        exact: dict[str, ResultKey] = {}
        families: dict[str, ResultKey] = {}
        for declaration in declarations:
            table = families if declaration.prefix else exact
            known = table.setdefault(declaration.name, declaration)
            if known != declaration:
                raise ValueError(f"result key {declaration.name!r} is declared twice, differently")
        self.exact = exact
        self.families = sorted(families.values(), key=lambda family: len(family.name), reverse=True)

    def matches(self, key: str) -> list[ResultKey]:
        """The declarations covering `key`, most specific first."""
        found = [self.exact[key]] if key in self.exact else []
        return found + [family for family in self.families if family.covers(key)]

    def role(self, key: str) -> str:
        """The declared role; for an undeclared key its suffix's, else its family's, else a score."""
        if key in self.exact:
            return self.exact[key].role
        if key.endswith(SPREAD_SUFFIXES):
            return "spread"
        for suffix, role in USAGE_SUFFIXES:
            if key.endswith(suffix):
                return role
        families = self.matches(key)
        return families[0].role if families else "score"

    def summary_score(self, key: str) -> bool:
        """True for a score the terminal summary may show as a column."""
        found = self.matches(key)
        return self.role(key) == "score" and (not found or found[0].in_summary)

    def summary_columns(self) -> list[str]:
        """The scores that lead the terminal summary, in their declared order."""
        ranked = [key for key in self.exact.values() if key.column is not None]
        return [key.name for key in sorted(ranked, key=lambda key: (key.column, key.name))]

    def missing_hint(self, key: str) -> str | None:
        """Why `key` is usually missing; None when no declaration covers it."""
        return next((found.missing for found in self.matches(key) if found.missing), None)

    def error_key(self, key: str) -> str | None:
        """The shared key explaining the absence of `key`, when it is not `<key>_error`."""
        declared = self.exact.get(key)
        return declared.error_key if declared is not None and declared.error_key else None

    def names(self) -> frozenset[str]:
        """Every exactly declared key."""
        return frozenset(self.exact)

    def first_segments(self) -> frozenset[str]:
        """The first `_`-separated segment of every declared key and family."""
        return frozenset(name.split("_")[0] for name in [*self.exact, *(key.name for key in self.families)])


BASE_KEYS = (
    ResultKey("template_id", "text"),
    ResultKey("question_id", "text"),
    ResultKey("question_text", "text"),
    ResultKey("reference_answer", "data"),
    ResultKey("reference_steps", "data"),
    ResultKey("status", "text"),
    ResultKey("error", "error"),
    ResultKey("actual_answer", "text"),
    ResultKey("actual_steps", "data"),
    *(
        ResultKey(name, "tokens", missing=f"the agent's response did not report {name}")
        for name in ("input_tokens", "output_tokens", "total_tokens")
    ),
    ResultKey("elapsed_sec", "seconds", missing="the agent's response did not report elapsed_sec"),
)
"""The keys of a result before any scorer runs: ids and texts, references, the agent's answer, steps and
usage (evaluation.base_result). Scorers may refine `reference_steps` and `actual_steps`."""
