"""The YAML loader's cheap pre-checks decide exactly as the full checks would.

`may_have_aliases` lets a document skip the alias-expansion check, so it must never
say False for a text whose composed tree shares a node (an anchor used by an alias);
`flow_depth` must give the bracket depth the loader's bound is defined on.
"""

from __future__ import annotations

import itertools
from pathlib import Path
from typing import Any

import pytest
import yaml
from hypothesis import given, settings
from hypothesis import strategies as st

from pytest_graphrag_eval.corpus import yaml_lines
from pytest_graphrag_eval.corpus.input_files import decode_input
from pytest_graphrag_eval.corpus.yaml_lines import (
    flow_depth,
    load_yaml_with_lines,
    may_have_aliases,
    parse_yaml_with_lines,
)
from pytest_graphrag_eval.errors import CorpusError, SourceLocation

ALIASED = [
    "a: &x 1\nb: *x\n",
    "- &x [1, 2]\n- *x\n",
    "[&x a, *x]",
    "{a: &x 1, b: *x}",
    '{"a":&x [1], "b":*x}',  # after a colon in flow context, no space needed
    "['q'\t, &x 1,*x]",
    "[? &x a : 1, *x]",
    "\ufeff&x [*x]",  # BOM, then an anchor at the start
    "- &x a\n-\u2028*x",
    "- &a [*a]\n",
]
NOT_ALIASED = [
    "iri: http://dbpedia.org/resource/AT&T\nquery: SELECT * WHERE { ?s ?p ?o }\n",
    "q: 'FILTER(?a && ?b)'\n",  # an anchor-like token, but no alias-like one
    "q: 'SELECT ?x WHERE { ?x rdfs:subClassOf* ?c }'\n",
    "a: Procter_&_Gamble\nb: x*y\n",
    "",
]


@pytest.mark.parametrize("text", ALIASED)
def test_texts_with_anchors_and_aliases_are_checked(text: str) -> None:
    assert may_have_aliases(text)


@pytest.mark.parametrize("text", NOT_ALIASED)
def test_texts_without_them_are_not(text: str) -> None:
    assert not may_have_aliases(text)


def shares_a_node(text: str) -> bool:
    """Whether the composed document reaches some node twice (what only an alias can do)."""
    root = yaml.compose(text, Loader=yaml.SafeLoader)
    seen: set[int] = set()
    stack = [root] if root is not None else []
    while stack:
        node = stack.pop()
        if id(node) in seen:
            return True
        seen.add(id(node))
        if isinstance(node, yaml.SequenceNode):
            stack.extend(node.value)
        elif isinstance(node, yaml.MappingNode):
            stack.extend(item for pair in node.value for item in pair)
    return False


FRAGMENTS = [
    "&x ",
    "*x",
    "AT&T",
    "SELECT *",
    "a",
    " ",
    "\n",
    "- ",
    ": ",
    ", ",
    "[",
    "]",
    "{",
    "}",
    "'",
    '"',
    "?",
]


@settings(max_examples=400, deadline=None)
@given(st.lists(st.sampled_from(FRAGMENTS), max_size=14))
def test_a_text_said_to_have_no_aliases_shares_no_node(fragments: list[str]) -> None:
    text = "".join(fragments)
    try:
        shared = shares_a_node(text)
    except (yaml.YAMLError, RecursionError):
        return  # not YAML: the loader reports the syntax error either way
    assert may_have_aliases(text) or not shared


def depth_by_definition(text: str) -> int:
    steps = {"[": 1, "{": 1, "]": -1, "}": -1}
    return max(itertools.accumulate(steps[char] for char in text if char in steps), default=0)


@pytest.mark.parametrize(
    "text", ["", "a: b", "[[{}]]", "]]][[", '{"é": ["東京", {"x": "[["}]}', "x: '}'\n" + "[" * 600, "\ud800["]
)
def test_flow_depth_is_the_running_bracket_count(text: str) -> None:
    assert flow_depth(text) == depth_by_definition(text)


def test_the_alias_bomb_is_still_refused_among_ampersands_in_scalars() -> None:
    bomb = "iri: AT&T\na: &a [x, x, x, x, x, x, x, x, x, x]\n" + "".join(
        f"{name}: &{name} [{', '.join(['*' + prev] * 10)}]\n"
        for prev, name in zip("abcdefghi", "bcdefghij", strict=True)
    )
    with pytest.raises(CorpusError, match="alias bomb"):
        parse_yaml_with_lines(bomb, "corpus.yaml", CorpusError)


TREES = [
    "- template_id: t\n  questions:\n  - {id: q1, question_text: 'Why?', k: 5, ok: true, none: null}\n",
    "a: 1\nb: 1.5\nc: yes\nd: ~\ne: 2025-03-01\nf: '1'\ng: \"x\"\nh: |\n  block\ni: [1, two, 3.0]\n",
    "base: {x: 1}\nmerged:\n  <<: {y: 2}\n  z: 3\n",  # a merge key (no alias needed)
    "1: int key\ntrue: bool key\n? [a, b]\n: complex key\n",
    "tagged: !!str 12\nbinary: !!binary aGVsbG8=\nset: !!set {a, b}\nomap: !!omap [{a: 1}]\n",
    "a: 1\nb: 2\na: 3\n",  # a duplicate key
    "- !!python/object:os.system {}\n",
    "nested:\n- - {name: sparql_query, output: '{\"head\": {}}'}\n  - {name: x}\n",
    "",
    "just text",
    # plain scalars of every implicit kind, some repeated (each value's tag is looked up once)
    "a: [0x1F, 0o17, 017, 1_000, .inf, -.Inf, .nan, on, off, No, ~, null, '', 2025-03-01 10:00:00]\n"
    "b: [0x1F, on, '0x1F', \"on\", =, -, 1e3, 1.0e+3, +12]\nc:\nd: {e: , f: [], g: {}}\n",
]


def lines_of(value: Any) -> list[int | None]:
    found: list[int | None] = []
    pending = [value]
    while pending:
        item = pending.pop()
        if isinstance(item, dict):
            found.append(getattr(item, "line", None))
            pending.extend(item.values())
        elif isinstance(item, list):
            pending.extend(item)
    return found


def outcome(text: str, loader: Any) -> Any:
    try:
        value = yaml.load(text, Loader=loader)
    except yaml.YAMLError as error:
        return ("error", str(error))
    return (repr(value), lines_of(value))


@pytest.mark.parametrize("text", TREES)
def test_the_tree_loader_builds_what_pyyaml_builds(text: str) -> None:
    assert outcome(text, yaml_lines._TreeLineLoader) == outcome(text, yaml_lines._LineLoader)


@pytest.mark.parametrize("text", [*ALIASED, *NOT_ALIASED, "a: x\u3000&y\nb: \u3000*y\n"])
def test_the_bytes_of_a_text_are_at_least_as_suspect_as_the_text(text: str) -> None:
    """In UTF-8 bytes a non-ASCII character before `&` or `*` may be a space: counted as a token."""
    encoded = text.encode("utf-8")
    assert may_have_aliases(encoded) >= may_have_aliases(text)
    assert may_have_aliases(encoded) == may_have_aliases(text) or not text.isascii()
    assert flow_depth(encoded) == flow_depth(text)


def by_the_text_path(data: bytes) -> Any:
    """What the loader gave before files went to LibYAML as bytes: decode, then parse the text."""
    try:
        text = decode_input(data, SourceLocation("f.yaml"), CorpusError, "corpus file")
        value = parse_yaml_with_lines(text, "f.yaml", CorpusError)
    except CorpusError as error:
        return ("error", str(error))
    return (repr(value), lines_of(value))


def by_the_file(tmp_path: Path, data: bytes) -> Any:
    path = tmp_path / "f.yaml"
    path.write_bytes(data)
    try:
        value = load_yaml_with_lines(path, shown="f.yaml", error_type=CorpusError, what="corpus file")
    except CorpusError as error:
        return ("error", str(error))
    return (repr(value), lines_of(value))


FILES = [
    *(text.encode() for text in TREES),
    "- id: München\n  q: 'AT&T 東京'\n  n: 3\n".encode(),
    b"a: [1\nb: \xff\n",  # a syntax error before bytes that are not UTF-8: the encoding is said first
    b"a: 1\nb: \xed\xa0\x80\n",  # an encoded surrogate
    b"a: 1\nb: \xc0\xaf\n",  # an overlong encoding
    b"a: \x07\n",  # a control character
    b"a: 1\x00\n",
    "\ufeffa: 1\n".encode(),
    "a: 1\n".encode("utf-16"),
    b"a: {b: [" * 300 + b"\n",
    b"a: 1\na: 2\n",
    b"- &x [1]\n- *x\n",
    b"\xef\xbb",  # a BOM cut short
]


@pytest.mark.parametrize("data", FILES)
def test_a_file_loads_as_its_decoded_text_does(tmp_path: Path, data: bytes) -> None:
    assert by_the_file(tmp_path, data) == by_the_text_path(data)
