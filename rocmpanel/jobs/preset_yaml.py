"""Reading preset files: YAML composed into nodes and checked against the schema.

Re-exported by :mod:`rocmpanel.jobs.presets` (import from there). The YAML is composed into
nodes (``yaml.compose`` with the safe loader) rather than loaded into Python objects, so
every error can say the line it is on, and a key written twice in one mapping is caught
(``yaml.safe_load`` silently keeps the last one).
"""

from __future__ import annotations

import math
import unicodedata
from decimal import Decimal, InvalidOperation
from pathlib import Path
from typing import Any

import yaml

from rocmpanel.base.files import CONFIG_LIMIT, NotRegularFileError, TooLargeError, read_bytes
from rocmpanel.base.files import size_text as _size_text
from rocmpanel.jobs.preset_schema import (
    ALLOC_VARS,
    ARCHS,
    HEADER_VAR,
    ID_MAX,
    ID_RE,
    ITEM_KEYS,
    MAX_DEPTH,
    NAME_MAX,
    NO_PRESET,
    PLATFORMS,
    RESERVED_IDS,
    TEXT_MAX,
    TOP_KEYS,
    TORCH_SETTINGS,
    TUNABLEOP_VARS,
    UNSEEN_CATEGORIES,
    VISIBLE_VARS,
    Item,
    Preset,
    PresetError,
    join_path,
    name_key,
    torch_value,
    words,
)

_STR = "tag:yaml.org,2002:str"
_INT = "tag:yaml.org,2002:int"
_FLOAT = "tag:yaml.org,2002:float"
_BOOL = "tag:yaml.org,2002:bool"

#: Control characters a multi-line text may hold (a description's line breaks and tabs).
_LAYOUT = frozenset("\n\t")


def _unseen(value: str, allowed: frozenset[str]) -> str | None:
    """Why ``value`` is refused for holding a character that is not shown as written (a
    control character such as ESC, which a terminal obeys; a format character such as a
    zero-width space or a right-to-left override, which hides or reorders text), or None."""
    for char in value:
        if char in allowed:
            continue
        category = unicodedata.category(char)
        if category in UNSEEN_CATEGORIES:
            label = unicodedata.name(char, "")
            shown = f"U+{ord(char):04X}" + (f" ({label})" if label else "")
            kind = "a control character" if category == "Cc" else "an invisible character"
            return (
                f"holds {kind}, {shown}, which is not shown as written and can hide or "
                "change what the text says; remove it"
            )
    return None


# ---- reading nodes ---------------------------------------------------------------------------


class Reader:
    """Turns the composed nodes of one file into checked values; every error names the
    file, the node's line and the field path."""

    def __init__(self, file: str, builtin: bool) -> None:
        self.file = file
        self.builtin = builtin
        self._loader = yaml.SafeLoader("")

    def fail(self, node: yaml.Node | None, path: str, problem: str) -> PresetError:
        line = node.start_mark.line + 1 if node is not None else None
        return PresetError(self.file, line, path, problem)

    def scalar(self, node: yaml.Node) -> Any:
        return self._loader.construct_object(node, deep=True)

    def mapping(
        self, node: yaml.Node, path: str, what: str
    ) -> list[tuple[str, yaml.Node, yaml.Node]]:
        """(key, key node, value node) of a mapping; keys must be plain text, once each."""
        if not isinstance(node, yaml.MappingNode):
            raise self.fail(node, path, f"must be a mapping of {what}; got {_kind(node)}")
        seen: dict[str, int] = {}
        pairs: list[tuple[str, yaml.Node, yaml.Node]] = []
        for key_node, value_node in node.value:
            if not isinstance(key_node, yaml.ScalarNode):
                raise self.fail(
                    key_node, path or "preset", f"a key must be plain text; got {_kind(key_node)}"
                )
            key = str(key_node.value)
            line = key_node.start_mark.line + 1
            if key in seen:
                raise self.fail(
                    key_node,
                    join_path(path, key),
                    f"written twice in one mapping (lines {seen[key]} and {line}); keep one",
                )
            seen[key] = line
            pairs.append((key, key_node, value_node))
        return pairs

    def text(
        self,
        node: yaml.Node,
        path: str,
        *,
        limit: int = TEXT_MAX,
        allowed: frozenset[str] = frozenset(),
    ) -> str:
        """A text scalar; refuses control and invisible characters except ``allowed``."""
        if not isinstance(node, yaml.ScalarNode) or node.tag != _STR:
            raise self.fail(node, path, f"must be text; got {_kind(node)}")
        value = str(node.value)
        if len(value) > limit:
            raise self.fail(node, path, f"is {len(value):,} characters long; at most {limit:,}")
        refused = _unseen(value, allowed)
        if refused is not None:
            raise self.fail(node, path, refused)
        return value

    def texts(self, node: yaml.Node, path: str, choices: tuple[str, ...]) -> tuple[str, ...]:
        """A list of distinct words from ``choices`` (one word alone is a list of one)."""
        nodes = [node] if isinstance(node, yaml.ScalarNode) else None
        if isinstance(node, yaml.SequenceNode):
            nodes = list(node.value)
        if nodes is None:
            raise self.fail(node, path, f"must be a list of {words(choices)}; got {_kind(node)}")
        if not nodes:
            raise self.fail(node, path, f"must not be empty: list one or more of {words(choices)}")
        out: list[str] = []
        for index, entry in enumerate(nodes):
            here = f"{path}[{index}]" if isinstance(node, yaml.SequenceNode) else path
            word = self.text(entry, here)
            if word not in choices:
                raise self.fail(entry, here, f"unknown {word!r}; use {words(choices)}")
            if word in out:
                raise self.fail(entry, here, f"{word!r} is listed twice")
            out.append(word)
        return tuple(out)

    def boolean(self, node: yaml.Node, path: str) -> bool:
        if not isinstance(node, yaml.ScalarNode) or node.tag != _BOOL:
            raise self.fail(node, path, f"must be true or false; got {_shown(node)}")
        return bool(self.scalar(node))

    def integer(self, node: yaml.Node, path: str, low: int, high: int | None) -> int:
        if not isinstance(node, yaml.ScalarNode) or node.tag != _INT:
            raise self.fail(node, path, f"must be a whole number; got {_shown(node)}")
        value = int(self.scalar(node))
        if high is None and value < low:
            raise self.fail(node, path, f"must be at least {low}; got {value}")
        if high is not None and not low <= value <= high:
            raise self.fail(node, path, f"must be from {low} to {high}; got {value}")
        return value

    def number(self, node: yaml.Node, path: str) -> float:
        if not isinstance(node, yaml.ScalarNode) or node.tag not in (_INT, _FLOAT):
            raise self.fail(node, path, f"must be a number; got {_shown(node)}{_as_number(node)}")
        value = float(self.scalar(node))
        if not math.isfinite(value):
            raise self.fail(node, path, f"must be a finite number; got {node.value}")
        return value


def _as_number(node: yaml.Node) -> str:
    """A hint for a number YAML read as text: YAML 1.1 reads ``1e-3`` (no dot, no sign
    in the exponent) and quoted numbers as text, so say how to write it."""
    if not isinstance(node, yaml.ScalarNode) or node.tag != _STR:
        return ""
    try:
        number = Decimal(str(node.value).strip())
    except (InvalidOperation, ValueError):
        return ""
    if not number.is_finite():
        return ""
    return f"; write it as {number:f}"


def _kind(node: yaml.Node | None) -> str:
    if isinstance(node, yaml.MappingNode):
        return "a mapping"
    if isinstance(node, yaml.SequenceNode):
        return "a list"
    if node is None or node.tag == "tag:yaml.org,2002:null":
        return "nothing"
    if node.tag == _STR:
        return "text"
    if node.tag == _BOOL:
        return f"the boolean {node.value}"
    if node.tag in (_INT, _FLOAT):
        return f"the number {node.value}"
    tag = node.tag.replace("tag:yaml.org,2002:", "!!")
    return f"a value tagged {tag}"


def _shown(node: yaml.Node) -> str:
    if isinstance(node, yaml.ScalarNode) and node.tag == _STR:
        return f"the text {node.value!r}"
    return _kind(node)


# ---- the schema ------------------------------------------------------------------------------


def _preset(reader: Reader, node: yaml.Node, prefix: str) -> Preset:
    if not isinstance(node, yaml.MappingNode):
        raise reader.fail(
            node,
            prefix or "preset",
            f"a preset must be a mapping with at least id and name; got {_kind(node)}",
        )
    fields: dict[str, tuple[yaml.Node, yaml.Node]] = {}
    for key, key_node, value_node in reader.mapping(node, prefix, "fields"):
        if key not in TOP_KEYS:
            raise reader.fail(
                key_node, join_path(prefix, key), f"unknown field; a preset has {words(TOP_KEYS)}"
            )
        fields[key] = (key_node, value_node)
    for required in ("id", "name"):
        if required not in fields:
            raise reader.fail(node, join_path(prefix, required), "missing; every preset needs one")
    id_node = fields["id"][1]
    ident = reader.text(id_node, join_path(prefix, "id"), limit=ID_MAX)
    if ID_RE.fullmatch(ident) is None:
        raise reader.fail(
            id_node,
            join_path(prefix, "id"),
            f"{ident!r} is not a usable id: use lower-case letters, digits and -, starting "
            "with a letter or digit",
        )
    if ident == NO_PRESET:
        raise reader.fail(
            id_node, join_path(prefix, "id"), f"{NO_PRESET!r} means 'no preset'; choose another id"
        )
    if ident in RESERVED_IDS:
        raise reader.fail(
            id_node,
            join_path(prefix, "id"),
            f"{ident!r} is a device name on Windows (like CON, NUL, COM1 and LPT1), so "
            f"{ident}.yaml cannot be a file there; choose another id",
        )
    name_node = fields["name"][1]
    name = reader.text(
        name_node, join_path(prefix, "name"), limit=NAME_MAX, allowed=frozenset("\n")
    ).strip()
    if not name or "\n" in name:
        raise reader.fail(
            name_node, join_path(prefix, "name"), "must be one non-empty line of text"
        )
    description = ""
    if "description" in fields:
        description = reader.text(
            fields["description"][1], join_path(prefix, "description"), allowed=_LAYOUT
        ).strip()
    archs: tuple[str, ...] = ("any",)
    if "archs" in fields:
        archs_node = fields["archs"][1]
        archs = reader.texts(archs_node, join_path(prefix, "archs"), ARCHS)
        if "any" in archs and len(archs) > 1:
            raise reader.fail(
                archs_node, join_path(prefix, "archs"), "'any' already covers every architecture"
            )
    env: tuple[Item, ...] = ()
    if "env" in fields and not _is_null(fields["env"][1]):
        env = _env_items(reader, fields["env"][1], join_path(prefix, "env"))
    torch: tuple[Item, ...] = ()
    if "torch" in fields and not _is_null(fields["torch"][1]):
        torch = _torch_items(reader, fields["torch"][1], join_path(prefix, "torch"))
    return Preset(
        id=ident,
        name=name,
        description=description,
        archs=archs,
        env=env,
        torch=torch,
        builtin=reader.builtin,
    )


def _is_null(node: yaml.Node) -> bool:
    return isinstance(node, yaml.ScalarNode) and node.tag == "tag:yaml.org,2002:null"


def _item_parts(
    reader: Reader, key_node: yaml.Node, node: yaml.Node, path: str
) -> tuple[yaml.Node, str, str, tuple[str, ...]]:
    """(value node, why, source, platforms) of a long (mapping with ``value``) or short item."""
    long_form = isinstance(node, yaml.MappingNode) and any(
        isinstance(k, yaml.ScalarNode) and k.value in ITEM_KEYS for k, _ in node.value
    )
    if not long_form:
        if reader.builtin:
            raise reader.fail(
                key_node, path, "a built-in item is written long: value, why and source"
            )
        return node, "", "", PLATFORMS
    parts: dict[str, yaml.Node] = {}
    for name, name_node, value_node in reader.mapping(node, path, "value, why, source"):
        if name not in ITEM_KEYS:
            raise reader.fail(
                name_node, join_path(path, name), f"unknown field; an item has {words(ITEM_KEYS)}"
            )
        parts[name] = value_node
    if "value" not in parts:
        raise reader.fail(node, join_path(path, "value"), "missing; the item needs a value")
    why = ""
    if "why" in parts:
        why = reader.text(parts["why"], join_path(path, "why"), allowed=_LAYOUT).strip()
    source = ""
    if "source" in parts:
        source = reader.text(parts["source"], join_path(path, "source"), allowed=_LAYOUT).strip()
    if reader.builtin:
        for label, text in (("why", why), ("source", source)):
            if not text:
                raise reader.fail(
                    parts.get(label, node), join_path(path, label), "a built-in item needs one"
                )
    platforms = PLATFORMS
    if "platforms" in parts:
        platforms = reader.texts(parts["platforms"], join_path(path, "platforms"), PLATFORMS)
        platforms = tuple(p for p in PLATFORMS if p in platforms)
    return parts["value"], why, source, platforms


def _env_items(reader: Reader, node: yaml.Node, path: str) -> tuple[Item, ...]:
    from rocmpanel.envvars.catalogue import NAME_RE, Status, load_catalogue

    catalogue = load_catalogue()
    items = []
    for name, key_node, value_node in reader.mapping(node, path, "variable names"):
        here = join_path(path, name)
        if NAME_RE.fullmatch(name) is None:
            raise reader.fail(
                key_node,
                here,
                "not a usable variable name: use letters, digits and _, not starting with a digit",
            )
        if name in ALLOC_VARS:
            raise reader.fail(
                key_node,
                here,
                "set the allocator through the `alloc` torch setting; the worker writes it to "
                "the variable name its torch reads",
            )
        if name in TUNABLEOP_VARS:
            raise reader.fail(
                key_node,
                here,
                "set TunableOp through the `tunableop` torch setting; the worker sets this "
                "variable from it",
            )
        if name == HEADER_VAR or name.startswith("ROCMPANEL_"):
            raise reader.fail(key_node, here, "rocmpanel sets this variable itself")
        if name.startswith("PYTHON"):
            # The job layer sets PYTHONUNBUFFERED and PYTHONIOENCODING and clears
            # PYTHONPATH (jobs/spec.py); PYTHONHOME=/nonexistent stops the interpreter.
            raise reader.fail(
                key_node,
                here,
                "the panel sets the worker's Python variables itself; a preset that changes "
                "them can stop every job",
            )
        if name in catalogue.dangerous:
            raise reader.fail(
                key_node,
                here,
                f"a preset may not set {name}: {catalogue.dangerous[name].breaks}",
            )
        value_at, why, source, platforms = _item_parts(reader, key_node, value_node, here)
        value_path = join_path(here, "value") if value_at is not value_node else here
        if not isinstance(value_at, yaml.ScalarNode) or value_at.tag != _STR:
            shown = value_at.value if isinstance(value_at, yaml.ScalarNode) else None
            hint = f': write "{shown}" in quotes' if shown not in (None, "", "~", "null") else ""
            raise reader.fail(
                value_at,
                value_path,
                f"an environment value must be text, got {_kind(value_at)}{hint}",
            )
        value = str(value_at.value)
        if value == "":
            why_empty = (
                "set but empty, it hides every GPU; leave the variable out instead"
                if name in VISIBLE_VARS
                else "an empty value is not the same as an unset one; leave the variable out"
            )
            raise reader.fail(value_at, value_path, why_empty)
        for platform in platforms:
            verdict = catalogue.validate(name, value, platform)
            if verdict.status is Status.INVALID:
                raise reader.fail(value_at, value_path, verdict.message)
        items.append(
            Item("env", name, value, why, source, platforms, line=key_node.start_mark.line + 1)
        )
    return tuple(items)


def _torch_items(reader: Reader, node: yaml.Node, path: str) -> tuple[Item, ...]:
    items = []
    for key, key_node, value_node in reader.mapping(node, path, "torch settings"):
        here = join_path(path, key)
        if key not in TORCH_SETTINGS:
            raise reader.fail(key_node, here, f"unknown torch setting; use {words(TORCH_SETTINGS)}")
        value_at, why, source, platforms = _item_parts(reader, key_node, value_node, here)
        value_path = join_path(here, "value") if value_at is not value_node else here
        value = torch_value(reader, key, value_at, value_path)
        items.append(
            Item("torch", key, value, why, source, platforms, line=key_node.start_mark.line + 1)
        )
    return tuple(items)


# ---- entry points ----------------------------------------------------------------------------


class _TooDeep(Exception):
    """A node nested deeper than MAX_DEPTH; ``line`` is where (1-based)."""

    def __init__(self, line: int) -> None:
        super().__init__(line)
        self.line = line


class _DepthLoader(yaml.SafeLoader):
    """The safe loader, stopping at MAX_DEPTH levels of nesting (its composer recurses
    once per level: a file of 1,000 brackets would otherwise raise RecursionError)."""

    _depth = 0

    def compose_node(self, parent: yaml.Node | None, index: Any) -> yaml.Node | None:
        self._depth += 1
        try:
            if self._depth > MAX_DEPTH:
                event = self.peek_event()  # type: ignore[no-untyped-call]
                raise _TooDeep(event.start_mark.line + 1)
            return super().compose_node(parent, index)
        finally:
            self._depth -= 1


_TOO_DEEP = "nests too deeply to be a preset"


def _compose(text: str, file: str) -> yaml.Node | None:
    if len(text) > CONFIG_LIMIT:
        raise PresetError(file, None, "file", f"is larger than {_size_text(CONFIG_LIMIT)}")
    try:
        return yaml.compose(text, Loader=_DepthLoader)
    except _TooDeep as exc:
        raise PresetError(
            file,
            exc.line,
            "file",
            f"{_TOO_DEEP} (more than {MAX_DEPTH} levels of lists and mappings)",
        ) from None
    except RecursionError:
        # Only when called with little stack left: the depth limit comes first otherwise.
        raise PresetError(file, None, "file", _TOO_DEEP) from None
    except yaml.MarkedYAMLError as exc:
        mark = exc.problem_mark or exc.context_mark
        line = mark.line + 1 if mark is not None else None
        problem = exc.problem or "not valid YAML"
        raise PresetError(file, line, "file", f"not valid YAML: {problem}") from exc
    except yaml.YAMLError as exc:
        raise PresetError(file, None, "file", f"not valid YAML: {exc}") from exc


def parse_preset(text: str, file: str, *, builtin: bool = False) -> Preset:
    """Parse and validate one preset; PresetError names file, line and field."""
    node = _compose(text, file)
    if node is None or _is_null(node):
        raise PresetError(file, None, "file", "is empty; a preset needs at least id and name")
    try:
        return _preset(Reader(file, builtin), node, "")
    except RecursionError:  # the composed tree is at most MAX_DEPTH deep; a safety net
        raise PresetError(file, None, "file", _TOO_DEEP) from None


def parse_preset_list(text: str, file: str, *, builtin: bool = False) -> tuple[Preset, ...]:
    """A YAML list of presets (resources/presets.yaml); ids and names must be unique."""
    node = _compose(text, file)
    reader = Reader(file, builtin)
    if not isinstance(node, yaml.SequenceNode):
        raise reader.fail(node, "presets", f"must be a list of presets; got {_kind(node)}")
    presets: list[Preset] = []
    for index, entry in enumerate(node.value):
        preset = _preset(reader, entry, f"presets[{index}]")
        for other in presets:
            if other.id == preset.id or name_key(other.name) == name_key(preset.name):
                raise reader.fail(
                    entry, f"presets[{index}]", f"id or name clashes with {other.id!r}"
                )
        presets.append(preset)
    return tuple(presets)


def read_preset_file(path: Path, *, builtin: bool = False) -> Preset:
    """Read and parse a preset file (bounded read; regular files only)."""
    file = str(path)
    try:
        data = read_bytes(path, CONFIG_LIMIT)
    except NotRegularFileError as exc:
        raise PresetError(file, None, "file", "is not a regular file; it is not read") from exc
    except TooLargeError as exc:
        raise PresetError(file, None, "file", f"is larger than {_size_text(CONFIG_LIMIT)}") from exc
    except OSError as exc:
        raise PresetError(file, None, "file", f"cannot be read: {exc.strerror or exc}") from exc
    try:
        text = data.decode("utf-8")
    except UnicodeDecodeError as exc:
        line = data[: exc.start].count(b"\n") + 1
        raise PresetError(file, line, "file", "is not UTF-8 text; save it as UTF-8") from exc
    preset = parse_preset(text, file, builtin=builtin)
    return Preset(**{**_fields(preset), "path": path})


def _fields(preset: Preset) -> dict[str, Any]:
    return {name: getattr(preset, name) for name in preset.__dataclass_fields__}
