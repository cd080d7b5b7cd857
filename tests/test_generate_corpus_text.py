"""The generated corpus's YAML writer: any texts (quotes, line breaks, control and format characters,
lone surrogates, YAML indicators, words YAML reads as booleans or numbers) read back as written."""

from __future__ import annotations

import json

import yaml
from hypothesis import example, given, settings
from hypothesis import strategies as st

from pytest_graphrag_eval.generate.corpus_text import Skeleton, Slot, corpus_header, yaml_items

texts = st.one_of(
    st.text(),
    st.sampled_from(
        ["yes", "No", "null", "~", "1e3", "0x1F", "2024-01-01", "- a", "a: b", "a #b", "|", "'", "?"]
    ),
    st.text(
        st.sampled_from(
            ["a", " ", "\n", "\t", "\r", "\x85", "\u2028", "\ufeff", "\ud800", "'", '"', ":", "#", "-"]
        )
    ),
)
scalars = st.one_of(texts, st.integers(), st.booleans(), st.none(), st.floats(allow_nan=False))
values = st.recursive(
    scalars,
    lambda children: st.one_of(st.lists(children, max_size=4), st.dictionaries(texts, children, max_size=4)),
    max_leaves=12,
)


@settings(max_examples=300, deadline=None)
@given(st.lists(st.dictionaries(texts, values, max_size=5), max_size=4))
def test_any_corpus_data_reads_back_equal(corpus: list[dict[str, object]]) -> None:
    assert yaml.safe_load(corpus_header("templates.yaml") + yaml_items(corpus, "")) == (corpus or None)


def test_a_query_is_a_literal_block_and_an_output_one_single_quoted_line() -> None:
    text = yaml_items([{"query": "select *\nwhere { ?s ?p ?o }\n", "output": '{"a": "it\'s"}'}], "")
    assert text.endswith("- query: |\n    select *\n    where { ?s ?p ?o }\n  output: '{\"a\": \"it''s\"}'\n")


# Names, ids, IRIs and media types: the texts the writer's cheap check passes, and its near misses.
PLAIN_LIKE = st.from_regex(r"[A-Za-z]+[0-9 ,.?:#+=&%~/()-][a-z0-9 ,.?:#+=&%~/()-]*", fullmatch=True)


@settings(max_examples=300, deadline=None)
@given(st.lists(st.one_of(texts, PLAIN_LIKE)))
def test_a_skeleton_filled_is_the_data_written(filled: list[str]) -> None:
    """A question written into its template's skeleton is byte for byte the writer's text of its data."""
    shape = {"id": Slot(0), "steps": [[{"name": "fixed", "args": [Slot(i) for i in range(1, len(filled))]}]]}
    data = {"id": filled[0] if filled else "", "steps": [[{"name": "fixed", "args": filled[1:]}]]}
    skeleton = Skeleton.of(shape, "  ")
    assert "".join(skeleton.fill(filled or [""])) == yaml_items([data], "  ")


@settings(max_examples=300, deadline=None)
@given(st.lists(values, min_size=1, max_size=4))
@example([1e-05])  # JSON that YAML reads as plain text: never skips the writer's check
def test_a_json_output_skips_the_printable_scan_only_when_it_may(outputs: list[object]) -> None:
    """A step's output (JSON, as the engines' writer or json.dumps gives it: DEL, C1 controls, quotes and
    line breaks inside) is written into a skeleton exactly as the writer writes any text."""
    filled = ["q1", *(json.dumps(output, ensure_ascii=False) for output in outputs)]
    shape = {"id": Slot(0), "outputs": [Slot(i, json=True) for i in range(1, len(filled))]}
    data = {"id": "q1", "outputs": filled[1:]}
    assert "".join(Skeleton.of(shape, "  ").fill(filled)) == yaml_items([data], "  ")


def test_a_blank_line_of_a_literal_block_is_written_empty() -> None:
    """Only the lines with text take the block's indent: the corpus bytes stay what they were."""
    text = yaml_items([{"query": "select *\n\n\nwhere {\n  ?s ?p ?o\n}"}], "  ")
    assert text == "  - query: |-\n      select *\n\n\n      where {\n        ?s ?p ?o\n      }\n"
