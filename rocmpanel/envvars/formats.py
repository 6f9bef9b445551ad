"""The two Linux file formats rocmpanel edits, as pure text transforms.

- ``~/.config/environment.d/<nn>-rocmpanel.conf``: ``KEY=VALUE`` lines (systemd
  environment.d(5)); lines of other variables, comments and blank lines stay as they are.
- ``~/.profile``: only the block between the two marker comments is rocmpanel's; every byte
  outside it is kept.

Text is decoded with ``surrogateescape`` by the callers, so any bytes round-trip exactly.

Values and ``$`` (the policy shown in ``rocmpanel env --help`` and the editor): a value is
stored literally, quoted so that neither sh nor environment.d expands anything in it
(``'...'`` in ~/.profile; ``$`` doubled as ``$$`` in environment.d, the one escape systemd's
``replace_env`` knows). Only paths and PATH-like lists (the ``references`` names the
renderers get) keep ``$NAME`` / ``${NAME}`` references, expanded by both formats: that is how
a PATH entry list says "and the previous PATH", and how ROCM_PATH says ``$HOME/rocm``. Any
other ``$`` in such a value is refused before it gets here (:func:`reference_problem`): sh
and systemd disagree on everything else (``${X:1}``, ``$$``, ``$1``...), and some of it
breaks a login shell.

Lines that a change does not touch keep their exact bytes, in both files.
"""

from __future__ import annotations

import re
from collections.abc import Collection, Iterable, Mapping, Sequence

from rocmpanel.base.i18n import QT_TRANSLATE_NOOP, translate

BLOCK_BEGIN = "# >>> rocmpanel environment >>>"
BLOCK_END = "# <<< rocmpanel environment <<<"
BLOCK_NOTE = (
    "# Managed by rocmpanel (Setup tab or `rocmpanel env`); edits inside this block are replaced."
)
ENVD_HEADER = (
    "# Written by rocmpanel (Setup tab or `rocmpanel env`). The systemd user manager reads\n"
    "# this file when your session starts: changes apply from the next login.\n"
)
_ASSIGN_RE = re.compile(r"^[ \t]*([A-Za-z_][A-Za-z0-9_]*)[ \t]*=")
_EXPORT_RE = re.compile(r"^export ([A-Za-z_][A-Za-z0-9_]*)=(.*)$")
_SAFE_RE = re.compile(r"^[A-Za-z0-9_./:,+=@%${}\-]*$")

Change = tuple[str, str | None]
# What a backslash escapes inside "..." (sh, and systemd's env-file parser alike).
_DQ_ESCAPABLE = '$`"\\'


def unsafe_value_reason(value: str) -> str | None:
    """Why ``value`` cannot be stored safely in every store, or None."""
    if "\x00" in value:
        return translate(
            "formats", "the value contains a NUL character, which no environment can hold."
        )
    if "\n" in value or "\r" in value:
        return translate(
            "formats",
            "the value contains a line break; environment files hold one line per variable.",
        )
    if any("\ud800" <= char <= "\udfff" for char in value):
        return translate(
            "formats", "the value contains characters that are not valid text (lone surrogates)."
        )
    if "`" in value or "$(" in value:
        return translate(
            "formats",
            "the value contains ` or $( (shell command substitution); rocmpanel refuses them "
            "so that no environment file it writes can ever run a command.",
        )
    return None


_REFERENCE_RE = re.compile(r"\$(?:\{[A-Za-z_][A-Za-z0-9_]*\}|[A-Za-z_][A-Za-z0-9_]*)")
REFERENCE_RULE = QT_TRANSLATE_NOOP(
    "formats",
    "in a path or PATH-like value, $ may only start a reference to another variable, written "
    "$NAME or ${NAME} (for example /opt/rocm/bin:$PATH)",
)


def reference_problem(value: str) -> str | None:
    """Why ``value`` (of a path or PATH-like variable) uses ``$`` other than as ``$NAME``
    or ``${NAME}``, or None."""
    index = value.find("$")
    while index >= 0:
        match = _REFERENCE_RE.match(value, index)
        if match is None:
            shown = value[index : index + 12]
            return translate(
                "formats",
                "{shown} is not a plain variable reference: {rule}. Shell forms "
                "such as ${{NAME:-x}}, ${{NAME/a/b}}, $1 or $$ mean different things (or fail) "
                "in ~/.profile and environment.d, so they are refused.",
            ).format(shown=repr(shown), rule=translate("formats", REFERENCE_RULE))
        index = value.find("$", match.end())
    return None


def split_lines(text: str) -> list[str]:
    """Lines with their ``\\n`` kept; only ``\\n`` ends a line (``\\r`` stays in the line)."""
    return re.findall(r"[^\n]*\n|[^\n]+$", text)


def split_list(value: str, separator: str) -> list[str]:
    """PATH-like value -> entries (an empty value is an empty list)."""
    return value.split(separator) if value else []


def join_list(entries: Sequence[str], separator: str) -> str:
    return separator.join(entries)


# ---- environment.d ------------------------------------------------------------------------


def quote_envd(value: str, references: bool = False) -> str:
    """Write ``value`` so environment.d reads it back unchanged: literally (``$`` written as
    ``$$``), or with its ``$NAME`` references expanded when ``references``."""
    if not references:
        value = value.replace("$", "$$")
    if _SAFE_RE.fullmatch(value):
        return value
    escaped = value.replace("\\", "\\\\").replace('"', '\\"')
    return f'"{escaped}"'


def unquote_envd(raw: str) -> str:
    """The value of the right-hand side of an environment.d assignment, read as systemd's
    env-file parser reads it. A quote opens only where the value or a quoted part starts
    (``it's`` keeps its quote). Inside double quotes a backslash escapes only the four
    characters of ``_DQ_ESCAPABLE`` and is kept before any other (a Windows path keeps its
    backslashes). Unquoted, a backslash escapes any character, and trailing whitespace is
    dropped unless escaped."""
    out: list[str] = []
    state = ""  # "" = a value may start here, "bare" = unquoted text, or the open quote
    trim: int | None = None  # where unquoted trailing whitespace starts
    index = 0
    while index < len(raw):
        char = raw[index]
        index += 1
        if state == "'":
            if char == "'":
                state = ""
            else:
                out.append(char)
        elif state == '"':
            if char == '"':
                state = ""
            elif char == "\\":
                escaped = raw[index : index + 1]
                index += 1
                out.append(escaped if escaped in _DQ_ESCAPABLE else "\\" + escaped)
            else:
                out.append(char)
        elif char == "\\":
            out.append(raw[index : index + 1])
            index += 1
            state, trim = "bare", None
        elif state == "" and char in "\"'":
            state = char
        elif char in " \t\r\n":
            if state == "bare":
                trim = len(out) if trim is None else trim
                out.append(char)
        else:
            out.append(char)
            state, trim = "bare", None
    return "".join(out[:trim])


def _logical_lines(text: str) -> list[list[str]]:
    """Physical lines grouped so that backslash-continued lines stay together."""
    groups: list[list[str]] = []
    current: list[str] = []
    for line in split_lines(text):
        current.append(line)
        if not line.rstrip("\n").endswith("\\") or not line.endswith("\n"):
            groups.append(current)
            current = []
    if current:
        groups.append(current)
    return groups


def _assigned_name(group: Sequence[str]) -> str | None:
    """The name a group assigns; None for a comment (``#`` or ``;``: no name can start there)
    or any other line."""
    match = _ASSIGN_RE.match(group[0])
    return match.group(1) if match else None


def parse_environment_d(text: str) -> dict[str, str]:
    """Variables assigned in one environment.d file (the last assignment wins); ``$$`` reads
    as the literal ``$`` it stands for, ``$NAME`` references stay as they are."""
    values: dict[str, str] = {}
    for group in _logical_lines(text):
        name = _assigned_name(group)
        if name is None:
            continue
        joined = "".join(line.rstrip("\n").removesuffix("\\") for line in group)
        values[name] = unquote_envd(joined.split("=", 1)[1]).replace("$$", "$")
    return values


def _terminated(text: str) -> str:
    """``text`` ready for a line to be appended (ends with a newline, no open continuation)."""
    if not text:
        return text
    if not text.endswith("\n"):
        text += "\n"
    if text.endswith("\\\n"):
        text += "\n"  # end an open backslash continuation before our line
    return text


def render_environment_d(
    old: str | None, changes: Iterable[Change], references: Collection[str] = ()
) -> str | None:
    """New file text after ``changes`` (value None = unset); None = still no file.

    Values of the names in ``references`` keep their ``$NAME`` references; every other
    value is written literally. Lines of other variables keep their bytes."""
    pending = dict(changes)
    if old is None and all(value is None for value in pending.values()):
        return None
    text = ENVD_HEADER if old is None else old
    groups = _logical_lines(text)
    last_index: dict[str, int] = {}
    for index, group in enumerate(groups):
        name = _assigned_name(group)
        if name in pending:
            last_index[name] = index
    out: list[str] = []
    for index, group in enumerate(groups):
        name = _assigned_name(group)
        if name is None or name not in pending:
            out.extend(group)
            continue
        value = pending[name]
        if value is None or last_index[name] != index:
            continue  # unset, or an earlier assignment the new one replaces
        ending = group[-1][len(group[-1].rstrip("\r\n")) :]  # CRLF stays CRLF
        out.append(f"{name}={quote_envd(value, name in references)}{ending}")
    result = "".join(out)
    for name, value in pending.items():
        if value is not None and name not in last_index:
            result = _terminated(result) + f"{name}={quote_envd(value, name in references)}\n"
    return result


# ---- ~/.profile managed block --------------------------------------------------------------


class BlockError(ValueError):
    """The managed block's markers are broken (one missing, or repeated)."""


def quote_sh(value: str, references: bool = False) -> str:
    """``value`` as one sh word: single-quoted (literal: sh expands nothing in it), or, when
    ``references``, double-quoted so that its ``$NAME`` references expand (every other ``$``
    is refused before this point by :func:`reference_problem`)."""
    if references:
        escaped = value.replace("\\", "\\\\").replace('"', '\\"').replace("`", "\\`")
        return f'"{escaped}"'
    return "'" + value.replace("'", "'\\''") + "'"


def unquote_sh(raw: str) -> str:
    """The value of an assignment's right-hand side as sh reads it, quotes removed (``$``
    expansions are not performed: ``"$HOME/x"`` reads as ``$HOME/x``)."""
    text = raw.strip(" \t")
    out: list[str] = []
    index = 0
    length = len(text)
    while index < length:
        char = text[index]
        if char in " \t;&|<>()":
            break  # the word ends (what follows is a comment, another word or command)
        if char == "'":
            end = text.find("'", index + 1)
            end = length if end < 0 else end
            out.append(text[index + 1 : end])
            index = end + 1
        elif char == '"':
            index += 1
            while index < length and text[index] != '"':
                if text[index] == "\\" and index + 1 < length and text[index + 1] in _DQ_ESCAPABLE:
                    index += 1
                out.append(text[index])
                index += 1
            index += 1
        elif char == "\\" and index + 1 < length:
            out.append(text[index + 1])
            index += 2
        else:
            out.append(char)
            index += 1
    return "".join(out)


def find_block(lines: Sequence[str]) -> tuple[int, int] | None:
    """Indexes of the begin and end marker lines, or None when there is no block."""
    begins = [i for i, line in enumerate(lines) if line.rstrip("\r\n") == BLOCK_BEGIN]
    ends = [i for i, line in enumerate(lines) if line.rstrip("\r\n") == BLOCK_END]
    if not begins and not ends:
        return None
    if len(begins) != 1 or len(ends) != 1 or ends[0] < begins[0]:
        raise BlockError(
            f"the rocmpanel block markers are broken ({len(begins)} start and {len(ends)} end "
            f"marker lines); fix the file by hand: keep one {BLOCK_BEGIN!r} line and one "
            f"{BLOCK_END!r} line after it"
        )
    return begins[0], ends[0]


def _exported(line: str) -> str | None:
    match = _EXPORT_RE.match(line)  # its $ matches before the line's final newline
    return match.group(1) if match else None


def parse_profile(text: str) -> dict[str, str]:
    """Variables exported inside the managed block."""
    lines = split_lines(text)
    span = find_block(lines)
    if span is None:
        return {}
    values: dict[str, str] = {}
    for line in lines[span[0] + 1 : span[1]]:
        match = _EXPORT_RE.match(line.rstrip("\r\n"))
        if match:
            values[match.group(1)] = unquote_sh(match.group(2))
    return values


def export_line(name: str, value: str, references: bool = False, ending: str = "\n") -> str:
    return f"export {name}={quote_sh(value, references)}{ending}"


def render_block(values: Mapping[str, str], references: Collection[str] = ()) -> str:
    body = "".join(export_line(name, value, name in references) for name, value in values.items())
    return f"{BLOCK_BEGIN}\n{BLOCK_NOTE}\n{body}{BLOCK_END}\n"


def _only_boilerplate(body: Sequence[str]) -> bool:
    return all(line.strip() in ("", BLOCK_NOTE) for line in body)


def render_profile(
    old: str | None, changes: Iterable[Change], references: Collection[str] = ()
) -> str | None:
    """New ~/.profile text. Inside the block, only the lines of the changed variables are
    written (in place; a repeated one once); every other byte of the file is kept. A block
    left with no variable is removed."""
    text = old or ""
    lines = split_lines(text)
    span = find_block(lines)
    pending = dict(changes)
    if span is None:
        values = {name: value for name, value in pending.items() if value is not None}
        if not values:
            return old
        return _terminated(text) + render_block(values, references)
    begin, end = span
    body = lines[begin + 1 : end]
    last: dict[str, int] = {}
    for index, line in enumerate(body):
        name = _exported(line)
        if name in pending:
            last[name] = index
    new_body: list[str] = []
    for index, line in enumerate(body):
        name = _exported(line)
        if name is None or name not in pending:
            new_body.append(line)
            continue
        value = pending[name]
        if value is None or last[name] != index:
            continue
        ending = line[len(line.rstrip("\r\n")) :]  # a body line always has one
        new_body.append(export_line(name, value, name in references, ending))
    for name, value in pending.items():
        if value is not None and name not in last:
            new_body.append(export_line(name, value, name in references))
    head = "".join(lines[:begin])
    tail = "".join(lines[end + 1 :])
    if not any(_exported(line) for line in new_body) and _only_boilerplate(new_body):
        return head + tail
    return head + lines[begin] + "".join(new_body) + lines[end] + tail
