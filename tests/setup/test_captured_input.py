"""Captures cut short say so (issue 11, point 7), and no input makes ``analyse_texts`` or
``read_capture`` fail with anything but a PanelError/OSError: empty, binary, huge, a FIFO,
random pieces of real outputs."""

from __future__ import annotations

import json
import os
import random
import threading
import time
from pathlib import Path

import pytest

from rocmpanel.base.errors import PanelError
from rocmpanel.setup.capture_input import (
    MAX_CAPTURE_CHARS,
    CaptureReadError,
    decode_capture,
    read_capture,
    split_input,
)
from rocmpanel.setup.captured import MAX_CAPTURES, MAX_GPUS, CapturedKind, analyse_texts
from rocmpanel.setup.report import build_report

from ..machine.test_parsers import CIM, HIPINFO, LSPCI_PLAIN, ROCMINFO
from .test_captured import AMD_SMI_R9700, AMD_SMI_STATIC, COLLECT_ENV, ROCM_SMI_6, ROCMINFO_7900

SAMPLES = [
    ROCMINFO,
    ROCMINFO_7900,
    AMD_SMI_R9700,
    json.dumps(ROCM_SMI_6, indent=2),
    json.dumps(AMD_SMI_STATIC, indent=2),
    COLLECT_ENV,
    HIPINFO,
    CIM,
    LSPCI_PLAIN,
]


def _cut_notes(captured) -> list[str]:
    return [n for n in captured.notes if "looks cut short" in n]


def test_rocminfo_cut_at_ten_percent_says_so() -> None:
    head = ROCMINFO_7900[: len(ROCMINFO_7900) // 4]  # header and the agent list's start
    captured = analyse_texts([head])
    assert captured.system.gpus == ()
    (note,) = _cut_notes(captured)
    assert "rocminfo" in note and "*** Done ***" in note
    report = build_report(captured.system, captured.host)
    text = report.to_text()
    assert "No AMD GPU found." in text and "looks cut short" in text
    assert "looks cut short" in report.to_markdown()
    assert any("looks cut short" in n for n in report.to_dict()["system"]["notes"])


def test_rocminfo_cut_inside_a_line_gives_no_wrong_gfx() -> None:
    head = ROCMINFO[: ROCMINFO.index("gfx1030") + len("gfx10")]  # "Name: gfx10" would be gfx10?
    captured = analyse_texts([head])
    assert captured.system.gpus == ()
    assert _cut_notes(captured)


def test_rocminfo_cut_mid_agent_keeps_what_it_shows() -> None:
    head = ROCMINFO[: ROCMINFO.index("  Pool Info:", ROCMINFO.index("gfx1030"))]
    (gpu,) = analyse_texts([head]).system.gpus
    assert gpu.gfx == "gfx1030" and gpu.pci_id == "1002:73bf" and gpu.vram_bytes is None


def test_rocminfo_error_output_is_not_cut() -> None:
    text = "ROCk module is loaded\nUnable to open /dev/kfd read-write: Permission denied\n"
    captured = analyse_texts([text])
    assert captured.host.kfd_error == "Permission denied" and not _cut_notes(captured)


def test_cut_json_is_salvaged() -> None:
    text = json.dumps(ROCM_SMI_6, indent=2)
    head = text[: text.index('"system"')]
    captured = analyse_texts([head])
    assert captured.kinds == (CapturedKind.ROCM_SMI_JSON,)
    (gpu,) = captured.system.gpus
    assert gpu.pci_id == "1002:744c" and gpu.vram_bytes == 25753026560
    assert "its JSON stops before the document is complete" in _cut_notes(captured)[0]
    amd = json.dumps(AMD_SMI_STATIC)
    cut = analyse_texts([amd[: amd.index('"driver"')]])
    assert cut.kinds == (CapturedKind.AMD_SMI_JSON,) and cut.system.gpus[0].gfx == "gfx942"


def test_cut_unknown_json_is_a_clear_error() -> None:
    with pytest.raises(PanelError, match=r"not output rocmpanel recognises\. It looks like JSON"):
        analyse_texts(['{"gpu": {"name": "x", "size": 1'])


@pytest.mark.parametrize(
    ("text", "why"),
    [
        (AMD_SMI_R9700[: AMD_SMI_R9700.index("| 0000:03")], "before the first GPU row"),
        (AMD_SMI_R9700[: AMD_SMI_R9700.index("| 0000:43")], "without the closing border"),
        (COLLECT_ENV[: COLLECT_ENV.index("Is CUDA")], "'GPU models and configuration' line"),
        (
            "=== ROCm System Management Interface ===\nGPU[0]\t\t: Device ID: 0x74a1\n",
            "End of ROCm SMI Log",
        ),
        (LSPCI_PLAIN.splitlines()[1][:60], "mid-line"),
    ],
)
def test_other_cut_outputs(text: str, why: str) -> None:
    (note,) = _cut_notes(analyse_texts([text]))
    assert why in note


def test_whole_outputs_are_not_cut() -> None:
    for sample in SAMPLES:
        assert not _cut_notes(analyse_texts([sample])), sample[:40]


def test_whole_fixtures_are_not_cut(shared_fixtures: Path) -> None:
    for path in sorted((shared_fixtures / "tools").iterdir()):
        if path.suffix == ".md":
            continue
        captured = analyse_texts([path.read_text(encoding="utf-8")])
        assert not _cut_notes(captured), path.name
        assert len(captured.kinds) == 1, path.name


def test_fixture_cut_at_ten_percent(shared_fixtures: Path) -> None:
    text = (shared_fixtures / "tools/rocminfo_gfx1100_rx7900xtx_rocm6.2.2.txt").read_text()
    captured = analyse_texts([text[: len(text) // 10]])
    assert captured.system.gpus == () and _cut_notes(captured)


@pytest.mark.parametrize("text", ["", "   \n\n", "\x00" * 100, "\ufffd" * 50])
def test_empty_or_binary_is_a_clear_error(text: str) -> None:
    with pytest.raises(PanelError, match="not output rocmpanel recognises"):
        analyse_texts([text])


def test_binary_bytes() -> None:
    noise = decode_capture(random.Random(7).randbytes(20000))
    with pytest.raises(PanelError, match="binary data"):
        analyse_texts([noise])


def test_huge_input_is_bounded() -> None:
    text = ROCMINFO_7900 + ("x" * 99 + "\n") * (MAX_CAPTURE_CHARS // 100 + 1000)
    start = time.monotonic()
    captured = analyse_texts([text])
    assert time.monotonic() - start < 5
    assert [g.gfx for g in captured.system.gpus] == ["gfx1100"]
    mib = MAX_CAPTURE_CHARS // 2**20
    assert any(f"only its first {mib} MiB were read" in n for n in captured.notes)


def test_many_outputs_and_gpus_are_bounded() -> None:
    cards = {f"card{i}": {"Device ID": "0x744c"} for i in range(MAX_GPUS + 10)}
    one = json.dumps(cards)
    start = time.monotonic()
    captured = analyse_texts(["\n".join([one] * (MAX_CAPTURES + 5))])
    assert time.monotonic() - start < 5
    assert len(captured.system.gpus) <= 5 * MAX_GPUS
    assert any(f"only the first {MAX_GPUS} were read" in n for n in captured.notes)
    assert any("were not read" in n for n in captured.notes)
    several = analyse_texts(["\n".join([ROCMINFO_7900] * (MAX_CAPTURES + 2))])
    assert len(several.kinds) == MAX_CAPTURES
    assert any(f"more than {MAX_CAPTURES} outputs" in n for n in several.notes)


def test_random_pieces_never_raise_anything_else() -> None:
    rng = random.Random(11)
    for _ in range(300):
        pieces = []
        for _ in range(rng.randint(1, 3)):
            sample = rng.choice(SAMPLES)
            start = rng.randrange(len(sample))
            pieces.append(sample[start : start + rng.randint(1, len(sample))])
        text = rng.choice(["", "\n", "$ rocminfo\n", "\r\n"]).join(pieces)
        try:
            captured = analyse_texts([text])
        except PanelError:
            continue
        assert captured.parts and all(m.system.os in ("linux", "windows") for m in captured.parts)


def test_split_input_cuts_at_prompts_headers_and_json() -> None:
    text = (
        "(venv) alice@box:~/x$ python -m torch.utils.collect_env\n"
        + COLLECT_ENV
        + "PS C:\\Users\\alice> hipInfo\n"
        + HIPINFO
        + json.dumps(ROCM_SMI_6)
        + "\n"
        + ROCMINFO_7900
        + ROCMINFO
    )
    parts = split_input(text)
    assert [h for _, h in parts] == ["box", None, None, None, None]
    assert parts[2][0].startswith("{") and parts[3][0].startswith("ROCk module version 6.8.5")
    captured = analyse_texts([text])
    assert [k.value for k in captured.kinds] == [
        "torch collect_env",
        "hipInfo",
        "rocm-smi --json",
        "rocminfo",
        "rocminfo",
    ]


def test_windows_line_ends_and_colour_codes() -> None:
    text = "\x1b[01;32malice@box\x1b[00m:~$ rocminfo\r\n" + ROCMINFO_7900.replace("\n", "\r\n")
    captured = analyse_texts([text])
    assert [g.gfx for g in captured.system.gpus] == ["gfx1100"]


def test_read_capture_file_utf16_and_limit(tmp_path: Path) -> None:
    utf16 = tmp_path / "cim.txt"
    utf16.write_bytes(CIM.encode("utf-16"))  # Windows PowerShell's ">" writes UTF-16 with a BOM
    assert read_capture(str(utf16)) == CIM
    assert analyse_texts([read_capture(str(utf16))]).system.os == "windows"
    big = tmp_path / "big.txt"
    big.write_bytes(b"a" * 5000)
    assert read_capture(str(big), limit=5000) == "a" * 5000
    with pytest.raises(CaptureReadError, match=r"big\.txt is larger than 4999 bytes"):
        read_capture(str(big), limit=4999)
    with pytest.raises(OSError):
        read_capture(str(tmp_path))
    with pytest.raises(OSError):
        read_capture(str(tmp_path / "missing.txt"))


@pytest.mark.skipif(not hasattr(os, "mkfifo"), reason="no FIFOs here")
def test_read_capture_fifo(tmp_path: Path) -> None:
    fifo = tmp_path / "pipe"
    os.mkfifo(fifo)

    def write() -> None:
        with open(fifo, "wb") as handle:
            handle.write(ROCMINFO_7900.encode())

    writer = threading.Thread(target=write, daemon=True)
    writer.start()
    text = read_capture(str(fifo))
    writer.join(timeout=5)
    assert [g.gfx for g in analyse_texts([text]).system.gpus] == ["gfx1100"]
