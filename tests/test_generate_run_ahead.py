"""The generator runs the next questions' queries ahead of making them: each query once, and a query
that fails reported as a question-by-question run reports it.

The graph: groups with a name, items of each group, and a `ex:via` value per group that is an IRI
for most groups and a literal for some; a template putting that value in a predicate's place makes
a query that does not parse for those groups alone.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

from pytest_graphrag_eval.generate.generator import generate
from pytest_graphrag_eval.generate.templates import TemplateError, load_templates
from pytest_graphrag_eval.graph.embedded import EmbeddedEndpoint
from pytest_graphrag_eval.graph.endpoint import QueryResult

GROUPS = 700  # more than one run-ahead's worth of questions (512)
TEMPLATES = """\
prefixes:
  ex: http://example.org/ns#
templates:
  - template_id: group_items
    parameters: [group]
    candidates: |
      select ?group ?groupIri ?via where { ?groupIri a ex:Group ; ex:name ?group ; ex:via ?via }
      order by ?groupIri
    phrasings:
      - Which items belong to {{group}}?
    question_id: items-{{group}}
    reference_steps:
      - - name: sparql_query
          args:
            query: |
              select ?name where { ?item ex:member {{groupIri}} ; ex:name ?name } order by ?name
        - name: sparql_query
          args:
            query: QUERY
    answer: {labels: name, step: "[0][0]"}
    keep: {min_rows: 2}
"""


class RecordingEndpoint(EmbeddedEndpoint):
    """The embedded store, with every query it is asked kept in order."""

    def __init__(self, *args: Any, **kwargs: Any):
        super().__init__(*args, **kwargs)
        self.asked: list[str] = []

    def execute(self, query: str) -> QueryResult:
        self.asked.append(query)
        return super().execute(query)


def _graph(folder: Path, literal_via: set[int]) -> Path:
    """Groups 0.. (names g000...), group i holding i % 3 items (so a third are dropped by min_rows: 2)."""
    lines = ["@prefix ex: <http://example.org/ns#> ."]
    for group in range(GROUPS):
        via = f'"v{group}"' if group in literal_via else "ex:member"
        lines.append(f'ex:g{group:03d} a ex:Group ; ex:name "g{group:03d}" ; ex:via {via} .')
        lines += [
            f'ex:i{group}-{item} ex:member ex:g{group:03d} ; ex:name "i{group}-{item}" .'
            for item in range(group % 3)
        ]
    path = folder / "graph.ttl"
    path.write_text("\n".join(lines) + "\n", encoding="utf-8")
    return path


def _templates(folder: Path, second_query: str) -> Path:
    path = folder / "templates.yaml"
    path.write_text(TEMPLATES.replace("QUERY", second_query), encoding="utf-8")
    return path


def test_every_query_runs_once_when_questions_share_a_query_and_some_are_dropped(tmp_path: Path) -> None:
    """Two thirds of the questions are dropped by the keep-rule after their queries ran; every question's
    second query is the same text (held once under it before, and run again for each later question)."""
    templates = load_templates(_templates(tmp_path, '"select (count(*) as ?groups) where { ?g a ex:Group }"'))
    endpoint = RecordingEndpoint.load(_graph(tmp_path, set()))
    generation = generate(templates, endpoint)
    kept = generation.outcomes[0]
    assert len(kept.questions) == GROUPS // 3 and len(kept.dropped) == GROUPS - GROUPS // 3
    answered = [query for query in endpoint.asked if "?item ex:member" in query]
    assert len(answered) == len(set(answered)) == GROUPS
    shared = [query for query in endpoint.asked if "count(*) as ?groups" in query]
    assert len(shared) == GROUPS  # each question asks it once: never again for nothing


@pytest.mark.parametrize("first_failing", [5, 600])
def test_a_failing_query_is_reported_for_its_own_question_first(tmp_path: Path, first_failing: int) -> None:
    """The literal `via` of two groups makes their second query unparsable: the first in order is named,
    though the later one's query would fail too, and no question after it is asked for."""
    templates = load_templates(_templates(tmp_path, '"select ?x where { ?x {{via}} {{groupIri}} }"'))
    endpoint = RecordingEndpoint.load(_graph(tmp_path, {first_failing, first_failing + 3}))
    with pytest.raises(TemplateError) as raised:
        generate(templates, endpoint)
    assert str(raised.value).startswith(
        f"{tmp_path / 'templates.yaml'}:4, template 'group_items', field 'reference_steps[0][1].args.query': "
        f"the query failed (question 'items-g{first_failing:03d}'): not a valid read-only SPARQL query"
    )
    failing = [query for query in endpoint.asked if f'"v{first_failing}"' in query]
    assert failing and endpoint.asked[-1] == failing[0]
    assert not any(f'"v{first_failing + 3}"' in query for query in endpoint.asked)
