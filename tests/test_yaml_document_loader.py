"""The document loader builds exactly what PyYAML's own safe constructors build, or refuses.

`yaml_lines._DocumentLoader` counts a document's nodes (its bounds) before PyYAML builds it;
`yaml_lines._LineLoader` is PyYAML's generic construction alone and is the reference: the loader's
document must equal its document (types included: `1`, `True` and `1.0` differ), carry the same line
on every mapping and share objects where its aliases do; where the reference raises, the loader
raises too. Documents are generated with every YAML 1.1 plain scalar form, quoted and block scalars,
block and flow collections, anchors, aliases, merge keys, tags, duplicate keys and comments, and as
random runs of syntax fragments.
"""

from __future__ import annotations

import math
from pathlib import Path
from typing import Any

import pytest
import yaml
from hypothesis import HealthCheck, example, given, settings
from hypothesis import strategies as st

from pytest_graphrag_eval.corpus import yaml_lines
from pytest_graphrag_eval.corpus.yaml_events import UNUSUAL, build_from_events

REPO = Path(__file__).resolve().parent.parent

# Every implicit form of YAML 1.1 (bool, int in bases and sexagesimal, float, null, timestamp) and text
# that looks close to one.
PLAIN = [
    "yes",
    "Yes",
    "YES",
    "no",
    "No",
    "on",
    "On",
    "OFF",
    "off",
    "y",
    "n",
    "true",
    "True",
    "FALSE",
    "false",
    "~",
    "null",
    "Null",
    "NULL",
    "0o17",
    "017",
    "08",
    "0x1F",
    "0x_1f",
    "0b101",
    "0b1_0",
    "1_000",
    "-12",
    "+7",
    "0",
    "-0",
    "00",
    "1:20",
    "190:20:30",
    "-1:30",
    "1:20.5",
    "3.14",
    ".5",
    "1e3",
    "1.0e+3",
    "6.8523015e+5",
    "685.230_15e+03",
    "-1.5E-2",
    ".inf",
    "-.Inf",
    "+.INF",
    ".NaN",
    ".nan",
    "2001-12-14",
    "2001-12-14t21:59:43.10-05:00",
    "2001-12-14 21:59:43.10 -5",
    "2002-12-14 21:59:43",
    "2001-12-14T21:59:43Z",
    "2001-1-4 1:02:03.1234567",
    "text",
    "two words",
    "AT&T",
    "SELECT ?x WHERE",
    "a:b",
    "-",
    "=",
    "é",
    "東京 タワー",
    "12:30:00",
    "1__0",
    "0.",
    "x#y",
    "http://dbpedia.org/resource/Zürich",
    "a -b",
    "O'Brien",
]
# Plain text that is not valid everywhere (indicators, comment starts): the loaders may refuse it.
RISKY_PLAIN = ["@x", "`x", "%x", "!x", "&x", "*x", "-x", "x #y", "[x", "x]", "{x", "x,y", "? x", ": x", "x:"]
TEXTS = st.text(st.characters(codec="utf-8", exclude_categories=("Cs",)), max_size=12)
KEYS = ["a", "b", "id", "1", "yes", "~", "'a'", '"b"', "<<", "0x1", "1.0", "x y"]
ESCAPES = [
    "\\n",
    "\\t",
    "\\\\",
    '\\"',
    "\\x41",
    "\\u00e9",
    "\\U0001F600",
    "\\N",
    "\\_",
    "\\L",
    "\\P",
    "\\0",
    "\\e",
    "\\/",
    "\\ ",
]


@st.composite
def scalars(draw: st.DrawFn, flow: bool) -> str:
    """One scalar as written: plain, single- or double-quoted (escapes, line breaks), or a block scalar."""
    form = draw(
        st.sampled_from(
            ["plain", "plain", "risky", "single", "double", "block"]
            if not flow
            else ["plain", "plain", "risky", "single", "double"]
        )
    )
    if form == "plain":
        return draw(st.sampled_from(PLAIN))
    if form == "risky":
        return draw(st.sampled_from(RISKY_PLAIN))
    text = draw(TEXTS)
    if form == "single":
        text = text.replace("'", "''")
        return "'" + draw(st.sampled_from([text, text + "\n  more", "first\n\n  second " + text])) + "'"
    if form == "double":
        body = "".join(
            draw(
                st.lists(
                    st.one_of(
                        st.sampled_from(ESCAPES), TEXTS.map(lambda t: t.replace("\\", "").replace('"', ""))
                    ),
                    max_size=4,
                )
            )
        )
        return '"' + draw(st.sampled_from([body, body + "\n  more", body + "\\\n  joined"])) + '"'
    indicator = draw(st.sampled_from(["|", "|-", "|+", ">", ">-", ">+", "|2"]))
    lines = draw(
        st.lists(st.sampled_from(["line", "  indented", "", "last one", "é ü"]), min_size=1, max_size=4)
    )
    return indicator + "\n" + "\n".join(lines) + "\n"


class Writer:
    """Renders a generated document, drawing its choices as it goes (anchors, aliases, layout)."""

    def __init__(self, draw: st.DrawFn):
        self.draw = draw
        self.anchors: list[str] = []

    def node(self, depth: int, flow: bool) -> tuple[str, str]:
        """(kind, text): kind is 'scalar', 'alias', 'block' (a block collection) or 'flow'."""
        draw = self.draw
        choice = draw(
            st.sampled_from(["scalar", "scalar", "alias", "seq", "map"] if depth < 3 else ["scalar", "alias"])
        )
        prefix = ""
        if choice != "alias" and draw(st.integers(0, 5)) == 0:
            prefix = (
                draw(st.sampled_from(["!!str ", "!!int ", "!custom ", "!!python/name:os.system "]))
                if draw(st.booleans()) and choice == "scalar"
                else ""
            )
            if not prefix:
                name = f"a{len(self.anchors)}" if draw(st.integers(0, 6)) else "a0"
                prefix = f"&{name} "
                self.anchors.append(name)
        if choice == "alias":
            if self.anchors and draw(st.integers(0, 9)):
                return "alias", "*" + draw(st.sampled_from(self.anchors))
            return "scalar", draw(scalars(flow))
        if choice == "scalar":
            text = draw(scalars(flow))
            return ("block" if text.startswith(("|", ">")) else "scalar"), prefix + text
        if flow or draw(st.booleans()):
            return "flow", prefix + self.flow(choice, depth)
        return "block", prefix.rstrip() + ("\n" if prefix else "") + self.block(choice, depth)

    def flow(self, kind: str, depth: int) -> str:
        items = []
        for _ in range(self.draw(st.integers(0, 3))):
            value = self.node(depth + 1, flow=True)[1]
            items.append(f"{self.draw(st.sampled_from(KEYS))}: {value}" if kind == "map" else value)
        separator = self.draw(st.sampled_from([", ", ",\n  ", ","]))
        opening, closing = ("{", "}") if kind == "map" else ("[", "]")
        return opening + separator.join(items) + closing

    def block(self, kind: str, depth: int) -> str:
        lines = []
        for _ in range(self.draw(st.integers(1, 3))):
            value_kind, value = self.node(depth + 1, flow=False)
            lead = f"{self.draw(st.sampled_from(KEYS))}:" if kind == "map" else "-"
            comment = self.draw(st.sampled_from(["", "", " # note"]))
            if value_kind == "block" and not value.startswith(("|", ">")):
                if kind == "seq" and self.draw(st.booleans()) and not value.startswith(("&", "!")):
                    lines.append(f"- {indent(value, 2).lstrip()}")  # a compact collection in a sequence
                else:
                    lines.append(f"{lead}{comment}\n{indent(value, 2)}")
            elif value_kind == "block":
                lines.append(f"{lead} {indent(value, 2).lstrip()}")
            else:
                lines.append(f"{lead} {value}{comment}")
        return "\n".join(lines) + "\n"


def indent(text: str, spaces: int) -> str:
    return "\n".join((" " * spaces + line) if line else line for line in text.rstrip("\n").split("\n")) + "\n"


@st.composite
def documents(draw: st.DrawFn) -> str:
    writer = Writer(draw)
    kind = draw(st.sampled_from(["map", "seq"]))
    text = writer.block(kind, 0) if draw(st.integers(0, 3)) else writer.flow(kind, 0)
    return draw(st.sampled_from(["", "# header\n", "\n"])) + text


def canonical(value: Any, seen: dict[int, int] | None = None) -> Any:
    """A comparable picture of a built document: types, lines, NaN, and which containers are shared."""
    seen = {} if seen is None else seen
    if isinstance(value, (dict, list)):
        if id(value) in seen:
            return ("shared", seen[id(value)])
        seen[id(value)] = len(seen)
        if isinstance(value, dict):
            items = tuple((canonical(key, seen), canonical(item, seen)) for key, item in value.items())
            return (type(value).__name__, getattr(value, "line", None), items)
        return ("list", tuple(canonical(item, seen) for item in value))
    if isinstance(value, float) and math.isnan(value):
        return ("float", "nan")
    return (type(value).__name__, repr(value))


def built_by(data: bytes, loader: type[yaml_lines._LineLoader]) -> Any:
    """What `loader` builds from the document, or that it refused it."""
    try:
        return canonical(yaml.load(data, Loader=loader))
    except Exception as error:  # PyYAML's constructors raise more than YAMLError
        return ("refused", type(error).__name__)


def assert_built_as_pyyaml_builds(data: bytes) -> bool:
    """The loader's document equals the reference's, or both refuse; True when one was built. Where
    the events alone build it, that document is the reference's too."""
    ours = built_by(data, yaml_lines._DocumentLoader)
    reference = built_by(data, yaml_lines._LineLoader)
    from_events = build_from_events(data, yaml_lines.MAX_YAML_NODES)
    if from_events is not UNUSUAL:
        assert canonical(from_events) == reference, data.decode("utf-8", "replace")
    if ours[0] == "refused":
        # Ours says what is wrong in YAMLError's terms; the reference may build a recursive sequence
        # (PyYAML's two-step constructors allow one) where the loader refuses a recursive alias.
        assert ours[1] in (
            "YamlBoundsError",
            "ScannerError",
            "ParserError",
            "ComposerError",
            "ConstructorError",
            "ReaderError",
        ), ours
        assert reference[0] == "refused" or ours[1] == "YamlBoundsError", data
        return False
    assert ours == reference, data.decode("utf-8", "replace")
    return True


@settings(
    max_examples=600, deadline=None, suppress_health_check=[HealthCheck.too_slow, HealthCheck.filter_too_much]
)
@given(documents())
def test_generated_documents_build_as_pyyaml_builds_them(text: str) -> None:
    assert_built_as_pyyaml_builds(text.encode("utf-8"))


FRAGMENTS = [
    "a",
    "b: ",
    "- ",
    "  ",
    "\n",
    "\n  ",
    ": ",
    ", ",
    "[",
    "]",
    "{",
    "}",
    "'",
    '"',
    "''",
    "? ",
    "&x ",
    "*x",
    "!!str ",
    "<<: ",
    "# c",
    "|\n",
    ">-\n",
    "yes",
    "1:20",
    "0o17",
    "\\",
    "é",
    "---",
    "...",
    "x: y",
]


@settings(max_examples=600, deadline=None)
@given(st.lists(st.sampled_from(FRAGMENTS), max_size=16))
def test_runs_of_syntax_fragments_build_as_pyyaml_builds_them(fragments: list[str]) -> None:
    assert_built_as_pyyaml_builds("".join(fragments).encode("utf-8"))


EVERY_FORM = (
    "values:\n"
    + "".join(f"  k{index}: {text}\n" for index, text in enumerate(PLAIN) if text not in "-=")
    + (
        "shared: &meta {source: kgqa, split: test}\n"
        "again: *meta\n"
        "quoted: ['it''s', \"\\u00e9\\t\", 'two\n  lines']\n"
        "block: |\n  SELECT ?x\n  WHERE { ?x a ?c }\n"
        "folded: >-\n  one\n  two\n"
        'nested:\n- - {name: sparql_query, output: \'{"head": {"vars": ["x"]}}\'}\n  - name: x\n    n: 1\n'
        "empty: {}\n"
        "multi: {a: 1,\n  b: 2}\n"
        "anchored_block: &blk\n  x: 1\nagain_block: *blk\n"
    )
)


def test_every_yaml_11_scalar_form_and_layout_is_built_as_pyyaml_builds_it() -> None:
    """Not a vacuous property: the common forms are built, not refused, and from the events alone."""
    assert assert_built_as_pyyaml_builds(EVERY_FORM.encode("utf-8"))
    assert build_from_events(EVERY_FORM.encode("utf-8"), yaml_lines.MAX_YAML_NODES) is not UNUSUAL


@pytest.mark.parametrize(
    "text",
    [
        "a: !!str 1\n",  # a tag
        "base: &b [x]\nm:\n  <<: *b\n",  # a merge of a list that is not of mappings
        "m: {<<: 1}\n",  # a merge of a scalar
        "m: {<<: [{a: 1}, [b]]}\n",  # a merge of a list holding another list
        "a: &a {k: 1}\nb: &b {j: 2}\nm: {<<: [*a, *b]}\n",  # two listed: PyYAML's releases order them apart
        "a: &a {kk: 1}\nm: {<<: *a, <<: {kk: 2}}\n",  # a key two merges hold: settled by string identity
        "a: &a {k: 1}\nb: &b {<<: *a, k: 2}\nc: {<<: *b}\n",  # so is a merged mapping's own override
        "a: 1\na: 2\n",  # a repeated key
        "1: x\n",  # a key that is not text
        "a: &x 1\nb: &x 2\n",  # an anchor defined twice
        "a: *nowhere\n",  # an unknown alias
        "a: &x [*x]\n",  # an alias inside the node it names
        "a: 2001-13-45\n",  # a value its constructor refuses
        "a: 1\n---\nb: 2\n",  # two documents
        "a: [1\n",  # not YAML
        "? [a]\n: x\n",  # a collection as a key
    ],
)
def test_what_the_events_do_not_build_is_left_to_the_node_loader(text: str) -> None:
    assert build_from_events(text.encode("utf-8"), yaml_lines.MAX_YAML_NODES) is UNUSUAL


MERGES = (
    "base: &b {x: 1, y: [1]}\nm:\n  y: 2\n  <<: *b\n  z: 3\n",  # merged first, the mapping's own win
    "a: &a {k: 1}\nb: &b {<<: *a, j: 2}\nc: {<<: *b, <<: {i: 0}, k: 3}\n",  # merged merges, two merge keys
    "s: &s [{kk: 2, l: 3}]\nm: {<<: *s}\nn: {'<<': 1}\nv: {<<: []}\n",  # a listed anchor, quoted <<
    "- name: q\n  <<: &step {media: json, ordered: false}\n- name: r\n  <<: *step\n  ordered: true\n",
)


@pytest.mark.parametrize("text", MERGES)
def test_merge_keys_are_built_from_the_events_as_pyyaml_builds_them(text: str) -> None:
    """A hand-written corpus's `<<: *defaults` keeps it on the event path (no node graph to compose)."""
    assert build_from_events(text.encode("utf-8"), yaml_lines.MAX_YAML_NODES) is not UNUSUAL
    assert assert_built_as_pyyaml_builds(text.encode("utf-8"))


MERGE_KEYS = ["k", "kk", "name", "'<<'"]


@st.composite
def merging_documents(draw: st.DrawFn) -> str:
    """Anchored mappings merging earlier ones: one or several merge keys, lists of them, the mapping's
    own keys before and after (overriding or not), keys of one character (a string CPython shares)
    and longer, aliases of lists."""
    lines: list[str] = []
    for index in range(draw(st.integers(1, 5))):
        own = draw(st.lists(st.sampled_from(MERGE_KEYS), unique=True, max_size=3))
        pairs = [f"{key}: {draw(st.integers(0, 9))}" for key in own]
        if index:
            earlier = st.integers(0, index - 1).map(lambda number: f"*m{number}")
            listed = st.lists(earlier, max_size=3).map(lambda items: f"[{', '.join(items)}]")
            pairs += [f"<<: {merged}" for merged in draw(st.lists(earlier | listed, max_size=2))]
        lines.append(f"m{index}: &m{index} {{{', '.join(draw(st.permutations(pairs)))}}}")
    if draw(st.booleans()):
        lines.append("list: &l [*m0]\nlast: {<<: *l}")
    return "\n".join(lines) + "\n"


@settings(max_examples=400, deadline=None)
@given(merging_documents())
@example("m0: &m0 {k: 1}\nm1: &m1 {<<: *m0, k: 2}\nm2: &m2 {<<: *m1}\n")
def test_merges_build_as_pyyaml_builds_them(text: str) -> None:
    """The event path takes the merges it can build exactly and leaves the rest: either way, PyYAML's
    document (with PyYAML 6.0.4's quirks: a listed mapping order and keys settled by string identity)."""
    assert_built_as_pyyaml_builds(text.encode("utf-8"))


def test_the_event_path_counts_aliases_against_the_bound() -> None:
    small = b"a: &a [x, x]\nb: [*a, *a]\n"  # 1 + 2 keys + 3 + (1 + 2 * 3): 13 nodes
    assert build_from_events(small, 13) is not UNUSUAL
    assert build_from_events(small, 12) is UNUSUAL


CORPUS_FILES = sorted(
    path
    for folder in ("tests", "example_project")
    for pattern in ("*.yaml", "*.yml")
    for path in (REPO / folder).rglob(pattern)
    if ".venv" not in path.parts
)


@pytest.mark.parametrize("path", CORPUS_FILES, ids=lambda path: str(path.relative_to(REPO)))
def test_the_repository_yaml_files_build_as_pyyaml_builds_them(path: Path) -> None:
    """The graphrag-eval conformance inputs, the corpora of the tests and the example project."""
    assert_built_as_pyyaml_builds(path.read_bytes())
