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
import sys
from dataclasses import dataclass

from rocmpanel.machine.parsers import lspci as lspci_parse

MAX_CAPTURE_CHARS = 2 * 2**20
"""Each input is read up to this size (2 MiB; a rocminfo of 64 GPU partitions is ~0.4 MiB)."""


# ---- reading ----------------------------------------------------------------------------


def read_capture(path: str, limit: int = MAX_CAPTURE_CHARS) -> str:
    """The text of a capture file ('-' for stdin): at most ``limit`` + 1 bytes (one more than
    :func:`analyse_texts` reads, so that it sees a larger input is larger), decoded as UTF-8
    or, with a byte-order mark, UTF-16 (Windows PowerShell's ``>`` writes that). Reads pipes
    and FIFOs (waiting for a writer, as ``cat`` does); raises OSError for what cannot be read
    (a missing file, a folder)."""
    if path == "-":
        stream = sys.stdin.buffer if hasattr(sys.stdin, "buffer") else None
        raw = stream.read(limit + 1) if stream is not None else sys.stdin.read(limit + 1).encode()
        return decode_capture(raw)
    if os.path.isdir(path):
        raise IsADirectoryError(21, "Is a directory", path)
    with open(path, "rb") as handle:
        return decode_capture(handle.read(limit + 1))


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
