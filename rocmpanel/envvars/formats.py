"""The two Linux file formats rocmpanel edits, as pure text transforms.

- ``~/.config/environment.d/<nn>-rocmpanel.conf``: ``KEY=VALUE`` lines (systemd
  environment.d(5)); lines of other variables, comments and blank lines stay as they are.
- ``~/.profile``: only the block between the two marker comments is rocmpanel's; every byte
  outside it is kept.

Text is decoded with ``surrogateescape`` by the callers, so any bytes round-trip exactly.
Values keep ``$NAME`` / ``${NAME}`` references: both formats expand them, which is how a
PATH entry list says "and the previous PATH".
"""

from __future__ import annotations

import re
from collections.abc import Iterable, Mapping, Sequence

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


def unsafe_value_reason(value: str) -> str | None:
    """Why ``value`` cannot be stored safely in every store, or None."""
    if "\x00" in value:
        return "the value contains a NUL character, which no environment can hold."
    if "\n" in value or "\r" in value:
        return "the value contains a line break; environment files hold one line per variable."
    if any("\ud800" <= char <= "\udfff" for char in value):
        return "the value contains characters that are not valid text (lone surrogates)."
    if "`" in value or "$(" in value:
        return (
            "the value contains ` or $( (shell command substitution), which ~/.profile "
            "would run as a command."
        )
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


def quote_envd(value: str) -> str:
    """Write ``value`` so environment.d reads it back unchanged (``$`` references kept)."""
    if _SAFE_RE.fullmatch(value):
        return value
    escaped = value.replace("\\", "\\\\").replace('"', '\\"')
    return f'"{escaped}"'


def unquote_envd(raw: str) -> str:
    """The value of the right-hand side of an environment.d assignment."""
    raw = raw.strip()
    out: list[str] = []
    quote: str | None = None
    index = 0
    while index < len(raw):
        char = raw[index]
        if quote is None and char in "\"'":
            quote = char
        elif quote is not None and char == quote:
            quote = None
        elif char == "\\" and quote != "'" and index + 1 < len(raw):
            index += 1
            out.append(raw[index])
        else:
            out.append(char)
        index += 1
    return "".join(out)


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
    first = group[0]
    if first.lstrip().startswith(("#", ";")):
        return None
    match = _ASSIGN_RE.match(first)
    return match.group(1) if match else None


def parse_environment_d(text: str) -> dict[str, str]:
    """Variables assigned in one environment.d file (the last assignment wins)."""
    values: dict[str, str] = {}
    for group in _logical_lines(text):
        name = _assigned_name(group)
        if name is None:
            continue
        joined = "".join(line.rstrip("\n").removesuffix("\\") for line in group)
        values[name] = unquote_envd(joined.split("=", 1)[1])
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


def render_environment_d(old: str | None, changes: Iterable[Change]) -> str | None:
    """New file text after ``changes`` (value None = unset); None = still no file."""
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
        ending = "\n" if group[-1].endswith("\n") else ""
        out.append(f"{name}={quote_envd(value)}{ending}")
    result = "".join(out)
    for name, value in pending.items():
        if value is not None and name not in last_index:
            result = _terminated(result) + f"{name}={quote_envd(value)}\n"
    return result


# ---- ~/.profile managed block --------------------------------------------------------------


class BlockError(ValueError):
    """The managed block's markers are broken (one missing, or repeated)."""


def quote_sh(value: str) -> str:
    """Double-quoted for sh, keeping ``$NAME`` expansion (command substitution is refused
    before this point by :func:`unsafe_value_reason`)."""
    escaped = value.replace("\\", "\\\\").replace('"', '\\"')
    return f'"{escaped}"'


def unquote_sh(raw: str) -> str:
    raw = raw.strip()
    if len(raw) >= 2 and raw[0] == raw[-1] == "'":
        return raw[1:-1]
    if len(raw) >= 2 and raw[0] == raw[-1] == '"':
        return re.sub(r'\\([\\"$`])', r"\1", raw[1:-1])
    return raw


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


def render_block(values: Mapping[str, str]) -> str:
    body = "".join(f"export {name}={quote_sh(value)}\n" for name, value in values.items())
    return f"{BLOCK_BEGIN}\n{BLOCK_NOTE}\n{body}{BLOCK_END}\n"


def render_profile(old: str | None, changes: Iterable[Change]) -> str | None:
    """New ~/.profile text; the block is rewritten, every other byte kept."""
    text = old or ""
    lines = split_lines(text)
    span = find_block(lines)
    values = parse_profile(text)
    for name, value in changes:
        if value is None:
            values.pop(name, None)
        else:
            values[name] = value
    block = render_block(values) if values else ""
    if span is None:
        if not block:
            return old
        return _terminated(text) + block
    before = "".join(lines[: span[0]])
    after = "".join(lines[span[1] + 1 :])
    end_line = lines[span[1]]
    if block and not end_line.endswith("\n"):
        block = block[:-1]  # the old end marker had no newline: keep the file's ending
    return before + block + after
