"""Reading pasted or captured tool output, and cutting one input into the tools' outputs.

Bounded reads of files, pipes, FIFOs and stdin (UTF-8, or UTF-16 as Windows PowerShell's
``>`` writes it); clean-up of line ends, colour codes and NUL padding; and :func:`split_input`,
which cuts one pasted input at shell prompts and at each tool's own header or closing line,
keeping the host name a prompt shows. What the outputs mean is :mod:`captured`'s business.
"""

from __future__ import annotations

import json
import os
import re
import select
import stat
import sys
import time
from dataclasses import dataclass

from rocmpanel.base import files
from rocmpanel.base.i18n import translate
from rocmpanel.machine.parsers import lspci as lspci_parse

MAX_INPUT_BYTES = files.CAPTURE_LIMIT
"""An input (a file, a pipe, stdin) is read up to this size (64 MiB); a larger one is
refused with :class:`CaptureReadError`."""
MAX_CAPTURE_CHARS = 2 * 2**20
"""The first this many characters of an input are analysed (2 MiB; a rocminfo of 64 GPU
partitions is ~0.4 MiB): cutting a 64 MiB input into lines would take gigabytes."""
WRITER_WAIT_S = 0.5
"""How long a FIFO nobody has opened for writing is waited for (a writer blocked in
``open`` connects at once; ``<(command)`` is connected from the start)."""
IDLE_S = 60.0
"""How long a connected pipe may send nothing before the read gives up (rocminfo on a
busy machine takes seconds, never a minute)."""


# ---- reading ----------------------------------------------------------------------------


class CaptureReadError(OSError):
    """An input that cannot be read, with the sentence that says why and what to do."""


def read_capture(
    path: str,
    limit: int = MAX_INPUT_BYTES,
    *,
    writer_wait_s: float = WRITER_WAIT_S,
    idle_s: float = IDLE_S,
) -> str:
    """The text of a capture file ('-' for stdin), at most ``limit`` bytes, decoded as
    UTF-8 or, with a byte-order mark, UTF-16 (Windows PowerShell's ``>`` writes that).

    Regular files, pipes and FIFOs (``--from <(rocminfo)``, ``mkfifo``) are read; a FIFO
    nobody writes to is waited for ``writer_wait_s`` seconds and a pipe that goes silent
    for ``idle_s`` seconds is given up, so no read hangs. Raises CaptureReadError for a
    device, a socket or an input over ``limit``, and other OSError (a missing file, a
    folder) as ``open`` does."""
    if path == "-":
        return decode_capture(_read_stdin(limit, idle_s))
    fd = os.open(path, _OPEN_FLAGS)
    try:
        mode = os.fstat(fd).st_mode
        if stat.S_ISFIFO(mode):
            return decode_capture(_read_pipe(fd, path, limit, writer_wait_s, idle_s))
    finally:
        os.close(fd)
    if stat.S_ISDIR(mode):
        raise IsADirectoryError(21, "Is a directory", path)
    try:
        return decode_capture(files.read_bytes(path, limit))
    except files.NotRegularFileError as exc:
        raise CaptureReadError(
            translate(
                "capture_input",
                "{error} (a device or a socket is never a tool's output): save the output to a "
                "file and use that file instead.",
            ).format(error=exc)
        ) from None
    except files.TooLargeError:
        raise _too_large(path, limit) from None


_OPEN_FLAGS = (
    os.O_RDONLY
    | getattr(os, "O_NONBLOCK", 0)
    | getattr(os, "O_NOCTTY", 0)
    | getattr(os, "O_CLOEXEC", 0)
    | getattr(os, "O_BINARY", 0)
)


def _too_large(name: str, limit: int) -> CaptureReadError:
    return CaptureReadError(
        translate(
            "capture_input",
            "{name} is larger than {size}, more than any tool's output: give only the output "
            "of rocminfo, rocm-smi, amd-smi, hipInfo, collect_env or lspci.",
        ).format(name=name, size=_size(limit))
    )


def _size(limit: int) -> str:
    return files.size_text(limit) if limit % files.KIB == 0 else f"{limit} bytes"


def _wait_readable(fd: int, seconds: float) -> bool:
    try:
        ready, _, _ = select.select([fd], [], [], max(0.0, seconds))
    except (OSError, ValueError):  # not selectable here (Windows): plain reads then
        time.sleep(min(seconds, 0.05))
        return True
    return bool(ready)


def _read_pipe(fd: int, name: str, limit: int, writer_wait_s: float, idle_s: float) -> bytes:
    """A FIFO opened without blocking: read until its writer closes it. With no writer,
    a read returns b"" at once; with a writer and no data yet, it raises EAGAIN."""
    chunks: list[bytes] = []
    total = 0
    writer = False
    started = last = time.monotonic()
    while True:
        try:
            chunk: bytes | None = os.read(fd, min(limit + 1 - total, files.MIB))
        except BlockingIOError:
            chunk = None
        now = time.monotonic()
        if chunk:
            writer, last = True, now
            chunks.append(chunk)
            total += len(chunk)
            if total > limit:
                raise _too_large(name, limit)
            continue
        if chunk is None:
            writer = True
            if now - last > idle_s:
                raise CaptureReadError(
                    translate(
                        "capture_input",
                        "{name} sent nothing for {seconds} s, so it was not read to the end: "
                        "check that the command writing to it is still running, or save its "
                        "output to a file and give that.",
                    ).format(name=name, seconds=f"{idle_s:g}")
                )
        elif writer:
            return b"".join(chunks)  # the writer closed it: the end
        elif now - started > writer_wait_s:
            raise CaptureReadError(
                translate(
                    "capture_input",
                    "Nothing is writing to the FIFO {name} (waited {seconds} s): start "
                    "the command that writes to it first, or save its output to a file and give "
                    "that.",
                ).format(name=name, seconds=f"{writer_wait_s:g}")
            )
        if _wait_readable(fd, 0.1) and chunk == b"":
            time.sleep(0.05)  # a FIFO whose writer left polls readable: do not spin


def _read_stdin(limit: int, idle_s: float) -> bytes:
    """stdin, at most ``limit`` bytes. A pipe that goes silent for ``idle_s`` is given up;
    a terminal is read until Ctrl+D (Ctrl+Z, Enter on Windows) as ``cat`` reads it."""
    stream = getattr(sys.stdin, "buffer", None)
    try:
        fd = (stream or sys.stdin).fileno()
        mode = os.fstat(fd).st_mode
    except (OSError, ValueError, AttributeError):  # a stand-in stream (tests, IDEs)
        raw = stream.read(limit + 1) if stream is not None else sys.stdin.read(limit + 1).encode()
        if len(raw) > limit:
            raise _too_large("stdin", limit) from None
        return raw
    waits = not os.isatty(fd) and (stat.S_ISFIFO(mode) or stat.S_ISSOCK(mode))
    chunks: list[bytes] = []
    total = 0
    last = time.monotonic()
    while True:
        if waits and not _wait_readable(fd, 0.1):
            if time.monotonic() - last > idle_s:
                raise CaptureReadError(
                    f"stdin sent nothing for {idle_s:g} s, so it was not read to the end: "
                    "check that the command piping into rocmpanel is still running."
                )
            continue
        chunk = os.read(fd, min(limit + 1 - total, files.MIB))
        if not chunk:
            return b"".join(chunks)
        last = time.monotonic()
        chunks.append(chunk)
        total += len(chunk)
        if total > limit:
            raise _too_large("stdin", limit)


def decode_capture(raw: bytes) -> str:
    """Bytes of a capture as text: a UTF-8 or UTF-16 byte-order mark decides, otherwise UTF-8
    (undecodable bytes become U+FFFD)."""
    if raw.startswith((b"\xff\xfe", b"\xfe\xff")):
        return raw.decode("utf-16", errors="replace")
    if len(raw) >= 4 and raw[1:4:2] == b"\0\0" and raw[0:3:2] != b"\0\0":
        return raw.decode("utf-16-le", errors="replace")  # UTF-16 without a mark
    return raw.decode("utf-8-sig", errors="replace")


_ANSI_RE = re.compile(r"\x1b\[[0-9;?]*[ -/]*[@-~]|\x1b\][^\x07\x1b]*(?:\x07|\x1b\\)")


def clean_text(text: str) -> str:
    """Line ends, terminal colour codes, a byte-order mark and NUL padding removed."""
    text = text.lstrip("\ufeff")
    head = text[:64]
    if len(head) >= 8 and head[1::2].count("\0") >= len(head[1::2]) - 1:
        text = text.replace("\0", "")  # UTF-16 read as one byte per character
    text = text.replace("\r\n", "\n").replace("\r", "\n")
    if "\x1b" in text:
        text = _ANSI_RE.sub("", text)
    return text


def looks_binary(text: str) -> bool:
    sample = text[:8192]
    if not sample:
        return False
    odd = sum(1 for c in sample if (c < " " and c not in "\t\n\f\v") or c == "\ufffd")
    return odd > len(sample) // 10


# ---- cutting one input into captures -----------------------------------------------------

_PROMPT_RE = re.compile(
    r"^(?:\([^()\n]*\)\s*)?(?:\[?(?P<user>[\w.-]+)@(?P<host>[A-Za-z0-9][\w.-]*)"
    r"(?:[:\s][^\n$#%>]*?)?\]?\s?[$#%>]|\$|PS [A-Za-z]:\\[^>\n]*>)\s+\S"
)
_HEADER_WINDOW = {"rocminfo": 6, "rocm-smi": 3, "amd-smi": 3, "collect_env": 12}
_BLOCK_FAMILIES = ("hipinfo", "cim", "lspci")
_MAX_JSON_TRIES = 64
_CIM_FIELD_RE = re.compile(
    r"^(?:__GENUS|__CLASS|Name|Caption|AdapterRAM|PNPDeviceID|VideoProcessor|DriverVersion)"
    r"\s+:(?:\s|$)"
)
_JSON_START_RE = re.compile(r'^(?:\{|\[\s*(?:$|[\[{"\]]))')


_MARKER_START_RE = re.compile(
    r"ROCk |WSL |\s*HSA System|=|\|\s*AMD-SMI|Collecting env|PyTorch ver|device#|_|Name|"
    r"Caption|AdapterRAM|PNPDeviceID|VideoProcessor|DriverVersion|[\[{]|[0-9a-fA-F]{2}"
)
_RULE_RE = re.compile(r"^=+\s*$")
_SMI_HEADER_RE = re.compile(r"^=+\s*ROCm System Management Interface\s*=+\s*$")
_SMI_END_RE = re.compile(r"^=+\s*End of ROCm SMI Log\s*=+\s*$")
_AMD_SMI_HEADER_RE = re.compile(r"^\|\s*AMD-SMI \d")
_BORDER_RE = re.compile(r"^\+-+\+\s*$")
_HIP_DEVICE_RE = re.compile(r"^device#\s*\d+")
_DASHES_RE = re.compile(r"^-{10,}\s*$")


def _marker(lines: list[str], i: int) -> tuple[str | None, int]:
    """(family, lines back to where it starts) when line ``i`` starts a tool's output."""
    line = lines[i]
    if not _MARKER_START_RE.match(line):
        return None, 0
    if line[0] in "[{":
        return ("json", 0) if _JSON_START_RE.match(line) else (None, 0)
    prev = lines[i - 1] if i else ""
    if line.startswith(("ROCk module", "WSL environment detected")):
        return "rocminfo", 0
    if line.strip() == "HSA System Attributes":
        return "rocminfo", 1 if _RULE_RE.match(prev) else 0
    if _SMI_HEADER_RE.match(line):
        return "rocm-smi", 0
    if _AMD_SMI_HEADER_RE.match(line):
        return "amd-smi", 1 if _BORDER_RE.match(prev) else 0
    if line.startswith(("Collecting environment information", "PyTorch version:")):
        return "collect_env", 0
    if _HIP_DEVICE_RE.match(line):
        return "hipinfo", 1 if _DASHES_RE.match(prev) else 0
    if _CIM_FIELD_RE.match(line):
        return "cim", 0
    if line[:1].isalnum() and lspci_parse.is_lspci_line(line):
        return "lspci", 0
    return None, 0


def _is_end(family: str | None, line: str) -> bool:
    if family == "rocminfo":
        return line.startswith("*** Done ***")
    if family == "rocm-smi":
        return bool(_SMI_END_RE.match(line))
    return False


@dataclass(frozen=True)
class _Segment:
    text: str
    host: str | None = None


def _split_region(region: str, host: str | None) -> list[_Segment]:
    lines = region.split("\n")
    starts = [0]
    for line in lines:
        starts.append(starts[-1] + len(line) + 1)
    cuts: list[tuple[int, int]] = []  # (first line, end line) of each segment
    family: str | None = None
    seg_start, header, closed_at = 0, 0, 0
    json_tries = 0
    decoder = json.JSONDecoder()
    i = 0
    while i < len(lines):
        fam, back = _marker(lines, i)
        if fam == "json" and json_tries < _MAX_JSON_TRIES:
            json_tries += 1
            try:
                _data, end = decoder.raw_decode(region, starts[i])
            except (ValueError, RecursionError):
                end = -1
            if end > 0:
                last = i
                while last + 1 < len(lines) and starts[last + 1] < end:
                    last += 1
                if i > seg_start:
                    cuts.append((seg_start, i))
                cuts.append((i, last + 1))
                family, seg_start = None, last + 1
                i = last + 1
                continue
        elif fam == "json":
            fam = None
        if fam is not None:
            start = max(i - back, closed_at)
            if family is None:
                family, header = fam, i
            elif (
                fam != family
                or fam == "json"
                or (fam not in _BLOCK_FAMILIES and i - header > _HEADER_WINDOW.get(fam, 0))
            ):
                if start > seg_start:
                    cuts.append((seg_start, start))
                    seg_start = start
                family, header = fam, i
        if _is_end(family, lines[i]):
            cuts.append((seg_start, i + 1))
            family, seg_start, closed_at = None, i + 1, i + 1
        i += 1
    if seg_start < len(lines):
        cuts.append((seg_start, len(lines)))
    segments = []
    for first, end in cuts:
        text = "\n".join(lines[first:end])
        if text.strip():
            segments.append(_Segment(text, host))
    return segments


def split_input(text: str) -> list[tuple[str, str | None]]:
    """The separate tool outputs in one pasted input, each with the host name its shell
    prompt showed (or None), in order. Shell prompt lines and each tool's own header or
    closing line are the cuts; text that is one output comes back whole."""
    text = clean_text(text)
    segments: list[_Segment] = []
    region: list[str] = []
    host: str | None = None

    def flush() -> None:
        if "".join(region).strip():
            segments.extend(_split_region("\n".join(region), host))

    for line in text.split("\n"):
        prompt = _PROMPT_RE.match(line)
        if prompt:
            flush()
            region = []
            found = prompt.group("host")
            host = found if found and found.lower() != "localhost" else None
            continue
        region.append(line)
    flush()
    return [(s.text, s.host) for s in segments]
