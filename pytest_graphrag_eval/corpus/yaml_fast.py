"""A fast path for corpus YAML: rapidyaml parses, PyYAML's safe-loader semantics build the values.

LibYAML spends most of a large corpus load scanning long quoted scalars and composing nodes one
Python object at a time; rapidyaml (`ryml`, the `speed` extra) parses the same bytes into a C++
tree several times faster. This module walks that tree once and builds exactly what
`yaml_lines`'s loader builds: the same values (YAML 1.1 resolution of plain scalars by PyYAML's
own resolver and constructors), `LineDict`s with the line PyYAML's mark gives each mapping, one
shared object per anchor as PyYAML's aliases give, and the alias-bomb bound, counted as the walk
goes (an alias adds its anchor's size) rather than by a second walk.

It builds only what it is sure of and declines (returns `DECLINED`) the rest to `yaml_lines`'s
loader, whose values and messages are the answer: syntax rapidyaml refuses, anything PyYAML might
refuse or read differently (tabs, line breaks other than `\\n`, non-printable characters,
directives and document markers, very long implicit keys), tags, merge keys, anchored or aliased
keys, duplicate keys, a duplicate, unknown or recursive anchor, a document past the node bound,
and mappings whose line it cannot place for certain.
"""

from __future__ import annotations

import bisect
import os
import re
from collections.abc import Callable
from typing import Any, Final

import yaml

from pytest_graphrag_eval.corpus.line_dict import LineDict

try:
    import ryml  # type: ignore[import-untyped]
    from ryml import _ryml  # the SWIG functions themselves: the wrapper methods add a frame per call
except ImportError:  # the speed extra is not installed: yaml_lines's loader does it all
    _ryml = None

DECLINED: Final = object()
"""What `load_fast` returns for a document it leaves to the general loader."""

_STR_TAG = "tag:yaml.org,2002:str"
_MERGE_TAG = "tag:yaml.org,2002:merge"
# PyYAML refuses an implicit (simple) key of 1,024 characters or more; rapidyaml does not.
_MAX_SIMPLE_KEY = 1000
# What sends a document to the general loader, each found by one fast scan: a tab or carriage return,
# a non-printable character (PyYAML refuses them), the other YAML 1.1 line breaks (NEL, LS, PS: PyYAML
# breaks lines on them, rapidyaml does not), and a directive or document marker at a line start.
_SURE_BYTES = b"\n" + bytes(range(0x20, 0x7F)) + bytes(range(0x80, 0x100))  # deleted: what is left is unsure
_UNSURE_UTF8 = (
    re.compile(rb"\xc2[\x80-\x9f]"),
    re.compile(rb"\xef\xbf[\xbe\xbf]"),
)  # each with a literal prefix
_QUESTION_MARK = re.compile(rb"\?(?=[ \n]|\Z)")
_UNSURE_SEQUENCES = (b"\xe2\x80\xa8", b"\xe2\x80\xa9", b"\n%", b"\n---", b"\n...")

if _ryml is not None:
    _TYPE, _KEY, _VAL = _ryml.Tree_type, _ryml.Tree_key, _ryml.Tree_val
    _NUM_CHILDREN = _ryml.Tree_num_children
    _VAL_ANCHOR, _VAL_REF = _ryml.Tree_val_anchor, _ryml.Tree_val_ref
    _MAP, _SEQ, _HAS_KEY, _HAS_VAL = _ryml.MAP, _ryml.SEQ, _ryml.KEY, _ryml.VAL
    _VALANCH, _VALREF = _ryml.VALANCH, _ryml.VALREF
    _KEY_PLAIN, _VAL_PLAIN = _ryml.KEY_PLAIN, _ryml.VAL_PLAIN
    _FLOW = _ryml.FLOW_SL | _ryml.FLOW_ML
    _KEY_STYLE = _ryml.KEY_STYLE
    _BLOCK_SCALAR = _ryml.VAL_LITERAL | _ryml.VAL_FOLDED
    # Whatever makes a node something this module does not build.
    # (STREAM's own bit: its value includes SEQ's.)
    _UNSURE_TYPE = (
        _ryml.KEYANCH | _ryml.KEYREF | _ryml.KEYTAG | _ryml.VALTAG | _ryml.DOC | (_ryml.STREAM & ~_ryml.SEQ)
    )


def available() -> bool:
    """Whether rapidyaml is installed (the `speed` extra)."""
    return _ryml is not None


class _Decline(Exception):
    """Raised inside the walk: the document goes to the general loader."""


def load_fast(data: bytes, max_nodes: int) -> Any:
    """The document PyYAML's safe loader (with `yaml_lines`'s lines and checks) builds from UTF-8
    `data`, or `DECLINED` when this path is not sure to build exactly that."""
    if (
        _ryml is None
        or not data
        or data.startswith((b"%", b"---", b"..."))
        or data.translate(None, _SURE_BYTES)
    ):
        return DECLINED
    if not data.isascii():
        if any(pattern.search(data) for pattern in _UNSURE_UTF8) or any(
            s in data for s in _UNSURE_SEQUENCES[:2]
        ):
            return DECLINED
        try:
            data.decode("utf-8")  # PyYAML refuses invalid UTF-8 anywhere, comments included
        except UnicodeDecodeError:
            return DECLINED
    if any(sequence in data for sequence in _UNSURE_SEQUENCES[2:]) or _has_explicit_key(data):
        return DECLINED
    buffer = bytearray(data)
    tree = _parse_quietly(buffer)
    if tree is None:
        return DECLINED
    try:
        return _TreeBuilder(tree, buffer, data, max_nodes).build()
    except (_Decline, UnicodeDecodeError, RecursionError, ValueError, TypeError):
        return DECLINED


def _has_explicit_key(data: bytes) -> bool:
    """Whether a `? ` (an explicit key, which rapidyaml reads its own way) may start a key: first on
    its line after indentation and `- `, or after a flow indicator; a `? ` inside text is not one."""
    for match in _QUESTION_MARK.finditer(data):
        before = data[max(0, match.start() - 256) : match.start()].rstrip(b" -")
        if not before or before[-1:] in b"\n[{,":
            return True
    return False


def _parse_quietly(buffer: bytearray) -> Any:
    """rapidyaml's tree of `buffer` (parsed in place), or None where it refuses the text.

    rapidyaml writes its error message to the standard error before it raises; the general
    loader says what is wrong in our own words, so that message is kept off the user's terminal.
    """
    tree = ryml.Tree()
    saved = os.dup(2)
    try:
        with open(os.devnull, "wb") as sink:
            os.dup2(sink.fileno(), 2)
            try:
                _ryml.parse_substr(buffer, tree)
            except Exception:
                return None
            finally:
                os.dup2(saved, 2)
    finally:
        os.close(saved)
    return tree


class _TreeBuilder:
    """One walk of a parsed tree in node order (rapidyaml numbers a fresh tree's nodes in document order)."""

    def __init__(self, tree: Any, buffer: bytearray, data: bytes, max_nodes: int):
        self.size = tree.size()
        # SWIG's own object rather than its Python proxy: each call then skips an attribute lookup
        # (about seven times faster per call).
        self.tree = tree.this
        self.buffer = memoryview(buffer)
        self.base = _address(self.buffer)
        self.data = data
        self.max_nodes = max_nodes
        self.line_starts: list[int] | None = None  # offsets of every '\n', computed on first need
        self.anchors: dict[bytes, tuple[Any, int | None]] = {}  # name -> (object, expanded size once closed)

    def build(self) -> Any:
        tree = self.tree
        root_type = _TYPE(tree, 0)
        if root_type & _UNSURE_TYPE or not root_type & (_MAP | _SEQ):
            raise _Decline  # a bare scalar or empty document: rare, and cheap for the general loader
        expanded = 0  # nodes of the document once aliases are followed, counted as PyYAML composes them
        # Each open container: [object, children left, children, expanded count at its start, anchor name].
        count = _NUM_CHILDREN(tree, 0)
        root = self._container(0, root_type, count)
        stack: list[list[Any]] = [[root, count, count, 0, self._anchor(0, root_type, root)]]
        expanded = 1
        node = 1
        plain: dict[str, Any] = {}  # plain scalar text -> its value, resolved once per document
        while stack:
            frame = stack[-1]
            if frame[1] == 0:
                stack.pop()
                container = frame[0]
                if type(container) is LineDict and len(container) != frame[2]:
                    raise _Decline  # a key repeated (or two keys PyYAML builds equal): its loader reports it
                if frame[4] is not None:
                    self.anchors[frame[4]] = (container, expanded - frame[3])
                continue
            frame[1] -= 1
            kind = _TYPE(tree, node)
            if kind & _UNSURE_TYPE:
                raise _Decline
            parent = frame[0]
            key: Any = None
            if kind & _HAS_KEY:
                raw = _KEY(tree, node)
                if len(raw) > _MAX_SIMPLE_KEY or not kind & _KEY_STYLE:
                    raise _Decline
                key = str(raw, "utf-8")
                if kind & _KEY_PLAIN:
                    key = plain.get(key, _UNRESOLVED)
                    if key is _UNRESOLVED:
                        key = _resolve(plain, str(raw, "utf-8"))
                    if key is _MERGE:
                        raise _Decline
                expanded += 1
            if kind & (_MAP | _SEQ):
                count = _NUM_CHILDREN(tree, node)
                value = self._container(node, kind, count)
                stack.append([value, count, count, expanded, self._anchor(node, kind, value)])
                expanded += 1
            elif kind & _VALREF:
                name = bytes(_VAL_REF(tree, node))
                value, size = self.anchors.get(name, (None, None))
                if size is None:
                    raise _Decline  # unknown anchor, or one whose node contains this alias
                expanded += size
            else:
                raw = _VAL(tree, node)
                value = "" if raw is None else str(raw, "utf-8")
                if kind & _BLOCK_SCALAR and not self.data.endswith(b"\n"):
                    raise _Decline  # at the end of the text PyYAML chomps its missing line break
                if kind & _VAL_PLAIN or raw is None:  # no value at all is an empty plain scalar: null
                    text = value
                    value = plain.get(text, _UNRESOLVED)
                    if value is _UNRESOLVED:
                        value = _resolve(plain, text)
                if kind & _VALANCH:
                    self._anchor(node, kind, value)
                    self.anchors[bytes(_VAL_ANCHOR(tree, node))] = (value, 1)
                expanded += 1
            if expanded > self.max_nodes:
                raise _Decline  # the general loader refuses it with its message (or builds it, aliases aside)
            if type(parent) is list:
                parent.append(value)
            else:
                parent[key] = value
            node += 1
        if node != self.size:
            raise _Decline
        return root

    def _container(self, node: int, kind: int, count: int) -> Any:
        if kind & _SEQ:
            return []
        mapping = LineDict()
        mapping.line = self._mapping_line(node, kind, count)
        return mapping

    def _anchor(self, node: int, kind: int, value: Any) -> bytes | None:
        """The anchor name of a container (registered when it closes), None without one."""
        if not kind & _VALANCH:
            return None
        name = bytes(_VAL_ANCHOR(self.tree, node))
        if name in self.anchors:
            raise _Decline  # PyYAML refuses a second anchor of one name
        self.anchors[name] = (value, None)  # open: an alias to it now would be recursive
        return name

    def _mapping_line(self, node: int, kind: int, count: int) -> int:
        """The 1-based line of PyYAML's start mark for the mapping at `node`.

        That mark is the mapping's anchor when it has one, else its first key (block mappings, and
        single-pair mappings in a flow sequence) or its `{`. rapidyaml keeps no positions, but its
        scalars are views into the parsed buffer, so a scalar's address gives its offset.
        """
        tree = self.tree
        if kind & _VALANCH:
            return self._line_at(_address(_VAL_ANCHOR(tree, node)) - self.base)
        if not count:
            return self._empty_mapping_line(node, kind)
        first = node + 1
        offset = _address(_KEY(tree, first)) - self.base
        if not 0 <= offset < len(self.buffer):
            raise _Decline  # a key unescaped outside the buffer: no position
        if kind & _FLOW:  # its `{`, perhaps lines before its first key
            data = self.data
            before = offset - (1 if _TYPE(tree, first) & _KEY_PLAIN else 2)
            while before >= 0 and data[before] in b" \n":
                before -= 1
            if before < 0 or data[before] != ord("{"):
                raise _Decline  # a single-pair mapping in a flow sequence (`[a: 1]`), or a comment
            return self._line_at(before)
        return self._line_at(offset)

    def _empty_mapping_line(self, node: int, kind: int) -> int:
        """`key: {}` on one line, where the `{` is on its key's line; anything else is declined."""
        if not kind & _HAS_KEY or not kind & _KEY_PLAIN:
            raise _Decline
        raw = _KEY(self.tree, node)
        offset = _address(raw) - self.base
        after = self.data[offset + len(raw) : offset + len(raw) + 64]
        if not re.match(rb":[ ]*\{", after):
            raise _Decline
        return self._line_at(offset)

    def _line_at(self, offset: int) -> int:
        if self.line_starts is None:
            self.line_starts = [match.start() for match in re.finditer(rb"\n", self.data)]
        return bisect.bisect_left(self.line_starts, offset) + 1


def _make_buffer_address() -> Callable[[memoryview], int]:
    """A function giving where a buffer's bytes start in memory (a tree's scalar is a view into the
    parsed buffer), through the C API's buffer protocol: one request and release per call."""
    import ctypes

    class _PyBuffer(ctypes.Structure):
        _fields_ = [
            ("buf", ctypes.c_void_p),
            ("obj", ctypes.c_void_p),
            ("len", ctypes.c_ssize_t),
            ("itemsize", ctypes.c_ssize_t),
            ("readonly", ctypes.c_int),
            ("ndim", ctypes.c_int),
            ("format", ctypes.c_char_p),
            ("shape", ctypes.c_void_p),
            ("strides", ctypes.c_void_p),
            ("suboffsets", ctypes.c_void_p),
            ("internal", ctypes.c_void_p),
        ]

    python_api = ctypes.PyDLL(None)
    get_buffer, release = python_api.PyObject_GetBuffer, python_api.PyBuffer_Release
    get_buffer.restype, release.restype = ctypes.c_int, None
    info = _PyBuffer()
    info_pointer = ctypes.byref(info)
    as_object = ctypes.py_object

    def buffer_address(view: memoryview) -> int:
        if get_buffer(as_object(view), info_pointer, 0) != 0:
            raise _Decline
        address = info.buf or 0
        release(info_pointer)
        return address

    return buffer_address


_address = _make_buffer_address()
_NOT_PLAIN_STARTS = frozenset("@`%!&*|>'\"#,[]{}")
_MERGE: Final = object()
_UNRESOLVED: Final = object()
_RESOLVER = yaml.resolver.Resolver()
_CONSTRUCTOR = yaml.constructor.SafeConstructor()


def _resolve(memo: dict[str, Any], text: str) -> Any:
    """What PyYAML's safe loader builds from a plain scalar (its resolver, then its constructor).

    A plain scalar PyYAML would not have read as one (starting with an indicator) is declined.
    """
    if text[:1] in _NOT_PLAIN_STARTS or text[:2] in ("- ", "? ", ": ") or text in ("-", "?", ":"):
        raise _Decline
    if " #" in text:  # PyYAML ends a plain scalar at a comment (in a flow collection rapidyaml may not)
        raise _Decline
    tag = _RESOLVER.resolve(yaml.ScalarNode, text, (True, False))  # type: ignore[no-untyped-call]
    if tag == _STR_TAG:
        value: Any = text
    elif tag == _MERGE_TAG:
        value = _MERGE
    elif tag in _CONSTRUCTOR.yaml_constructors:
        try:
            value = _CONSTRUCTOR.yaml_constructors[tag](_CONSTRUCTOR, yaml.ScalarNode(tag, text))
        except Exception as error:
            raise _Decline from error
    else:  # `=` (the YAML 1.1 value key), which the safe loader refuses
        raise _Decline
    memo[text] = value
    return value
