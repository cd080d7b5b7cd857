"""Bounded YAML loading that remembers the line of every mapping.

Errors about a corpus must point at the YAML line of the template, question or
step they are about; PyYAML drops positions after construction, so this loader
returns dicts that carry their 1-based start line.

It is also where untrusted YAML is kept within bounds: the file is read through
`input_files` (size cap, encodings), the composed document may expand to at
most `MAX_YAML_NODES` nodes once aliases are followed (an "alias bomb" of nested
anchors fails at once instead of ending in a MemoryError), recursive aliases and
absurd nesting are refused, and a key repeated in one mapping is an error rather
than the last value silently winning.
"""

from __future__ import annotations

import array
import itertools
from collections.abc import Callable
from pathlib import Path
from typing import Any

import yaml

from pytest_graphrag_eval.corpus.input_files import (
    BYTE_ORDER_MARKS,
    ErrorFactory,
    decode_input,
    read_input_bytes,
)
from pytest_graphrag_eval.corpus.line_dict import LineDict
from pytest_graphrag_eval.corpus.yaml_fast import DECLINED, load_fast
from pytest_graphrag_eval.errors import InputError, SourceLocation

MAX_YAML_NODES = 2_000_000
# LibYAML composes recursively in C: a few hundred thousand nested brackets crash the process.
MAX_YAML_DEPTH = 500
# Flow brackets as signed steps (+1 opens, -1 as the byte 0xFF closes); every other byte is dropped.
_BRACKETS_AS_STEPS = bytes.maketrans(b"[{]}", b"\x01\x01\xff\xff")
_NOT_BRACKET_BYTES = bytes(byte for byte in range(256) if byte not in b"[]{}")
_BEFORE_TOKEN = frozenset("[]{},?:'\"\ufeff")
_MERGE_TAG = "tag:yaml.org,2002:merge"
_STR_TAG = "tag:yaml.org,2002:str"
_SEQ_TAG = "tag:yaml.org,2002:seq"
_MAP_TAG = "tag:yaml.org,2002:map"
_SCALARS = frozenset({str, int, float, bool, type(None)})  # what `to_plain` returns as it is


class YamlBoundsError(yaml.YAMLError):
    """The document is syntactically fine but unsafe to build (too large once expanded, recursive)."""

    def __init__(self, problem: str, mark: yaml.Mark | None = None):
        super().__init__(problem)
        self.problem = problem
        self.problem_mark = mark


try:  # LibYAML's parser (in PyYAML's wheels) reads large corpora several times faster.
    from yaml import CSafeLoader as _SafeLoader
except ImportError:  # PyYAML built without LibYAML
    from yaml import SafeLoader as _SafeLoader  # type: ignore[assignment]


class _LineLoader(_SafeLoader):
    """SafeLoader whose mappings become `LineDict`s."""


class _TreeLineLoader(_LineLoader):
    """`_LineLoader` for a document without aliases, whose nodes therefore form a tree.

    PyYAML's generic construction pays per node for what only shared nodes need (a memo of
    constructed objects, a recursion guard, the generator protocol of two-step constructors):
    on a large corpus that was a third of the load. Here text, lists and line-tracking dicts
    are built directly; every other node (numbers, booleans, null, dates, merge keys, a key
    that is not text, an explicit tag) goes through PyYAML's own constructors, so values and
    errors stay exactly PyYAML's.
    """

    def __init__(self, stream: str):
        super().__init__(stream)
        if not self.yaml_path_resolvers:
            # LibYAML's composer calls three resolver methods per node (over a million on a large
            # corpus). SafeLoader has no path resolvers, so a node's tag depends on its kind and (plain
            # scalars) its value alone: the path bookkeeping becomes C-level callables that ignore what
            # they are given (`slice` takes the parent and index, `tuple` nothing; their results are
            # dropped), and a plain value is resolved once.
            self.descend_resolver = slice  # type: ignore[method-assign,assignment]
            self.ascend_resolver = tuple  # type: ignore[method-assign,assignment]
            self.resolve = _tag_by_kind(super().resolve)  # type: ignore[method-assign]

    def construct_document(self, node: yaml.Node) -> Any:
        data = self._build(node)
        super().construct_document(yaml.ScalarNode(_STR_TAG, ""))  # runs PyYAML's end-of-document reset
        return data

    def _build(self, node: yaml.Node) -> Any:
        kind, tag = type(node), node.tag
        if kind is yaml.ScalarNode and tag == _STR_TAG:
            return node.value
        # Text children (most nodes) are taken in place, without a call each.
        if kind is yaml.SequenceNode and tag == _SEQ_TAG:
            return [
                item.value if type(item) is yaml.ScalarNode and item.tag == _STR_TAG else self._build(item)
                for item in node.value
            ]
        if isinstance(node, yaml.MappingNode) and tag == _MAP_TAG:
            pairs = node.value
            keys = [key.value for key, _ in pairs if type(key) is yaml.ScalarNode and key.tag == _STR_TAG]
            if len(keys) == len(pairs):  # every key is text
                if len(set(keys)) != len(keys):
                    _check_duplicate_keys(node)  # raises, naming the key and both lines
                values = [
                    value.value
                    if type(value) is yaml.ScalarNode and value.tag == _STR_TAG
                    else self._build(value)
                    for _, value in pairs
                ]
                mapping = LineDict(zip(keys, values, strict=True))
                mapping.line = node.start_mark.line + 1
                return mapping
        return self.construct_object(node, deep=True)


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


class _CheckedLineLoader(_LineLoader):
    """`_LineLoader` that checks the composed document before construction (for texts with anchors)."""

    def get_single_node(self) -> yaml.Node | None:
        # Overridden here rather than in the composer: LibYAML's parser composes in C.
        node = super().get_single_node()
        _check_expansion(node)
        return node


def _construct_line_mapping(loader: _LineLoader, node: yaml.MappingNode) -> LineDict:
    _check_duplicate_keys(node)
    mapping = LineDict(loader.construct_mapping(node, deep=True))
    mapping.line = node.start_mark.line + 1
    return mapping


_LineLoader.add_constructor(yaml.resolver.BaseResolver.DEFAULT_MAPPING_TAG, _construct_line_mapping)


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


def _check_expansion(root: yaml.Node | None) -> None:
    """Count the nodes the document has once every alias is expanded; refuse cycles and bombs."""
    if root is None:
        return
    sizes: dict[int, int] = {}
    active: set[int] = set()
    stack: list[tuple[yaml.Node, bool]] = [(root, False)]
    while stack:
        node, children_done = stack.pop()
        key = id(node)
        if children_done:
            active.discard(key)
            sizes[key] = 1 + sum(sizes[id(child)] for child in _children(node))
            if sizes[key] > MAX_YAML_NODES:
                raise YamlBoundsError(
                    f"the document expands to more than {MAX_YAML_NODES:,} values once its aliases are "
                    "followed (nested anchors and aliases, an 'alias bomb'?)",
                    node.start_mark,
                )
            continue
        if key in sizes:
            continue
        if key in active:
            raise YamlBoundsError(
                "an alias refers to a node that contains it (recursive alias)", node.start_mark
            )
        active.add(key)
        stack.append((node, True))
        stack.extend((child, False) for child in _children(node) if id(child) not in sizes)


def _children(node: yaml.Node) -> list[yaml.Node]:
    if isinstance(node, yaml.SequenceNode):
        return list(node.value)
    if isinstance(node, yaml.MappingNode):
        return [item for pair in node.value for item in pair]
    return []


def flow_depth(text: str | bytes) -> int:
    """The deepest nesting of flow brackets, counted over the whole text (brackets in strings too).

    An over-estimate at worst (balanced brackets inside quoted text add nothing), and cheap: the
    brackets are picked out of the UTF-8 bytes (a table lookup per byte; a regex or `str.translate`
    over non-ASCII text costs several times more) and summed in C-level iterators.
    """
    encoded = text if isinstance(text, bytes) else text.encode("utf-8", "surrogatepass")
    brackets = encoded.translate(_BRACKETS_AS_STEPS, _NOT_BRACKET_BYTES)
    return max(itertools.accumulate(array.array("b", brackets)), default=0)


def may_have_aliases(text: str | bytes) -> bool:
    """False only when the text cannot hold both an anchor and an alias, so no node can be shared.

    An anchor (`&name`) or alias (`*name`) token starts the text or follows whitespace, a flow
    indicator, `?`, `:` or a closing quote; an `&` or `*` after anything else is inside a scalar
    (`AT&T`, `?p*`, percent-encoded IRIs), and without both kinds of token there is nothing to expand.
    In UTF-8 bytes, an `&` or `*` after a non-ASCII character (perhaps a space) counts as a token.
    """
    return _token_may_start_with(text, "&") and _token_may_start_with(text, "*")


def _token_may_start_with(text: str | bytes, char: str) -> bool:
    needle: Any = char.encode() if isinstance(text, bytes) else char
    index = text.find(needle)
    while index != -1:
        if index == 0:
            return True
        before = text[index - 1 : index]
        if isinstance(before, bytes):
            if before[0] >= 0x80:
                return True
            before = before.decode("ascii")
        if before in _BEFORE_TOKEN or before.isspace():
            return True
        index = text.find(needle, index + 1)
    return False


def line_of(value: object) -> int | None:
    """The start line of a mapping loaded by `load_yaml_with_lines`, else None."""
    return value.line if isinstance(value, LineDict) else None


def load_yaml_with_lines(
    path: Path, *, shown: str | None = None, error_type: ErrorFactory = InputError, what: str = "file"
) -> Any:
    """Read and parse one YAML document; every problem is `error_type` naming the file (and line).

    A UTF-8 file without a byte-order mark goes to LibYAML as its bytes (given text, PyYAML first
    encodes it back to exactly those bytes). A document built that way was read to its end, so every
    byte was valid UTF-8; on any problem the text path runs instead, and its message is the answer.
    """
    shown = shown or str(path)
    data = read_input_bytes(path, shown=shown, error_type=error_type, what=what)
    if not data.startswith(BYTE_ORDER_MARKS) and b"\x00" not in data and flow_depth(data) <= MAX_YAML_DEPTH:
        built = load_fast(data, MAX_YAML_NODES)
        if built is not DECLINED:
            return built
        try:
            return _build_document(data)
        except (yaml.YAMLError, RecursionError):
            pass
    text = decode_input(data, SourceLocation(shown), error_type, what)
    return parse_yaml_with_lines(text, shown, error_type)


def parse_yaml_with_lines(text: str, shown: str | None, error_type: ErrorFactory = InputError) -> Any:
    """Parse YAML text with the same bounds; syntax errors name the line."""
    if flow_depth(text) > MAX_YAML_DEPTH:
        raise error_type(
            f"invalid YAML: nested too deeply (more than {MAX_YAML_DEPTH} levels of [ and {{)",
            SourceLocation(shown),
        )
    try:
        return _build_document(text)
    except yaml.YAMLError as error:
        mark = getattr(error, "problem_mark", None)
        line = mark.line + 1 if mark is not None else None
        parts = [getattr(error, "context", None), getattr(error, "problem", None)]
        problem = " ".join(part for part in parts if part) or str(error)
        raise error_type(f"invalid YAML: {problem}", SourceLocation(shown, line)) from None
    except RecursionError:
        raise error_type("invalid YAML: nested too deeply", SourceLocation(shown)) from None


def _build_document(source: str | bytes) -> Any:
    # Without anchors and aliases the composed tree is the document: no bomb, no recursion.
    loader = _CheckedLineLoader if may_have_aliases(source) else _TreeLineLoader
    return yaml.load(source, Loader=loader)


def to_plain(value: Any) -> Any:
    """Deep-copy into plain dicts and lists, so results never leak LineDicts."""
    if isinstance(value, dict):
        return {key: item if type(item) in _SCALARS else to_plain(item) for key, item in value.items()}
    if isinstance(value, list):
        return [item if type(item) in _SCALARS else to_plain(item) for item in value]
    return value
