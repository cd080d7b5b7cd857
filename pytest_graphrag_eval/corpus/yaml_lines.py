"""Bounded YAML loading that remembers the line of every mapping, so errors point at their line.

Untrusted YAML is kept within bounds (size, alias expansion, nesting, repeated keys) and only
LibYAML parses, which raises on bad input: no parser here can end the process.
"""

from __future__ import annotations

import array
import itertools
from collections.abc import Callable
from pathlib import Path
from typing import Any, Final

import yaml

from pytest_graphrag_eval.corpus.input_files import (
    BYTE_ORDER_MARKS,
    ErrorFactory,
    decode_input,
    read_input_bytes,
)
from pytest_graphrag_eval.corpus.line_dict import LineDict
from pytest_graphrag_eval.corpus.yaml_events import UNUSUAL, build_from_events
from pytest_graphrag_eval.errors import InputError, SourceLocation

MAX_YAML_NODES = 2_000_000
# LibYAML composes recursively in C: a few hundred thousand nested brackets crash the process.
MAX_YAML_DEPTH = 500
# Flow brackets as signed steps (+1 opens, -1 as the byte 0xFF closes); every other byte is dropped.
_BRACKETS_AS_STEPS = bytes.maketrans(b"[{]}", b"\x01\x01\xff\xff")
_NOT_BRACKET_BYTES = bytes(byte for byte in range(256) if byte not in b"[]{}")
_MERGE_TAG = "tag:yaml.org,2002:merge"
_STR_TAG = "tag:yaml.org,2002:str"
_SEQ_TAG = "tag:yaml.org,2002:seq"
_MAP_TAG = "tag:yaml.org,2002:map"
_SCALARS = frozenset({str, int, float, bool, type(None)})  # what `to_plain` returns as it is
_BUILDING: Final = object()
"""Stands for a collection in `constructed_objects` while its children are built: met again, it is
an alias inside the node it names."""


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
    """SafeLoader whose mappings become `LineDict`s: the constructors `_DocumentLoader` hands the
    nodes it does not build itself to."""


def _construct_line_mapping(loader: _LineLoader, node: yaml.MappingNode) -> LineDict:
    _check_duplicate_keys(node)
    mapping = LineDict(loader.construct_mapping(node, deep=True))
    mapping.line = node.start_mark.line + 1
    return mapping


_LineLoader.add_constructor(yaml.resolver.BaseResolver.DEFAULT_MAPPING_TAG, _construct_line_mapping)


class _DocumentLoader(_LineLoader):
    """`_LineLoader` that builds text, lists and line-tracking dicts in one walk of LibYAML's nodes.

    PyYAML's generic construction is most of a large load; every other node goes to PyYAML's own
    constructors, so values, errors and alias sharing stay PyYAML's. The alias-bomb bound is counted
    as the walk goes.
    """

    def __init__(self, stream: str | bytes):
        super().__init__(stream)
        if not self.yaml_path_resolvers:
            # Three resolver calls per node: SafeLoader has no path resolvers, so the path bookkeeping becomes
            # C-level no-ops and a plain value is resolved once.
            self.descend_resolver = slice  # type: ignore[method-assign,assignment]
            self.ascend_resolver = tuple  # type: ignore[method-assign,assignment]
            self.resolve = _tag_by_kind(super().resolve)  # type: ignore[method-assign]
        self.expanded_sizes: dict[yaml.Node, int] = {}  # a built collection -> its nodes once expanded
        self.nodes = 0  # the document's nodes so far, an alias counted as its node's expanded size

    def construct_document(self, node: yaml.Node) -> Any:
        self.nodes = 1
        data = self._build(node)
        self.expanded_sizes = {}
        super().construct_document(yaml.ScalarNode(_STR_TAG, ""))  # runs PyYAML's end-of-document reset
        return data

    def _build(self, node: yaml.Node) -> Any:
        kind, tag = type(node), node.tag
        if kind is yaml.ScalarNode:
            return node.value if tag == _STR_TAG else self._by_pyyaml(node)
        built = self.constructed_objects.get(node)
        if built is not None:
            return self._shared(node, built)
        # Text children (most nodes) are taken in place, without a call each.
        if kind is yaml.SequenceNode and tag == _SEQ_TAG:
            items = node.value
            self.constructed_objects[node] = _BUILDING
            before = self.nodes
            self.nodes += len(items)
            value: Any = [
                item.value if type(item) is yaml.ScalarNode and item.tag == _STR_TAG else self._build(item)
                for item in items
            ]
        elif isinstance(node, yaml.MappingNode) and tag == _MAP_TAG:
            pairs = node.value
            keys = [key.value for key, _ in pairs if type(key) is yaml.ScalarNode and key.tag == _STR_TAG]
            if len(keys) != len(pairs):  # a key that is not text, or a merge key
                merges = any(type(key) is yaml.ScalarNode and key.tag == _MERGE_TAG for key, _ in pairs)
                return self._merged(node) if merges else self._by_pyyaml(node)
            if len(set(keys)) != len(keys):
                _check_duplicate_keys(node)  # raises, naming the key and both lines
            self.constructed_objects[node] = _BUILDING
            before = self.nodes
            self.nodes += 2 * len(pairs)
            value = self._line_dict(node, keys)
        else:
            return self._by_pyyaml(node)
        self.constructed_objects[node] = value
        self.expanded_sizes[node] = 1 + self.nodes - before
        return value

    def _line_dict(self, node: yaml.MappingNode, keys: list[str]) -> LineDict:
        """The mapping of `keys` (its keys' text, in order) to its values built, with its line."""
        values = [
            item.value if type(item) is yaml.ScalarNode and item.tag == _STR_TAG else self._build(item)
            for _, item in node.value
        ]
        mapping = LineDict(zip(keys, values, strict=True))
        mapping.line = node.start_mark.line + 1
        return mapping

    def _merged(self, node: yaml.MappingNode) -> Any:
        """A mapping with merge keys: counted by one walk, flattened by PyYAML's `flatten_mapping`, then
        built as any mapping; with a non-text key, PyYAML builds it."""
        _check_duplicate_keys(node)
        self._count_first(node)
        counted = self.nodes  # the walk counted everything under it: building it adds nothing
        self.flatten_mapping(node)
        keys = [key.value for key, _ in node.value if type(key) is yaml.ScalarNode and key.tag == _STR_TAG]
        if len(keys) != len(node.value):
            value = self._by_pyyaml(node)
        else:
            self.constructed_objects[node] = _BUILDING
            value = self._line_dict(node, keys)
            self.constructed_objects[node] = value
        self.nodes = counted
        return value

    def _count_first(self, node: yaml.Node) -> None:
        """Count the nodes under `node` once expanded, before it is built another way than by `_build`."""
        self.nodes += _expanded_size(node, self.expanded_sizes) - 1
        self._check_bound(node)

    def _shared(self, node: yaml.Node, built: Any) -> Any:
        """A collection reached again through an alias: the object built the first time, counted
        as all its nodes."""
        if built is _BUILDING:
            raise YamlBoundsError(
                "an alias refers to a node that contains it (recursive alias)", node.start_mark
            )
        self.nodes += self.expanded_sizes[node] - 1
        self._check_bound(node)
        return built

    def _by_pyyaml(self, node: yaml.Node) -> Any:
        """What PyYAML's constructors build from `node` (a collection's nodes counted first), its
        refusal located at the node."""
        if not isinstance(node, yaml.ScalarNode):
            self._count_first(node)
        try:
            return self.construct_object(node, deep=True)
        except (yaml.YAMLError, RecursionError, MemoryError):
            raise
        except Exception as error:  # PyYAML's constructors raise ValueError, KeyError... on bad values
            raise YamlBoundsError(_unbuildable(node, error), node.start_mark) from None

    def _check_bound(self, node: yaml.Node) -> None:
        if self.nodes > MAX_YAML_NODES:
            raise YamlBoundsError(
                f"the document expands to more than {MAX_YAML_NODES:,} values once its aliases are "
                "followed (nested anchors and aliases, an 'alias bomb'?)",
                node.start_mark,
            )


def _unbuildable(node: yaml.Node, error: Exception) -> str:
    """What a constructor's refusal of `node` says: the value (shortened), its tag, and why."""
    tag = node.tag.removeprefix("tag:yaml.org,2002:")
    tag = "!!" + tag if tag != node.tag else tag
    if isinstance(node, yaml.ScalarNode):
        shown = node.value if len(node.value) <= 60 else node.value[:57] + "..."
        return f"{shown!r} is not a valid {tag} value ({error})"
    return f"this {tag} node cannot be built ({error})"


def _tag_by_kind(
    resolve_by_pyyaml: Callable[[type[yaml.Node], Any, Any], str],
) -> Callable[[type[yaml.Node], Any, Any], str]:
    """PyYAML's `resolve` without path resolvers, with each plain scalar's tag looked up once."""
    plain_tags: dict[str, str] = {}

    def resolve(kind: type[yaml.Node], value: Any, implicit: Any) -> str:
        if kind is yaml.ScalarNode:
            if not implicit[0]:  # quoted or block text
                return _STR_TAG
            tag = plain_tags.get(value)
            if tag is None:
                tag = plain_tags[value] = resolve_by_pyyaml(kind, value, implicit)
            return tag
        if kind is yaml.MappingNode:
            return _MAP_TAG
        if kind is yaml.SequenceNode:
            return _SEQ_TAG
        return resolve_by_pyyaml(kind, value, implicit)

    return resolve


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


def _expanded_size(root: yaml.Node, sizes: dict[yaml.Node, int]) -> int:
    """The nodes under `root` once every alias is expanded (`sizes` holds those already counted, and
    gains these); a node that contains itself is refused. Counted without expanding anything."""
    active: set[yaml.Node] = set()
    stack: list[tuple[yaml.Node, bool]] = [(root, False)]
    while stack:
        node, children_done = stack.pop()
        if children_done:
            active.discard(node)
            sizes[node] = 1 + sum(sizes[child] for child in _children(node))
            continue
        if node in sizes:
            continue
        if node in active:
            raise YamlBoundsError(
                "an alias refers to a node that contains it (recursive alias)", node.start_mark
            )
        active.add(node)
        stack.append((node, True))
        stack.extend((child, False) for child in _children(node) if child not in sizes)
    return sizes[root]


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
