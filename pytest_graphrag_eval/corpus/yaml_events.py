"""The common YAML document built straight from LibYAML's events, without composing nodes first.

Composing keeps every node alive at once for the collector to walk; events keep only the document.
Anything not plainly common (tags, non-text keys, unusual merges, repeats, errors) returns
`UNUSUAL`, and `yaml_lines`' node loader builds it or says at its line what is wrong.
"""

from __future__ import annotations

from typing import Any, Final

import yaml
from yaml.events import (
    AliasEvent,
    DocumentEndEvent,
    DocumentStartEvent,
    MappingEndEvent,
    MappingStartEvent,
    ScalarEvent,
    SequenceEndEvent,
    SequenceStartEvent,
    StreamEndEvent,
    StreamStartEvent,
)

UNUSUAL: Final = object()
"""What `build_from_events` returns for a document it leaves to the node-based loader."""

_STR_TAG = "tag:yaml.org,2002:str"
_NO_VALUE: Final = object()

try:  # LibYAML's parser, as in yaml_lines
    from yaml import CSafeLoader as _SafeLoader
except ImportError:  # PyYAML built without LibYAML
    from yaml import SafeLoader as _SafeLoader  # type: ignore[assignment]


class LineDict(dict[Any, Any]):
    """A dict that knows the 1-based line where its YAML mapping started (set when it is built)."""

    __slots__ = ("line",)  # no per-mapping attribute dict: a corpus has hundreds of thousands

    line: int | None


class _Unusual(Exception):
    """Raised inside the build: the node-based loader takes the document."""


def build_from_events(source: str | bytes, max_nodes: int, lines: dict[int, int] | None = None) -> Any:
    """The document PyYAML's safe loader builds from `source`, mappings as `LineDict`s with their
    lines (given `lines`: plain dicts, their lines recorded there by id), or `UNUSUAL`."""
    loader = _SafeLoader(source)
    try:
        return _EventBuilder(loader, max_nodes, lines).document()
    except (_Unusual, yaml.YAMLError, RecursionError):
        return UNUSUAL
    finally:
        loader.dispose()


class _EventBuilder:
    """One pass over the events; every node is counted (an alias as its anchor's whole size) so
    that a document past the bound is left to the loader that refuses it."""

    def __init__(self, loader: Any, max_nodes: int, lines: dict[int, int] | None):
        self.loader = loader
        self.lines = lines
        self.next_event = loader.get_event
        self.max_nodes = max_nodes
        self.nodes = 0
        self.anchors: dict[str, tuple[Any, int | None]] = {}  # name -> (value, its size once closed)
        self.plain: dict[str, Any] = {}  # a plain scalar's text -> its value, resolved once
        self.overriding: set[int] = set()  # mappings whose own value of a key overrode a merged one

    def document(self) -> Any:
        next_event = self.next_event
        if type(next_event()) is not StreamStartEvent:
            raise _Unusual
        event = next_event()
        if type(event) is StreamEndEvent:
            return None  # an empty stream, as PyYAML loads it
        if type(event) is not DocumentStartEvent:
            raise _Unusual
        value = self.node(next_event())
        if type(next_event()) is not DocumentEndEvent or type(next_event()) is not StreamEndEvent:
            raise _Unusual  # a second document: the loader refuses it
        return value

    def node(self, event: Any) -> Any:
        kind = type(event)
        if kind is ScalarEvent:
            self.nodes += 1
            value = self.scalar(event)
            if event.anchor is not None:
                self.name(event.anchor, value, 1)
            return value
        if kind is AliasEvent:
            return self.alias(event.anchor)
        if event.tag is not None:
            raise _Unusual  # an explicit tag
        before = self.nodes
        self.nodes += 1
        anchor = event.anchor
        if kind is SequenceStartEvent:
            collection: Any = []
            if anchor is not None:
                self.name(anchor, collection, None)
            self.fill_sequence(collection)
        elif kind is MappingStartEvent:
            collection = self.mapping(event.start_mark.line + 1)
            if anchor is not None:
                self.name(anchor, collection, None)
            self.fill_mapping(collection)
        else:
            raise _Unusual
        if anchor is not None:
            self.anchors[anchor] = (collection, self.nodes - before)
        return collection

    def mapping(self, line: int) -> dict[str, Any]:
        """An empty mapping that knows it starts on `line`."""
        if self.lines is None:
            line_dict = LineDict()
            line_dict.line = line
            return line_dict
        mapping: dict[str, Any] = {}
        self.lines[id(mapping)] = line
        return mapping

    def fill_sequence(self, sequence: list[Any]) -> None:
        next_event, append = self.next_event, sequence.append
        while True:
            event = next_event()
            if type(event) is SequenceEndEvent:
                return
            if type(event) is ScalarEvent and event.anchor is None:
                self.nodes += 1
                append(self.scalar(event))
            else:
                append(self.node(event))

    def fill_mapping(self, mapping: dict[str, Any]) -> None:
        next_event = self.next_event
        merged: dict[str, Any] | None = None  # the pairs of merge keys' mappings, in order
        while True:
            event = next_event()
            kind = type(event)
            if kind is MappingEndEvent:
                if merged is not None:  # as PyYAML flattens: merged pairs first, the mapping's own win
                    if not merged.keys().isdisjoint(mapping):
                        self.overriding.add(id(mapping))
                    own = dict(mapping)
                    mapping.clear()
                    mapping.update(merged)
                    mapping.update(own)
                return
            if kind is not ScalarEvent or event.anchor is not None:
                raise _Unusual  # a collection, alias or anchored scalar as a key
            if event.value == "<<" and event.tag is None and event.implicit[0]:
                self.nodes += 1
                merged = self.merge(next_event(), {} if merged is None else merged)
                continue
            key = self.scalar(event)
            if type(key) is not str or key in mapping:
                raise _Unusual  # a key that is not text (a merge key among them), or a repeated one
            self.nodes += 1
            event = next_event()
            if type(event) is ScalarEvent and event.anchor is None:
                self.nodes += 1
                mapping[key] = self.scalar(event)
            else:
                mapping[key] = self.node(event)

    def merge(self, event: Any, merged: dict[str, Any]) -> dict[str, Any]:
        """`merged` with the pairs a merge key adds: a mapping, or a list of at most one; longer lists and
        non-mappings, where PyYAML's releases differ or raise, go to the node loader."""
        value = self.node(event)
        if type(value) is list and len(value) <= 1:
            value = value[0] if value else {}
        if not isinstance(value, dict) or id(value) in self.overriding or not merged.keys().isdisjoint(value):
            raise _Unusual
        merged.update(value)
        return merged

    def scalar(self, event: Any) -> Any:
        if event.tag is not None:
            raise _Unusual
        text = event.value
        if not event.implicit[0]:  # quoted or a block scalar: text
            return text
        value = self.plain.get(text, _NO_VALUE)
        if value is _NO_VALUE:
            value = self.plain[text] = self.resolved(text)
        return value

    def resolved(self, text: str) -> Any:
        """A plain scalar's value by PyYAML's YAML 1.1 rules: its resolver's tag, its constructor."""
        loader = self.loader
        tag = loader.resolve(yaml.ScalarNode, text, (True, False))
        if tag == _STR_TAG:
            return text
        constructor = loader.yaml_constructors.get(tag)
        if constructor is None:
            raise _Unusual  # `=`, which the safe loader refuses
        try:
            return constructor(loader, yaml.ScalarNode(tag, text))
        except Exception as error:  # a timestamp with month 13: the loader says where
            raise _Unusual from error

    def name(self, anchor: str, value: Any, size: int | None) -> None:
        if anchor in self.anchors:
            raise _Unusual  # an anchor defined twice
        self.anchors[anchor] = (value, size)

    def alias(self, anchor: str) -> Any:
        value, size = self.anchors.get(anchor, (None, None))
        if size is None:
            raise _Unusual  # unknown, or still open: an alias inside the node it names
        self.nodes += size
        if self.nodes > self.max_nodes:
            raise _Unusual
        return value
