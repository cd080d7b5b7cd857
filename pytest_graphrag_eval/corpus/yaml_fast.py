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
# Each a single scan with a literal prefix (a regex without one tries every byte).
_UNSURE_UTF8 = (
    re.compile(rb"\xc2[\x80-\x9f]"),  # C1 controls, NEL among them
    re.compile(rb"\xe2\x80[\xa8\xa9]"),  # LS, PS
    re.compile(rb"\xef\xbf[\xbe\xbf]"),  # noncharacters
)
# The rest of a quoted scalar after its opening quote, and what may follow its closing one.
# Each written as a run of ordinary bytes then (escape, run) pairs: an alternation tried per byte is
# twenty times slower on a long scalar.
_SINGLE_QUOTED_REST = re.compile(rb"[^']*+(?:''[^']*+)*+'")
_DOUBLE_QUOTED_REST = re.compile(rb'[^"\\]*+(?:\\.[^"\\]*+)*+"', re.DOTALL)
_AFTER_QUOTED = re.compile(rb"[ ]*(?:[\n:,\]}]|\Z)|[ ]+#")
# An anchor or tag followed on its line by a block indicator `- ` (PyYAML refuses `- &a -`).
# (Matched after each `&` or `!` found by `bytes.find`: a search led by a character class tries
# every byte.)
_AFTER_PROPERTY_THEN_ENTRY = re.compile(rb"[^ \n,\[\]{}]*[ ]+-(?=[ \n]|\Z)")
# An anchor or tag alone on its line, its node on a later one (`b: \n&x` PyYAML refuses).
_PROPERTY_ALONE = re.compile(rb"[ ]*[&!][^ \n]*[ ]*(?:\n|\Z)")
# After a line break: a directive, a document marker (rapidyaml may end the document there; PyYAML
# reads text or refuses it, after indentation too), or a property alone on its line. One search for
# all three, led by the literal line break (`(?:\A|\n)` would leave it none to skip ahead to; the
# text's start is checked apart).
_UNSURE_LINE_START = re.compile(rb"\n(?:%|[ ]*(?:---|\.\.\.|[&!][^ \n]*[ ]*(?:\n|\Z)))")
_QUESTION_MARK = re.compile(rb"\?(?=[ \n]|\Z)")  # perhaps an explicit key (`_has_explicit_key`)
# A `!` where a node's tag may begin: first on a line, after a flow indicator, after `: `, `- ` or
# `? `, after an anchor (not inside text: `FILTER(?a != ?b)`, `Hello!`). Tags are declined, and
# before rapidyaml sees them: it ends the process (a failed internal check, not an exception) on
# some, such as `[!!str !!str x]`.
_PERHAPS_TAG = re.compile(rb"(?m)(?:^|[\[{,]|[:?-][ ])[ ]*(?:&[^ \n]*[ ]+)?!")

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
    # A child that is not just a plain or quoted scalar goes the longer way (`_composite`).
    _COMPOSITE = _ryml.MAP | _ryml.SEQ | _ryml.VALREF | _ryml.VALANCH | _BLOCK_SCALAR | _ryml.VALTAG
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
        or data.startswith(b"%")
        or data.lstrip(b" ").startswith((b"---", b"..."))
        or data.translate(None, _SURE_BYTES)
    ):
        return DECLINED
    if not data.isascii():
        if any(pattern.search(data) for pattern in _UNSURE_UTF8):
            return DECLINED
        try:
            data.decode("utf-8")  # PyYAML refuses invalid UTF-8 anywhere, comments included
        except UnicodeDecodeError:
            return DECLINED
    if (
        _PERHAPS_TAG.search(data)
        or _UNSURE_LINE_START.search(data)
        or _PROPERTY_ALONE.match(data)
        or _has_property_then_entry(data)
        or _has_explicit_key(data)
    ):
        return DECLINED
    buffer = bytearray(data)
    tree = _parse_quietly(buffer)
    if tree is None:
        return DECLINED
    try:
        return _TreeBuilder(tree, buffer, data, max_nodes).build()
    except (_Decline, UnicodeDecodeError, RecursionError, ValueError, TypeError):
        return DECLINED


def _has_property_then_entry(data: bytes) -> bool:
    """Whether an anchor or tag is followed on its line by a block entry `- ` (`- &a - b`)."""
    for indicator in (b"&", b"!"):
        position = data.find(indicator)
        while position != -1:
            if _AFTER_PROPERTY_THEN_ENTRY.match(data, position + 1):
                return True
            position = data.find(indicator, position + 1)
    return False


def _has_explicit_key(data: bytes) -> bool:
    """Whether a `?` followed by a space or line break (perhaps an explicit key, which rapidyaml reads
    its own way) starts a token: at the text's start or after a space, line break or flow indicator,
    anywhere on its line (after `- `, an anchor, a tag, a key...). Only one certainly inside a comment
    or a quoted scalar opened on its own line is passed over; any other is taken as a key."""
    for match in _QUESTION_MARK.finditer(data):
        start = match.start()
        if start and data[start - 1] not in b" \n[{,":
            continue  # inside a word: `what? x`
        line_start = data.rfind(b"\n", 0, start) + 1
        if not _in_comment_or_quote(data[line_start:start]):
            return True
    return False


def _in_comment_or_quote(line: bytes) -> bool:
    """Whether the end of `line` (a line's start, up to a `?`) is certainly in a comment or in a
    quoted scalar that opens on this line as a value (first on the line, or after `- `, `: `, `[`,
    `{` or `,`)."""
    quote = 0  # the open quote's byte, 0 outside one
    previous = 0  # the last byte other than a space outside quotes, 0 at the line's start
    index, length = 0, len(line)
    while index < length:
        byte = line[index]
        if quote == 0x27:  # '
            if byte == 0x27:
                if line[index + 1 : index + 2] == b"'":
                    index += 1
                else:
                    quote, previous = 0, byte
        elif quote == 0x22:  # "
            if byte == 0x5C:  # a backslash escapes the next byte
                index += 1
            elif byte == 0x22:
                quote, previous = 0, byte
        elif byte == 0x23 and (index == 0 or line[index - 1] == 0x20):  # a comment
            return True
        elif byte in b"'\"" and (
            previous in b"\0[{,"
            or (previous in b"-:" and line[index - 1] == 0x20 and _value_start(line, index, previous))
        ):
            quote = byte
        elif byte != 0x20:
            previous = byte
        index += 1
    return quote != 0


def _value_start(line: bytes, index: int, previous: int) -> bool:
    """Whether the `-` or `:` before `line[index]` (a space between) is an indicator: `- ` first on the
    line or after another `- `, or `: ` after something."""
    before = line[:index].rstrip(b" ")[:-1]
    if previous == 0x3A:  # :
        return bool(before) and before[-1:] != b" "
    return not before.rstrip(b" -") and (not before or before[-1:] == b" ")


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
    """One walk of a parsed tree in node order (rapidyaml numbers a fresh tree's nodes in document order).

    The alias-bomb bound is kept by counting, not by walking again: the document has as many nodes
    as PyYAML composes (rapidyaml's nodes, plus one per mapping key) plus, for each alias, its
    anchor's size less one; an anchor's size is known when its node closes, before any alias to it.
    """

    def __init__(self, tree: Any, buffer: bytearray, data: bytes, max_nodes: int):
        self.size = tree.size()
        # SWIG's own object rather than its Python proxy: each call then skips an attribute lookup
        # (about seven times faster per call).
        self.tree = tree.this
        self.buffer = memoryview(buffer)
        self.base = _address(self.buffer)
        self.data = data
        self.max_nodes = max_nodes
        self.counted = (0, 1)  # (offset, its line): lines are counted on from the last one asked for
        self.anchors: dict[bytes, tuple[Any, int | None]] = {}  # name -> (object, its size once closed)
        self.plain: dict[str, Any] = {}  # plain scalar text -> its value, resolved once per document
        self.keys = 0  # mapping keys so far (each one a node of PyYAML's)
        self.alias_extra = 0  # nodes the aliases so far add once expanded

    def build(self) -> Any:
        root_type = _TYPE(self.tree, 0)
        if root_type & _UNSURE_TYPE or not root_type & (_MAP | _SEQ):
            raise _Decline  # a bare scalar or empty document: rare, and cheap for the general loader
        root, end = self._collection(0, root_type)
        if end != self.size or self.size + self.keys + self.alias_extra > self.max_nodes:
            raise _Decline  # past the bound: the general loader refuses it with its message
        return root

    def _collection(self, node: int, kind: int) -> tuple[Any, int]:
        """The list or mapping at `node` with everything in it, and the node after its last one."""
        tree = self.tree
        count = _NUM_CHILDREN(tree, node)
        anchor = self._anchor(node, kind)
        keys_before, extra_before = self.keys, self.alias_extra
        child = node + 1
        if kind & _SEQ:
            collection: Any = []
            append = collection.append
            for _ in range(count):
                child_kind = _TYPE(tree, child)
                if child_kind & _COMPOSITE:
                    value, child = self._composite(child, child_kind)
                else:
                    raw = _VAL(tree, child)
                    value = self._plain(raw) if child_kind & _VAL_PLAIN or raw is None else self._quoted(raw)
                    child += 1
                append(value)
        else:
            collection = LineDict()
            collection.line = self._mapping_line(node, kind, count)
            self.keys += count
            plain = self.plain
            for _ in range(count):
                child_kind = _TYPE(tree, child)
                raw = _KEY(tree, child)
                if len(raw) > _MAX_SIMPLE_KEY or not child_kind & _KEY_STYLE or child_kind & _UNSURE_TYPE:
                    raise _Decline
                key = str(raw, "utf-8") if child_kind & _KEY_PLAIN else self._quoted(raw, True)
                if kind & _FLOW and child_kind & _KEY_PLAIN:
                    offset = _address(raw) - self.base  # PyYAML reads no implicit key across lines
                    if (
                        not 0 <= offset < len(self.data)
                        or self.data.find(b"\n", offset, offset + len(raw)) != -1
                    ):
                        raise _Decline
                if child_kind & _KEY_PLAIN:
                    key = plain.get(key, _UNRESOLVED)
                    if key is _UNRESOLVED:
                        key = _resolve(plain, str(raw, "utf-8"))
                    if key is _MERGE:
                        raise _Decline  # merge keys: PyYAML's flattening is the general loader's
                if child_kind & _COMPOSITE:
                    value, child = self._composite(child, child_kind)
                else:
                    raw = _VAL(tree, child)
                    value = self._plain(raw) if child_kind & _VAL_PLAIN or raw is None else self._quoted(raw)
                    child += 1
                collection[key] = value
            if len(collection) != count:
                raise _Decline  # a key repeated (or two keys PyYAML builds equal): its loader reports it
        if anchor is not None:
            size = child - node + (self.keys - keys_before) + (self.alias_extra - extra_before)
            self.anchors[anchor] = (collection, size)
        return collection, child

    def _composite(self, node: int, kind: int) -> tuple[Any, int]:
        """A node that is more than a plain or quoted scalar: a collection, an alias, an anchored or
        block scalar (and what is declined: tags, anchored keys, aliases as keys)."""
        if kind & _UNSURE_TYPE:
            raise _Decline
        if kind & (_MAP | _SEQ):
            return self._collection(node, kind)
        if kind & _VALREF:
            value, size = self.anchors.get(bytes(_VAL_REF(self.tree, node)), (None, None))
            if size is None:
                raise _Decline  # unknown anchor, or one whose node contains this alias
            self.alias_extra += size - 1
            if self.alias_extra > self.max_nodes:
                raise _Decline  # an alias bomb: declined at once, refused by the general loader
            return value, node + 1
        if kind & _BLOCK_SCALAR and not self.data.endswith(b"\n"):
            raise _Decline  # at the end of the text PyYAML chomps its missing line break
        anchor = self._anchor(node, kind)
        raw = _VAL(self.tree, node)
        if kind & _VAL_PLAIN or raw is None:
            value = self._plain(raw)
        else:
            value = str(raw, "utf-8") if kind & _BLOCK_SCALAR else self._quoted(raw)
        if anchor is not None:
            self.anchors[anchor] = (value, 1)
        return value, node + 1

    def _quoted(self, raw: memoryview, one_line: bool = False) -> str:
        """A quoted scalar's value; declined unless what follows its closing quote on its line is
        only spaces, a comment, or `:`, `,`, `]` or `}` (PyYAML refuses `'a'  - ` and the like), and,
        `one_line`, unless it is on one line."""
        offset = _address(raw) - self.base  # the view starts just after its opening quote
        data = self.data
        if not 0 < offset <= len(data):
            raise _Decline
        quote = data[offset - 1]
        close = offset + len(raw)  # its closing quote, when nothing in it was escaped or folded
        if quote == 0x27:
            if data[close : close + 1] == b"'" and data.find(b"'", offset, close) == -1:
                close += 1
            else:
                match = _SINGLE_QUOTED_REST.match(data, offset)
                close = -1 if match is None else match.end()
        elif quote == 0x22:
            if (
                data[close : close + 1] == b'"'
                and data.find(b'"', offset, close) == data.find(b"\\", offset, close) == -1
            ):
                close += 1
            else:
                match = _DOUBLE_QUOTED_REST.match(data, offset)
                close = -1 if match is None else match.end()
        else:
            raise _Decline
        if close < 0 or not _AFTER_QUOTED.match(data, close):
            raise _Decline
        if one_line and data.find(b"\n", offset, close) != -1:
            raise _Decline  # a key: PyYAML reads no implicit key across lines
        return str(raw, "utf-8")

    def _plain(self, raw: memoryview | None) -> Any:
        """A plain scalar's value (no value at all is an empty plain scalar: null)."""
        text = "" if raw is None else str(raw, "utf-8")
        value = self.plain.get(text, _UNRESOLVED)
        return _resolve(self.plain, text) if value is _UNRESOLVED else value

    def _anchor(self, node: int, kind: int) -> bytes | None:
        """The node's anchor name, None without one; marked open until its node is built."""
        if not kind & _VALANCH:
            return None
        name = bytes(_VAL_ANCHOR(self.tree, node))
        if name in self.anchors:
            raise _Decline  # PyYAML refuses a second anchor of one name
        self.anchors[name] = (None, None)  # open: an alias to it now would be recursive
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
        """The 1-based line of a byte offset; the walk asks in document order, so each stretch of the
        text is counted once."""
        counted, line = self.counted
        if offset < counted:
            counted, line = 0, 1
        line += self.data.count(b"\n", counted, offset)
        self.counted = (offset, line)
        return line


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
