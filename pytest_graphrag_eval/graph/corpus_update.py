"""Rewrite reference `output` values inside a corpus file's text, leaving every other byte alone. The file is
composed with PyYAML, whose nodes keep their character spans, so each value is replaced in place (keeping its
style where it can) and nothing else is re-emitted. An anchored output other steps alias is rewritten only
when every step using it gets the same new value."""

from __future__ import annotations

import itertools
import json
from collections import Counter
from collections.abc import Iterator, Sequence
from dataclasses import dataclass
from typing import Any

import yaml

from pytest_graphrag_eval.corpus.reference_steps import step_path

FOLD_WIDTH = 100
OUTPUT_KEY = "output"
MEDIA_TYPE_KEY = "output_media_type"

try:  # LibYAML composes large corpora several times faster
    from yaml import CSafeLoader as _Loader
except ImportError:  # PyYAML built without LibYAML
    from yaml import SafeLoader as _Loader  # type: ignore[assignment]


@dataclass(frozen=True)
class OutputUpdate:
    """A new `output` for reference step [group][index] of a question (and its media type if unset)."""

    question_id: str
    group: int
    index: int
    output: str
    media_type: str | None = None


@dataclass(frozen=True)
class _Site:
    update: OutputUpdate
    step: yaml.MappingNode
    key: yaml.ScalarNode | None  # the `output` key, None when the step has none
    value: yaml.Node | None


def update_corpus_text(text: str, updates: Sequence[OutputUpdate]) -> tuple[str, list[str]]:
    """`text` with the updates applied, and a line per update that could not be applied (why)."""
    root = yaml.compose(text, Loader=_Loader)
    steps = dict(_step_nodes(root))
    problems: list[str] = []
    sites: list[_Site] = []
    for update in updates:
        step = steps.get((update.question_id, update.group, update.index))
        where = f"question {update.question_id!r} {step_path(update.group, update.index)}"
        if step is None:
            problems.append(f"{where}: not found in the file (was it edited during the run?)")
            continue
        key, value = _entry(step, OUTPUT_KEY)
        sites.append(_Site(update, step, key, value))
    newline = "\r\n" if "\r\n" in text else "\n"
    edits: list[tuple[int, int, str]] = []
    # How many steps hold each output node (more than one: an anchor aliased elsewhere).
    uses = Counter(id(value) for step in steps.values() if (value := _entry(step, OUTPUT_KEY)[1]) is not None)
    for site in sites:
        where = f"question {site.update.question_id!r} {step_path(site.update.group, site.update.index)}"
        try:
            edits.extend(_edits(text, site, sites, uses, newline))
        except ValueError as error:
            problems.append(f"{where}: {error}")
    for start, end, replacement in sorted(edits, reverse=True):
        text = text[:start] + replacement + text[end:]
    return text, problems


def _step_nodes(root: yaml.Node | None) -> Iterator[tuple[tuple[str, int, int], yaml.MappingNode]]:
    """((question id, group, index), step node) for every reference step in the document."""
    if isinstance(root, yaml.MappingNode):
        _, root = _entry(root, "templates")
    for template in _items(root):
        for question in _items(_entry(template, "questions")[1]):
            _, question_id = _entry(question, "id")
            if not isinstance(question_id, yaml.ScalarNode):
                continue
            for group_index, group in enumerate(_items(_entry(question, "reference_steps")[1])):
                for step_index, step in enumerate(_items(group)):
                    if isinstance(step, yaml.MappingNode):
                        yield (str(question_id.value), group_index, step_index), step


def _items(node: yaml.Node | None) -> list[Any]:
    return list(node.value) if isinstance(node, yaml.SequenceNode) else []


def _entry(node: yaml.Node | None, name: str) -> tuple[Any, Any]:
    """The `name` key and its value in a mapping node; (None, None) when absent or not a mapping."""
    for key, value in node.value if isinstance(node, yaml.MappingNode) else []:
        if isinstance(key, yaml.ScalarNode) and key.value == name:
            return key, value
    return None, None


def _edits(
    text: str, site: _Site, sites: Sequence[_Site], uses: dict[int, int], newline: str
) -> list[tuple[int, int, str]]:
    """One step's edits: its output value replaced in place, or `output:` inserted after the step's `args`
    (else its last entry); its media type added when unset."""
    update, step, key, value = site.update, site.step, site.key, site.value
    flow = bool(step.flow_style)
    unset_media = update.media_type is not None and _entry(step, MEDIA_TYPE_KEY)[0] is None
    media = [f"{MEDIA_TYPE_KEY}: {update.media_type}"] if unset_media else []
    if key is None or value is None:
        _, anchor = _entry(step, "args")
        _, end = _value_span(text, anchor if anchor is not None else step.value[-1][1])
        column = step.value[0][0].start_mark.column
        rendered = render_scalar(update.output, "'", column, flow, newline)
        return [_appended(end, [f"{OUTPUT_KEY}: {rendered}", *media], column, flow, newline)]
    if value.start_mark.index < key.end_mark.index:  # an alias: the anchored node's text lies before the key
        start = text.index("*", key.end_mark.index)
        end = start + 1
        while end < len(text) and not text[end].isspace() and text[end] not in ",}]":
            end += 1
        return [(start, end, render_scalar(update.output, "'", key.start_mark.column, flow, newline))]
    if uses.get(id(value), 1) > 1:
        sharing = [other for other in sites if other.value is value]
        if len(sharing) < uses[id(value)] or any(other.update.output != update.output for other in sharing):
            raise ValueError(
                "its output is an anchor other steps reuse through an alias, and they would not all get "
                "this new value: edit it by hand"
            )
    start, end = _value_span(text, value)
    style = getattr(value, "style", None) or "'"
    edits = [(start, end, render_scalar(update.output, style, key.start_mark.column, flow, newline))]
    return edits + ([_appended(end, media, key.start_mark.column, flow, newline)] if media else [])


def _value_span(text: str, value: yaml.Node) -> tuple[int, int]:
    """The span of the value's text: after its anchor and tag (kept), trailing blank lines excluded."""
    start, end = value.start_mark.index, value.end_mark.index
    while text[start] in "&!":
        while not text[start].isspace():
            start += 1
        while text[start] in " \t":
            start += 1
    while end > start and text[end - 1] in " \t\r\n":
        end -= 1
    return start, end


def _appended(
    end: int, entries: Sequence[str], column: int, flow: bool, newline: str
) -> tuple[int, int, str]:
    """`entries` inserted at `end` as further entries of the mapping there."""
    separator = ", " if flow else f"{newline}{' ' * column}"
    return end, end, "".join(separator + entry for entry in entries)


def render_scalar(value: str, style: str, key_column: int, flow: bool, newline: str = "\n") -> str:
    """`value` as a YAML scalar for a key at `key_column`, in `style` where the value allows it."""
    indent = " " * (key_column + 2)
    if style in ("|", ">") and not flow and _block_safe(value):
        indicator = style if style == "|" or "\n" not in value.rstrip("\n") else "|"
        chomp = "-" if not value.endswith("\n") else ("+" if value.endswith("\n\n") else "")
        body = value[:-1] if value.endswith("\n") else value
        lines = [indent + line if line else "" for line in body.split("\n")]
        return indicator + chomp + newline + newline.join(lines)
    if style == "'" and value.isprintable():  # no line break of any kind
        return _fold("'" + value.replace("'", "''") + "'", indent, flow, newline)
    return _fold(_double_quoted(value), indent, flow, newline)


def _block_safe(value: str) -> bool:
    first = value.split("\n", 1)[0]
    return (
        bool(value.strip())
        and not first.startswith((" ", "\t"))
        and all(char.isprintable() or char == "\n" for char in value)
        and "\r" not in value
    )


def _double_quoted(value: str) -> str:
    """A YAML double-quoted scalar (JSON string escapes, which YAML shares), printable characters kept."""
    escaped = json.dumps(value, ensure_ascii=False)
    return "".join(char if char.isprintable() else f"\\u{ord(char):04x}" for char in escaped)


def _fold(scalar: str, indent: str, flow: bool, newline: str) -> str:
    """Fold a quoted scalar at single spaces so lines stay under FOLD_WIDTH (a fold reads as a space)."""
    if flow or len(scalar) <= FOLD_WIDTH:
        return scalar
    lines: list[str] = []
    start = 0
    while len(scalar) - start > FOLD_WIDTH:
        cut = _fold_point(scalar, start, start + FOLD_WIDTH)
        if cut is None:
            break
        lines.append(scalar[start:cut])
        start = cut + 1
    lines.append(scalar[start:])
    return (newline + indent).join(lines)


def _fold_point(scalar: str, start: int, limit: int) -> int | None:
    """The last single space before `limit` (neighbours not blank) where the line may break, or after
    it for a long word."""
    for position in itertools.chain(range(limit, start, -1), range(limit, len(scalar) - 1)):
        if (
            scalar[position] == " "
            and scalar[position - 1] not in " \t"
            and scalar[position + 1] not in " \t"
        ):
            return position
    return None
