"""Bounded YAML loading that remembers the line of every mapping, so errors point at their line.

Untrusted YAML is kept within bounds (size, alias expansion, nesting, repeated keys) and only
LibYAML parses, which raises on bad input: no parser here can end the process.
"""

from __future__ import annotations

import array
import itertools
from pathlib import Path
from typing import Any

import yaml

from pytest_graphrag_eval.corpus.input_files import (
    BYTE_ORDER_MARKS,
    ErrorFactory,
    decode_input,
    read_input_bytes,
)
from pytest_graphrag_eval.corpus.yaml_events import UNUSUAL, LineDict, build_from_events
from pytest_graphrag_eval.errors import InputError, SourceLocation

MAX_YAML_NODES = 2_000_000
# LibYAML composes recursively in C: a few hundred thousand nested brackets crash the process.
MAX_YAML_DEPTH = 500
# Flow brackets as signed steps (+1 opens, -1 as the byte 0xFF closes); every other byte is dropped.
_BRACKETS_AS_STEPS = bytes.maketrans(b"[{]}", b"\x01\x01\xff\xff")
_NOT_BRACKET_BYTES = bytes(byte for byte in range(256) if byte not in b"[]{}")
_MERGE_TAG = "tag:yaml.org,2002:merge"
_SCALARS = frozenset({str, int, float, bool, type(None)})  # what `to_plain` returns as it is


class YamlBoundsError(yaml.YAMLError):
    """The document is syntactically fine but cannot be built: too large once expanded, recursive,
    a repeated key, or a value its tag's constructor refuses."""

    def __init__(self, problem: str, mark: yaml.Mark | None = None):
        super().__init__(problem)
        self.problem = problem
        self.problem_mark = mark


try:  # LibYAML's parser (in PyYAML's wheels) reads large corpora several times faster.
    from yaml import CSafeLoader as _SafeLoader
except ImportError:  # PyYAML built without LibYAML
    from yaml import SafeLoader as _SafeLoader  # type: ignore[assignment]


class _LineLoader(_SafeLoader):
    """SafeLoader whose mappings become `LineDict`s: PyYAML's generic construction, which
    `_DocumentLoader` bounds."""


def _construct_line_mapping(loader: _LineLoader, node: yaml.MappingNode) -> LineDict:
    _check_duplicate_keys(node)
    mapping = LineDict(loader.construct_mapping(node, deep=True))
    mapping.line = node.start_mark.line + 1
    return mapping


_LineLoader.add_constructor(yaml.resolver.BaseResolver.DEFAULT_MAPPING_TAG, _construct_line_mapping)


class _DocumentLoader(_LineLoader):
    """`_LineLoader` that counts the document's nodes before PyYAML builds it (an alias as all the nodes
    it names, so an alias bomb is refused unexpanded), and says at its node what a constructor refuses."""

    def construct_document(self, node: yaml.Node) -> Any:
        self.nodes = 1  # the document's nodes so far, as they would be built
        self._count(node, {}, set())
        return super().construct_document(node)

    def construct_object(self, node: yaml.Node, deep: bool = False) -> Any:
        try:
            return super().construct_object(node, deep)
        except (yaml.YAMLError, RecursionError, MemoryError):
            raise
        except Exception as error:  # PyYAML's constructors raise ValueError, KeyError... on bad values
            raise YamlBoundsError(_unbuildable(node, error), node.start_mark) from None

    def _count(self, node: yaml.Node, sizes: dict[yaml.Node, int], open_nodes: set[yaml.Node]) -> None:
        """Count `node`'s children, then theirs; `sizes` holds each collection's nodes once expanded."""
        if node in sizes:  # reached again through an alias
            self.nodes += sizes[node] - 1
            if self.nodes > MAX_YAML_NODES:
                raise YamlBoundsError(
                    f"the document expands to more than {MAX_YAML_NODES:,} values once its aliases are "
                    "followed (nested anchors and aliases, an 'alias bomb'?)",
                    node.start_mark,
                )
            return
        if node in open_nodes:
            raise YamlBoundsError(
                "an alias refers to a node that contains it (recursive alias)", node.start_mark
            )
        children = _children(node)
        if children:
            open_nodes.add(node)
            before = self.nodes
            self.nodes += len(children)
            for child in children:
                self._count(child, sizes, open_nodes)
            open_nodes.discard(node)
            sizes[node] = 1 + self.nodes - before


def _unbuildable(node: yaml.Node, error: Exception) -> str:
    """What a constructor's refusal of `node` says: the value (shortened), its tag, and why."""
    tag = node.tag.removeprefix("tag:yaml.org,2002:")
    tag = "!!" + tag if tag != node.tag else tag
    if isinstance(node, yaml.ScalarNode):
        shown = node.value if len(node.value) <= 60 else node.value[:57] + "..."
        return f"{shown!r} is not a valid {tag} value ({error})"
    return f"this {tag} node cannot be built ({error})"


def _check_duplicate_keys(node: yaml.MappingNode) -> None:
    seen: dict[tuple[str, str], int] = {}
    for key_node, _ in node.value:
        if not isinstance(key_node, yaml.ScalarNode) or key_node.tag == _MERGE_TAG:
            continue
        key = (key_node.tag, key_node.value)
        line = key_node.start_mark.line + 1
        if key in seen:
            raise YamlBoundsError(
                f"key {key_node.value!r} appears twice in one mapping (lines {seen[key]} and {line})",
                key_node.start_mark,
            )
        seen[key] = line


def _children(node: yaml.Node) -> list[yaml.Node]:
    if isinstance(node, yaml.SequenceNode):
        return list(node.value)
    if isinstance(node, yaml.MappingNode):
        return [item for pair in node.value for item in pair]
    return []


def flow_depth(text: str | bytes) -> int:
    """The deepest nesting of flow brackets over the whole text (brackets in strings too), cheaply
    from the UTF-8 bytes: an over-estimate at worst."""
    encoded = text if isinstance(text, bytes) else text.encode("utf-8", "surrogatepass")
    brackets = encoded.translate(_BRACKETS_AS_STEPS, _NOT_BRACKET_BYTES)
    return max(itertools.accumulate(array.array("b", brackets)), default=0)


def line_of(value: object) -> int | None:
    """The start line of a mapping loaded by `load_yaml_with_lines`, else None."""
    return value.line if isinstance(value, LineDict) else None


def load_yaml_with_lines(
    path: Path,
    *,
    shown: str | None = None,
    error_type: ErrorFactory = InputError,
    what: str = "file",
    lines: dict[int, int] | None = None,
) -> Any:
    """Read and parse one YAML document; every problem is `error_type` naming the file (and line).
    Given `lines`, mappings are plain dicts and `lines` gets each one's line by its id.

    A BOM-less UTF-8 file is parsed from its bytes; on any problem the text path runs, and its message
    is the answer."""
    shown = shown or str(path)
    data = read_input_bytes(path, shown=shown, error_type=error_type, what=what)
    if not data.startswith(BYTE_ORDER_MARKS) and b"\x00" not in data:
        try:
            return _build_document(data, lines)
        except (yaml.YAMLError, RecursionError):
            pass
    text = decode_input(data, SourceLocation(shown), error_type, what)
    return parse_yaml_with_lines(text, shown, error_type, lines)


def parse_yaml_with_lines(
    text: str, shown: str | None, error_type: ErrorFactory = InputError, lines: dict[int, int] | None = None
) -> Any:
    """Parse YAML text with the same bounds; syntax errors name the line."""
    try:
        return _build_document(text, lines)
    except yaml.YAMLError as error:
        mark = getattr(error, "problem_mark", None)
        line = mark.line + 1 if mark is not None else None
        parts = [getattr(error, "context", None), getattr(error, "problem", None)]
        problem = " ".join(part for part in parts if part) or str(error)
        raise error_type(f"invalid YAML: {problem}", SourceLocation(shown, line)) from None
    except RecursionError:
        raise error_type("invalid YAML: nested too deeply", SourceLocation(shown)) from None


def _build_document(source: str | bytes, lines: dict[int, int] | None = None) -> Any:
    """The document from LibYAML's events where they are all of the common kinds, else from its nodes
    (given `lines`, copied into plain dicts whose lines it records).

    Only the node loader, which recurses in C, needs the bracket bound, so a good corpus is never
    scanned for brackets."""
    built = build_from_events(source, MAX_YAML_NODES, lines)
    if built is not UNUSUAL:
        return built
    if lines is not None:
        lines.clear()  # the entries of a build given up name dicts that are gone
    if flow_depth(source) > MAX_YAML_DEPTH:
        raise YamlBoundsError(f"nested too deeply (more than {MAX_YAML_DEPTH} levels of [ and {{)")
    document = yaml.load(source, Loader=_DocumentLoader)
    return document if lines is None else _plain_with_lines(document, lines)


def _plain_with_lines(value: Any, lines: dict[int, int]) -> Any:
    """`to_plain`, each `LineDict`'s line recorded in `lines` under its copy's id."""
    if isinstance(value, dict):
        plain = {key: _plain_with_lines(item, lines) for key, item in value.items()}
        if isinstance(value, LineDict) and value.line is not None:
            lines[id(plain)] = value.line
        return plain
    if isinstance(value, list):
        return [_plain_with_lines(item, lines) for item in value]
    return value


def to_plain(value: Any) -> Any:
    """Deep-copy into plain dicts and lists, so results never leak LineDicts."""
    if isinstance(value, dict):
        return {key: item if type(item) in _SCALARS else to_plain(item) for key, item in value.items()}
    if isinstance(value, list):
        return [item if type(item) in _SCALARS else to_plain(item) for item in value]
    return value
