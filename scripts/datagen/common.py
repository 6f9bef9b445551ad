"""What every part of the generator shares: the pinned sources, bounded reads, one error type
for bad input, and the YAML writer."""

from __future__ import annotations

import datetime as _dt
import hashlib
import os
import re
import stat
from collections.abc import Iterator, Mapping
from contextlib import contextmanager
from dataclasses import asdict, dataclass
from pathlib import Path, PurePosixPath
from typing import Any

import yaml

from . import excerpts

HERE = Path(__file__).resolve().parent
MAX_READ_BYTES = 16 * 1024 * 1024
"""The most any input of the generator may hold (the largest, pci.ids, is under 2 MiB)."""
FETCH_HINT = "scripts/fetch_data_sources.py"


class DataError(ValueError):
    """An input of the generator is missing, unreadable or not what it should be; the
    message names the file (and source key) and says what was expected, in one line."""


@dataclass(frozen=True)
class Source:
    """One upstream file the generator reads: where it comes from and how old it is."""

    key: str  # the name generated files cite it by
    what: str  # one line: what it is
    file: str  # its path inside the sources folder
    url: str  # where a fresh copy is fetched from
    repo: str = ""  # owner/name when it comes from a git repository
    path: str = ""  # its path in that repository
    commit: str = ""  # the commit the local copy was taken at
    date: str = ""  # the date of that commit or of the data (YYYY-MM-DD)
    sha256: str = ""  # of the local copy the shipped files were made from ("" = not checked)
    bytes: int | None = None  # that copy's size
    excerpt: str = ""  # the excerpts.RULES rule the local copy keeps of the download

    def record(self) -> dict[str, str]:
        """The entry a generated file's ``generated.sources`` lists (nothing about the local
        copy: its path, hash, size or excerpt rule)."""
        local = ("file", "sha256", "bytes", "excerpt")
        return {k: str(v) for k, v in asdict(self).items() if v and k not in local}

    def refetch(self) -> str:
        return f"re-fetch with {FETCH_HINT} {self.key}"


# ---------------------------------------------------------------- bounded reads


_KINDS = (
    (stat.S_ISDIR, "a folder"),
    (stat.S_ISFIFO, "a FIFO"),
    (stat.S_ISCHR, "a character device"),
    (stat.S_ISBLK, "a block device"),
    (stat.S_ISSOCK, "a socket"),
)


def _kind(mode: int) -> str:
    return next((name for test, name in _KINDS if test(mode)), "not a regular file")


def read_bytes(path: Path, what: str, limit: int = MAX_READ_BYTES) -> bytes:
    """The bytes of a regular file of at most ``limit`` bytes. FileNotFoundError when it is
    not there; DataError for a folder, FIFO, device or socket (never opened, so a FIFO or
    /dev/zero cannot hang the generator) and for a file over the limit."""
    info = os.stat(path)  # follows a link: a link to /dev/zero is a device
    if not stat.S_ISREG(info.st_mode):
        raise DataError(f"{what} {path} is {_kind(info.st_mode)}, not a regular file")
    if info.st_size > limit:
        raise DataError(f"{what} {path} is larger than {limit // (1024 * 1024)} MiB")
    flags = os.O_RDONLY | getattr(os, "O_NONBLOCK", 0) | getattr(os, "O_CLOEXEC", 0)
    fd = os.open(path, flags)
    with os.fdopen(fd, "rb") as handle:
        if not stat.S_ISREG(os.fstat(handle.fileno()).st_mode):  # swapped since the stat
            raise DataError(f"{what} {path} is not a regular file")
        data = handle.read(limit + 1)
    if len(data) > limit:
        raise DataError(f"{what} {path} is larger than {limit // (1024 * 1024)} MiB")
    return data


def decode(data: bytes, where: str) -> str:
    """UTF-8 text; DataError naming ``where`` when it is not UTF-8."""
    try:
        return data.decode("utf-8")
    except UnicodeDecodeError as exc:
        raise DataError(f"{where} is not UTF-8 text (bad byte at offset {exc.start})") from None


def read_text(path: Path, what: str, limit: int = MAX_READ_BYTES) -> str:
    """A bounded, checked read of a UTF-8 file the generator is given (recipe, pins, ...)."""
    try:
        data = read_bytes(path, what, limit)
    except FileNotFoundError:
        raise DataError(f"{what} {path} does not exist") from None
    except OSError as exc:
        raise DataError(f"{what} {path} cannot be read: {exc.strerror or exc}") from None
    return decode(data, f"{what} {path}")


def load_yaml(text: str, where: str) -> Any:
    """YAML (safe loader) with a one-line DataError naming ``where`` and the line."""
    try:
        return yaml.safe_load(text)
    except yaml.YAMLError as exc:
        raise DataError(f"{where} is not valid YAML: {yaml_reason(exc)}") from None


def yaml_reason(exc: yaml.YAMLError) -> str:
    if isinstance(exc, yaml.MarkedYAMLError) and exc.problem_mark is not None:
        mark = exc.problem_mark
        return f"{exc.problem or exc.context} (line {mark.line + 1}, column {mark.column + 1})"
    return " ".join(str(exc).split())


def _reason(exc: BaseException) -> str:
    if isinstance(exc, yaml.YAMLError):
        return f"not valid YAML: {yaml_reason(exc)}"
    if isinstance(exc, KeyError) and exc.args:
        return f"missing {exc.args[0]!r}"
    text = " ".join(str(exc).split())
    return text if text else type(exc).__name__


@contextmanager
def parsing(where: str, expected: str) -> Iterator[None]:
    """Turns what a parser raises on bad input into one DataError: ``where`` (the source key
    and file), what went wrong, and what the file should have been."""
    try:
        yield
    except DataError:
        raise
    except (ValueError, LookupError, TypeError, AttributeError, yaml.YAMLError) as exc:
        raise DataError(f"{where}: {_reason(exc)}; expected {expected}") from exc


# ---------------------------------------------------------------- pins


PIN_FIELDS = (
    "what",
    "file",
    "url",
    "repo",
    "path",
    "commit",
    "date",
    "sha256",
    "bytes",
    "excerpt",
)
_REQUIRED = ("what", "file", "url")
_SHA256 = re.compile(r"^[0-9a-f]{64}$")


def _pin(key: str, entry: Any, where: str) -> Source:
    at = f"{where}: source {key!r}"
    if not isinstance(entry, Mapping):
        raise DataError(f"{at} is not a mapping of {', '.join(PIN_FIELDS)}")
    unknown = sorted(str(k) for k in entry if k not in PIN_FIELDS)
    if unknown:
        raise DataError(f"{at} has unknown fields {unknown} (known: {', '.join(PIN_FIELDS)})")
    values: dict[str, Any] = {}
    for name, value in entry.items():
        if name == "bytes":
            if value is None or value == "":
                continue
            if isinstance(value, bool) or not isinstance(value, int) or value < 0:
                raise DataError(f"{at}: bytes is a size in bytes, not {value!r}")
            values[name] = value
            continue
        if isinstance(value, (Mapping, list)):
            raise DataError(f"{at}: {name} is a single value, not {type(value).__name__}")
        values[str(name)] = "" if value is None else str(value)
    missing = [name for name in _REQUIRED if not values.get(name)]
    if missing:
        raise DataError(f"{at} needs {' and '.join(missing)}")
    file = PurePosixPath(values["file"])
    if file.is_absolute() or ".." in file.parts or "\\" in values["file"]:
        raise DataError(f"{at}: file must be a relative path inside the sources folder")
    sha = values.get("sha256", "")
    if sha and not _SHA256.match(sha):
        raise DataError(f"{at}: sha256 is 64 lower-case hex digits, not {sha!r}")
    rule = values.get("excerpt", "")
    if rule and rule not in excerpts.RULES:
        raise DataError(f"{at}: unknown excerpt rule {rule!r} ({', '.join(excerpts.RULES)})")
    return Source(key=str(key), **values)


def parse_pins(doc: Any, where: str) -> dict[str, Source]:
    """The pins of one ``sources_*.yaml`` document, checked: {key: Source}."""
    if not isinstance(doc, Mapping) or not doc:
        raise DataError(f"{where} is not a mapping of source key -> pin ({', '.join(_REQUIRED)})")
    return {str(key): _pin(str(key), entry, where) for key, entry in doc.items()}


def load_pins_file(path: Path) -> dict[str, Source]:
    """The pins of any ``sources_*.yaml`` file, read with the bounds and checks above."""
    where = f"pins file {path}"
    return parse_pins(load_yaml(read_text(path, "pins file"), where), where)


def load_pins(name: str) -> dict[str, Source]:
    """The sources pinned in ``scripts/datagen/<name>``, by key."""
    return load_pins_file(HERE / name)


# ---------------------------------------------------------------- local copies


def digest(data: bytes) -> str:
    return hashlib.sha256(data).hexdigest()


def check_copy(data: bytes, source: Source, path: Path | str, advice: str = "") -> None:
    """DataError when ``data`` is not the copy ``source`` pins (size, sha256); a pin without
    them (the tests' sample pins) checks nothing. ``advice`` ends the message (default: the
    re-fetch command)."""
    got = digest(data) if source.sha256 else ""
    size_differs = source.bytes is not None and len(data) != source.bytes
    if size_differs or (source.sha256 and got != source.sha256):
        pinned = f"pinned {source.sha256 or '-'}, {source.bytes} bytes"
        raise DataError(
            f"{path} differs from the pinned copy (sha256 {got or digest(data)}, {len(data)} "
            f"bytes; {pinned}): {advice or source.refetch()}"
        )


def read_source(sources_dir: Path, source: Source) -> str:
    """The text of a pinned source's local copy, checked against its pin.

    FileNotFoundError (naming the fetch step) when it is missing; DataError when it is not a
    regular file, too large, not UTF-8, or not the pinned copy (sha256/bytes)."""
    path = sources_dir / source.file
    try:
        data = read_bytes(path, f"source {source.key}:")
    except FileNotFoundError:
        raise FileNotFoundError(
            f"{path} is missing: run {FETCH_HINT} (source {source.key}: {source.url})"
        ) from None
    except DataError as exc:
        raise DataError(f"{exc}: {source.refetch()}") from None
    except OSError as exc:
        raise DataError(
            f"source {source.key}: {path} cannot be read: {exc.strerror or exc}"
        ) from None
    check_copy(data, source, path)
    return decode(data, f"source {source.key}: {path}")


# ---------------------------------------------------------------- output


def generated_block(sources: list[Source], today: _dt.date | None = None) -> dict[str, Any]:
    """The ``generated:`` mapping every generated file starts with."""
    return {
        "by": "scripts/generate_data.py",
        "at": (today or _dt.date.today()).isoformat(),
        "sources": [s.record() for s in sources],
    }


class _Dumper(yaml.SafeDumper):
    pass


def _str_presenter(dumper: yaml.SafeDumper, value: str) -> yaml.Node:
    return dumper.represent_scalar("tag:yaml.org,2002:str", value)


_Dumper.add_representer(str, _str_presenter)


def dump_yaml(doc: dict[str, Any], header: str) -> str:
    """``doc`` as YAML under a comment ``header`` (each line gets "# "), keys in given order."""
    lines = [f"# {line}".rstrip() for line in header.strip().splitlines()]
    body = yaml.dump(doc, Dumper=_Dumper, sort_keys=False, allow_unicode=True, width=100)
    return "\n".join(lines) + "\n" + body


def write_yaml(path: Path, doc: dict[str, Any], header: str) -> None:
    """Writes ``dump_yaml(doc, header)`` to ``path``."""
    path.write_text(dump_yaml(doc, header), encoding="utf-8")
