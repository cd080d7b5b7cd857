"""Property: every generated question's reference queries, run on the graph, return the reference
outputs stored for it, and its answer is read from them, whatever text the graph's names hold.

Hypothesis draws small graphs (groups and items whose names are any text: quotes, backslashes, line
breaks, language tags, names shared by two groups) and a sample size and seed; the corpus generated
from one template is then checked against the graph by running each stored query again. A second
query finds the group by its name as a literal, so a name that did not survive its way into a query
(escaping) shows as a count below the group's members.
"""

from __future__ import annotations

import tempfile
from pathlib import Path

import pyoxigraph
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from pytest_graphrag_eval.generate.answer_reader import rows_of
from pytest_graphrag_eval.generate.generator import generate
from pytest_graphrag_eval.generate.templates import load_templates
from pytest_graphrag_eval.graph.embedded import EmbeddedEndpoint

EX = "http://example.org/ns#"
TEMPLATES = """\
prefixes:
  ex: http://example.org/ns#
templates:
  - template_id: members_of_group
    parameters: [group]
    candidates: |
      select ?group ?groupIri where { ?groupIri a ex:Group ; ex:name ?group }
    phrasings:
      - Which items belong to {{group}}?
      - List the members of group {{group}}
    reference_steps:
      - - name: iri_discovery
          args: {entity: "{{group}}"}
          output: "{{groupIri}}"
      - - name: sparql_query
          args:
            query: |
              select ?item ?name where { ?item ex:member {{groupIri}} ; ex:name ?name }
              order by ?name ?item
          required_columns: [item, name]
        - name: sparql_query
          args:
            query: |
              select (count(?item) as ?members) where { ?g ex:name {{group}} . ?item ex:member ?g }
    answer: {labels: name, step: "[1][0]", separator: " | "}
    keep: {min_rows: 0}
SAMPLE
"""

names = st.text(st.characters(exclude_categories=("Cs",)), min_size=1, max_size=12)
languages = st.sampled_from([None, "en", "nb"])


@st.composite
def graphs(draw: st.DrawFn) -> list[pyoxigraph.Triple]:
    groups = draw(st.lists(st.tuples(names, languages), min_size=1, max_size=5))
    items = draw(st.lists(st.tuples(names, st.integers(0, len(groups) - 1)), max_size=12))
    name, member = pyoxigraph.NamedNode(EX + "name"), pyoxigraph.NamedNode(EX + "member")
    kind = pyoxigraph.NamedNode("http://www.w3.org/1999/02/22-rdf-syntax-ns#type")
    triples = []
    for index, (text, language) in enumerate(groups):
        group = pyoxigraph.NamedNode(f"{EX}group{index}")
        triples.append(pyoxigraph.Triple(group, kind, pyoxigraph.NamedNode(EX + "Group")))
        triples.append(pyoxigraph.Triple(group, name, pyoxigraph.Literal(text, language=language)))
    for index, (text, group_index) in enumerate(items):
        item = pyoxigraph.NamedNode(f"{EX}item{index}")
        triples.append(pyoxigraph.Triple(item, name, pyoxigraph.Literal(text)))
        triples.append(pyoxigraph.Triple(item, member, pyoxigraph.NamedNode(f"{EX}group{group_index}")))
    return triples


@settings(max_examples=40, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(graphs(), st.one_of(st.none(), st.tuples(st.integers(1, 4), st.integers(0, 9))))
def test_every_reference_output_is_what_its_query_returns(
    triples: list[pyoxigraph.Triple], sample: tuple[int, int] | None
) -> None:
    with tempfile.TemporaryDirectory() as folder:
        graph = Path(folder) / "graph.nt"
        graph.write_bytes(pyoxigraph.serialize(triples, format=pyoxigraph.RdfFormat.N_TRIPLES) or b"")
        templates = Path(folder) / "templates.yaml"
        line = f"    sample: {{count: {sample[0]}, seed: {sample[1]}}}\n" if sample else ""
        templates.write_text(TEMPLATES.replace("SAMPLE\n", line), encoding="utf-8")
        endpoint = EmbeddedEndpoint.load(graph)
        generation = generate(load_templates(templates), endpoint)
        (outcome,) = generation.outcomes
        made = outcome.questions
        assert len(made) + len(outcome.dropped) + outcome.duplicates <= outcome.candidates
        if sample:
            assert len(made) <= sample[0]
        for question in made:
            discovery, (members, count) = question.reference_steps
            for step in (members, count):
                assert endpoint.execute(step["args"]["query"]).text == step["output"]
            rows = rows_of(members["output"])[1]
            assert question.reference_answer == " | ".join(str(row["name"]["value"]) for row in rows)
            (counted,) = rows_of(count["output"])[1]
            assert int(str(counted["members"]["value"])) >= len(rows)
            assert question.question_text.endswith(
                question.bindings["group"] + "?"
            ) or question.question_text.endswith(question.bindings["group"])
            assert discovery[0]["args"]["entity"] == question.bindings["group"]
        assert len({question.question_text for question in made}) == len(made)
        endpoint.close()
