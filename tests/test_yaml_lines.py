"""The YAML loader builds what PyYAML's own constructors build, with its bounds kept.

`_DocumentLoader` counts the nodes before PyYAML builds them and must give PyYAML's values, lines
and shared objects; `flow_depth` must give the bracket depth the loader's bound is defined on.
"""

from __future__ import annotations

import itertools
from pathlib import Path
from typing import Any

import pytest
import yaml

from pytest_graphrag_eval.corpus import yaml_lines
from pytest_graphrag_eval.corpus.input_files import decode_input
from pytest_graphrag_eval.corpus.yaml_lines import (
    flow_depth,
    load_yaml_with_lines,
    parse_yaml_with_lines,
)
from pytest_graphrag_eval.errors import CorpusError, SourceLocation

ALIASED = [
    "a: &x 1\nb: *x\n",
    "- &x [1, 2]\n- *x\n",
    "[&x a, *x]",
    "{a: &x 1, b: *x}",
    '{"a":&x [1], "b":*x}',  # after a colon in flow context, no space needed
    "['q', &x 1,*x]",
    "[? &x a : 1, *x]",
    "- &x {a: 1}\n- {b: *x}\n- *x\n",
    "base: &b {x: 1}\nm:\n  <<: *b\n  y: 2\nn: *b\n",  # a merge key, then the alias again
    "x: &y {a: 1}\nz: {1: *y}\nw: *y\n",  # a mapping PyYAML builds (a number as key) shares it too
    "s: &s !!set {a, b}\nt: [*s]\n",
    "d: &d {a: 1, b: [x]}\ne: &e {<<: *d, b: [y], c: 2}\nf: {<<: [*e, {z: 0}], a: 3}\ng: *e\n",
    "d: &d {a: 1}\ne: {<<: *d, 1: one}\n",  # flattened, then built by PyYAML (a number as key)
]


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
    with pytest.raises(CorpusError, match="alias bomb") as raised:
        parse_yaml_with_lines(bomb, "corpus.yaml", CorpusError)
    # `f` (line 7) names 1,111,111 nodes: the second alias to it passes the bound, which is said there
    assert raised.value.location == SourceLocation("corpus.yaml", 7)


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


@pytest.mark.parametrize("text", [*TREES, *ALIASED])
def test_the_document_loader_builds_what_pyyaml_builds(text: str) -> None:
    assert outcome(text, yaml_lines._DocumentLoader) == outcome(text, yaml_lines._LineLoader)


@pytest.mark.parametrize("text", ALIASED)
def test_what_an_alias_names_is_one_object_as_in_pyyaml(text: str) -> None:
    assert shared_objects(yaml.load(text, Loader=yaml_lines._DocumentLoader)) == shared_objects(
        yaml.load(text, Loader=yaml_lines._LineLoader)
    )


def shared_objects(value: Any) -> list[int]:
    """For each container in document order, the index of its first occurrence (sharing made visible)."""
    first: dict[int, int] = {}
    order: list[int] = []
    pending = [value]
    while pending:
        item = pending.pop()
        if isinstance(item, (dict, list)):
            seen_before = id(item) in first
            order.append(first.setdefault(id(item), len(first)))
            if not seen_before:
                pending.extend(reversed(list(item.values()) if isinstance(item, dict) else item))
    return order


@pytest.mark.parametrize(
    ("text", "line", "message"),
    [
        ("a: 1\nb: 2001-13-45\n", 2, "'2001-13-45' is not a valid !!timestamp value"),
        ("a: !!int x\n", 1, "'x' is not a valid !!int value"),
        ("- ok\n- !!bool maybe\n", 2, "'maybe' is not a valid !!bool value"),
        ("a: !!float x\n", 1, "'x' is not a valid !!float value"),
    ],
)
def test_a_value_its_constructor_refuses_is_an_error_at_its_line(text: str, line: int, message: str) -> None:
    """PyYAML's constructors raise ValueError or KeyError on these: the loader says where and what."""
    with pytest.raises(CorpusError) as raised:
        parse_yaml_with_lines(text, "corpus.yaml", CorpusError)
    assert raised.value.location == SourceLocation("corpus.yaml", line)
    assert message in str(raised.value)


def test_a_bomb_of_merge_keys_is_refused_before_it_is_flattened() -> None:
    """Each level merges ten copies of the one before: 10^10 pairs if flattened."""
    bomb = "a: &a {k0: x, k1: x}\n" + "".join(
        f"{name}: &{name} {{<<: [{', '.join(['*' + prev] * 10)}], {name}: x}}\n"
        for prev, name in zip("abcdefghi", "bcdefghij", strict=True)
    )
    with pytest.raises(CorpusError, match="alias bomb"):
        parse_yaml_with_lines(bomb, "corpus.yaml", CorpusError)


def test_a_mapping_that_merges_itself_is_a_recursive_alias() -> None:
    with pytest.raises(CorpusError, match="recursive alias"):
        parse_yaml_with_lines("a: &a {<<: *a, b: 1}\n", "corpus.yaml", CorpusError)


def test_an_alias_counts_as_the_nodes_it_names() -> None:
    small = "a: &a [x, x]\nb: [*a, *a]\n"  # root 1, keys 2, [x, x] 3, [*a, *a] 1 + 2 * 3 = 7: 13 nodes
    loader = yaml_lines._DocumentLoader(small)
    try:
        loader.get_single_data()
        assert loader.nodes == 13
    finally:
        loader.dispose()


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
